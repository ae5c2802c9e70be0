"""YAML loading for files users and organisations share: safe tags only, no aliases, bounded size."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from yaml.constructor import SafeConstructor

from advisor.core.errors import AdvisorError

MAX_YAML_BYTES = 4 * 1024 * 1024
MAX_YAML_DEPTH = 64  # packs, contexts and hardware files are a few levels deep

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_yaml_text(text: str, where: str, allow_aliases: bool = False) -> Any:
    """Parse YAML with the safe loader. Aliases are refused: a few bytes of anchors can expand to
    billions of nodes when the result is walked (the "billion laughs" alias bomb)."""
    return load_yaml_document(text, where, allow_aliases)[0]


def load_yaml_document(text: str, where: str, allow_aliases: bool = False) -> tuple[Any, yaml.Node | None]:
    """The loaded data and the node tree it was built from (its marks give line numbers), from one parse."""
    if len(text) > MAX_YAML_BYTES:
        raise AdvisorError(where, f"YAML file is larger than {MAX_YAML_BYTES // (1024 * 1024)} MiB")
    try:
        _prescan(text, where, allow_aliases)
        loader = _Loader(text)
        try:
            root = loader.get_single_node()
            _refuse_duplicate_keys(root, where)
            try:
                return (loader.construct_document(root) if root is not None else None), root
            except (ValueError, OverflowError):  # a value YAML recognises that Python cannot build (2026-02-30)
                raise unbuildable(root, where) from None
        finally:
            loader.dispose()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        line = f"line {mark.line + 1}: " if mark is not None else ""
        raise AdvisorError(where, f"{line}invalid YAML: {exc.problem or exc.context}") from None
    except yaml.YAMLError as exc:
        raise AdvisorError(where, f"invalid YAML: {str(exc).splitlines()[0]}") from None
    except RecursionError:
        raise AdvisorError(where, "YAML is nested too deeply") from None


_BUILT = {"tag:yaml.org,2002:timestamp": "date", "tag:yaml.org,2002:int": "integer",
          "tag:yaml.org,2002:float": "number"}
SHOWN = 40  # characters of a value or key in an error


def unbuildable(root: yaml.Node | None, where: str) -> AdvisorError:
    """One line naming the first value (in file order) that YAML recognises but Python cannot build — a date
    no calendar holds (`2026-02-30`, month 13), an integer of more than 4,300 digits — with its line and field,
    for every YAML file advisor reads (packs, contexts, hardware files); never an internal error blamed on the
    profile."""
    constructor = SafeConstructor()
    found: list[tuple[int, str]] = []
    stack: list[tuple[yaml.Node, str]] = [(root, "")] if root is not None else []
    while stack:
        node, field = stack.pop()
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                part = key.value[:SHOWN] if isinstance(key, yaml.ScalarNode) else "…"
                name = f"{field}.{part}" if field else part
                stack += [(key, name), (value, name)]
        elif isinstance(node, yaml.SequenceNode):
            stack += [(item, f"{field}[{i}]") for i, item in enumerate(node.value)]
        elif isinstance(node, yaml.ScalarNode) and node.tag in _BUILT:
            try:
                constructor.construct_object(node)
            except (ValueError, OverflowError) as exc:
                value = node.value if len(node.value) <= SHOWN else node.value[:SHOWN - 1] + "…"
                reason = str(exc) if node.tag.endswith("timestamp") else "too many digits"
                found.append((node.start_mark.line + 1, f"{field}: {value} is not a valid {_BUILT[node.tag]} "
                                                        f"({reason})"))
    if not found:  # not one value after all: still one line, naming the file
        return AdvisorError(where, "a value YAML recognises could not be read")
    line, problem = min(found)
    return AdvisorError(f"{where}:{line}", problem)


def _prescan(text: str, where: str, allow_aliases: bool) -> None:
    """One pass over the parser's events, before anything is built: refuse aliases and deep nesting."""
    depth = 0
    for event in yaml.parse(text, Loader=_Loader):
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            depth += 1
            if depth > MAX_YAML_DEPTH:
                raise AdvisorError(where, f"{_line(event)}YAML is nested deeper than {MAX_YAML_DEPTH} levels")
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            depth -= 1
        elif isinstance(event, yaml.AliasEvent) and not allow_aliases:
            raise AdvisorError(where, f"{_line(event)}YAML aliases (*name) are not allowed")


_STR = "tag:yaml.org,2002:str"


def _key(constructor: SafeConstructor, node: yaml.Node) -> object:
    """A mapping key as the loader builds it (`true` and `True` are one key), or the node when it is
    not a hashable scalar."""
    if not isinstance(node, yaml.ScalarNode):
        return node
    if node.tag == _STR:  # nearly every key: its text is the key
        return node.value
    try:
        key = constructor.construct_object(node)
        hash(key)
    except (yaml.YAMLError, TypeError, ValueError):
        return node
    return key


def _refuse_duplicate_keys(root: yaml.Node | None, where: str) -> None:
    """`file:line: duplicate key` for the first mapping, at any depth, that names a key twice: the loader
    (YAML's, and JSON's, which packs, contexts and settings are read by too) silently keeps the last, so a
    second `when:` or `fail_on:` would quietly replace the first."""
    constructor = SafeConstructor()
    found: list[tuple[int, str]] = []
    stack = [root] if root is not None else []
    while stack:  # the nesting was bounded by the prescan; no recursion anyway
        node = stack.pop()
        if isinstance(node, yaml.MappingNode):
            first: dict[object, int] = {}
            for key, value in node.value:
                line = key.start_mark.line + 1
                name = _key(constructor, key)
                if name in first:
                    shown = str(key.value)[:80] if isinstance(key, yaml.ScalarNode) else "…"
                    found.append((line, f"duplicate key '{shown}' (first at line {first[name]}); only one would "
                                        "be kept"))
                else:
                    first[name] = line
                stack.append(value)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
    if found:
        line, problem = min(found)
        raise AdvisorError(f"{where}:{line}", problem)


def _line(event: yaml.Event) -> str:
    mark = event.start_mark
    return f"line {mark.line + 1}: " if mark is not None else ""


def load_yaml_file(path: Path, allow_aliases: bool = False) -> Any:
    return load_yaml_file_document(path, allow_aliases)[0]


def load_yaml_file_document(path: Path, allow_aliases: bool = False) -> tuple[Any, yaml.Node | None]:
    """A YAML file's data and node tree (`load_yaml_document`), read once as a regular file."""
    from advisor.core.regular import read_regular

    data = read_regular(path, MAX_YAML_BYTES, "a YAML file")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise AdvisorError(str(path), "not UTF-8 text") from None
    return load_yaml_document(text, str(path), allow_aliases=allow_aliases)
