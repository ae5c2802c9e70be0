"""YAML loading for files users and organisations share: safe tags only, no aliases, bounded size."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from advisor.core.errors import AdvisorError

MAX_YAML_BYTES = 4 * 1024 * 1024
MAX_YAML_DEPTH = 64  # packs, contexts and hardware files are a few levels deep

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_yaml_text(text: str, where: str, allow_aliases: bool = False) -> Any:
    """Parse YAML with the safe loader. Aliases are refused: a few bytes of anchors can expand to
    billions of nodes when the result is walked (the "billion laughs" alias bomb)."""
    if len(text) > MAX_YAML_BYTES:
        raise AdvisorError(where, f"YAML file is larger than {MAX_YAML_BYTES // (1024 * 1024)} MiB")
    try:
        _prescan(text, where, allow_aliases)
        return yaml.load(text, Loader=_Loader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        line = f"line {mark.line + 1}: " if mark is not None else ""
        raise AdvisorError(where, f"{line}invalid YAML: {exc.problem or exc.context}") from None
    except yaml.YAMLError as exc:
        raise AdvisorError(where, f"invalid YAML: {str(exc).splitlines()[0]}") from None
    except RecursionError:
        raise AdvisorError(where, "YAML is nested too deeply") from None


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


def _line(event: yaml.Event) -> str:
    mark = event.start_mark
    return f"line {mark.line + 1}: " if mark is not None else ""


def load_yaml_file(path: Path, allow_aliases: bool = False) -> Any:
    from advisor.core.regular import read_regular

    data = read_regular(path, MAX_YAML_BYTES, "a YAML file")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise AdvisorError(str(path), "not UTF-8 text") from None
    return load_yaml_text(text, str(path), allow_aliases=allow_aliases)
