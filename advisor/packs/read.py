"""Reading rule-pack files: which files a pack path holds, each file's YAML with the line of every
list item (for messages: the loaded data has no marks), and where the built-in packs are."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from advisor import kinds
from advisor.core.errors import AdvisorError
from advisor.core.resources import shipped_dir
from advisor.core.yamlsafe import load_yaml_file_document
from advisor.packs.model import PackError


@dataclass
class RawFile:
    path: Path
    data: dict[str, Any]
    lines: dict[tuple[str, int], int]  # (section, index) -> line number

    def where(self, section: str, index: int) -> str:
        """`file:line` of one item of a top-level list."""
        return f"{self.path}:{self.lines.get((section, index), '?')}"


def item_lines(root: yaml.Node | None) -> dict[tuple[str, int], int]:
    """Line of each item of the top-level lists."""
    lines: dict[tuple[str, int], int] = {}
    if isinstance(root, yaml.MappingNode):
        for key, value in root.value:
            if isinstance(value, yaml.SequenceNode):
                for i, item in enumerate(value.value):
                    lines[(key.value, i)] = item.start_mark.line + 1
    return lines


def read_file(path: Path) -> RawFile:
    data, root = load_yaml_file_document(path)  # limits, safe tags, no aliases, no key twice; its lines
    if not isinstance(data, dict):
        raise PackError([f"{path}: a rule pack file must be a YAML mapping"])
    bad_keys = [k for k in data if not isinstance(k, str)]
    if bad_keys:
        raise PackError([f"{path}: keys must be strings, found {bad_keys[0]!r}"])
    return RawFile(path=path, data=data, lines=item_lines(root))


def pack_files(path: Path) -> list[Path]:
    """The YAML files of a pack path: the file itself, or every .yaml/.yml under a folder."""
    if path.is_dir():
        files = sorted(p for p in path.rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file())
        if not files:
            raise AdvisorError(str(path), "no rule pack (.yaml) files in this folder")
        return files
    if not path.exists():
        raise AdvisorError(str(path), "no such rule pack file or folder")
    return [path]


def read_packs(paths: Sequence[Path], header_only_unless: str | None = None) -> list[tuple[Path, list[RawFile]]]:
    """Each pack path (a file, or a folder of files) with its parsed files; the same pack named twice
    (built-in and --rules) is read once. Every unreadable file is reported before anything is refused.
    With `header_only_unless` a kind, a folder whose pack.yaml scopes it to other kinds is read as that
    header alone: the built-in packs of the other kinds are most of the YAML, and a profile of one kind
    needs none of it (the caller passes it only when every pack is built-in, hence already checked)."""
    unique: dict[Path, Path] = {}
    for path in paths:
        unique.setdefault(path.resolve(), path)
    groups = []
    problems: list[str] = []
    for path in unique.values():
        header = _other_kinds_header(path, header_only_unless) if header_only_unless else None
        if header is not None:
            groups.append((path, [header]))
            continue
        files = []
        for file in pack_files(path):
            try:
                files.append(read_file(file))
            except PackError as exc:
                problems.extend(exc.problems)
            except AdvisorError as exc:
                problems.append(f"{exc.where}: {exc.problem}")
        groups.append((path, files))
    if problems:
        raise PackError(problems)
    return groups


def _other_kinds_header(path: Path, kind: str) -> RawFile | None:
    """A pack folder's pack.yaml when it names its kinds and `kind` is not among them."""
    head = path / "pack.yaml"
    if not path.is_dir() or not head.is_file():
        return None
    header = read_file(head)
    kinds = header.data.get("kinds")
    return header if "pack" in header.data and isinstance(kinds, list) and kind not in kinds else None


def builtin_pack_paths() -> list[Path]:
    """Every pack folder or file shipped in rules/, then the packs each available profile kind brings."""
    root = shipped_dir("rules")
    shipped = sorted(p for p in root.iterdir() if p.is_dir() or p.suffix in (".yaml", ".yml"))
    return [*shipped, *(path for kind in kinds.available() for path in kind.packs)]
