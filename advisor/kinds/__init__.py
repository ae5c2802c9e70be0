"""The profile-kind registry: built-in kinds by name, plus kinds other packages declare under the
`advisor.kinds` entry-point group (an organisation's profiler is a package, not a fork).

Each kind module exposes `KIND`, a `ProfileKind`. Detection asks each kind in order (built-ins first,
then plug-ins by name) whether it reads the input, from its first bytes or a folder's names.
"""

from __future__ import annotations

import importlib
import sys
from functools import lru_cache
from importlib.metadata import entry_points
from pathlib import Path

from advisor.core.errors import AdvisorError, suggest
from advisor.inputs.text import read_head
from advisor.kinds.base import LoadOptions, ProfileKind
from advisor.kinds.check import check

__all__ = ["HEAD_BYTES", "LoadOptions", "ProfileKind", "available", "check", "detect", "get", "names"]

BUILTIN = {  # detection order
    "neuron": "advisor.profilers.neuron", "ncu": "advisor.profilers.ncu", "rbln": "advisor.profilers.rbln",
    "torch": "advisor.profilers.torch"}
ENTRY_POINT_GROUP = "advisor.kinds"
HEAD_BYTES = 1 << 20  # what detection may look at: enough for a JSON trace's member names


def _load(module_path: str) -> ProfileKind:
    module_name, _, attribute = module_path.partition(":")
    try:
        kind = getattr(importlib.import_module(module_name), attribute or "KIND")
    except (ImportError, AttributeError) as exc:  # a broken plug-in names itself, in one line
        raise AdvisorError(f"profile kind {module_path} (entry point group {ENTRY_POINT_GROUP})",
                           f"cannot be loaded: {type(exc).__name__}: {exc}") from None
    if not isinstance(kind, ProfileKind):
        raise AdvisorError(module_path, "not a profile kind (expected a ProfileKind named KIND)")
    # each data file is checked when a stage first reads it (options.yaml where the parser is built), each
    # module when a stage first asks for it; kinds.check runs all of it at once
    return kind


@lru_cache(maxsize=8)
def _plugins(search_path: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """(name, module path) of every kind plug-ins declare. They depend only on the import path, so they
    are kept by it: scanning every installed distribution's metadata takes milliseconds, and a fleet
    asks for the kinds several times per profile."""
    return tuple(sorted((e.name, e.value) for e in entry_points(group=ENTRY_POINT_GROUP)))


def available() -> tuple[ProfileKind, ...]:
    """Every kind, in detection order."""
    kinds = [_load(path) for path in BUILTIN.values()]
    kinds += [_load(value) for name, value in _plugins(tuple(sys.path)) if name not in BUILTIN]
    return tuple(kinds)


def names() -> tuple[str, ...]:
    return tuple(k.name for k in available())


def get(name: str, where: str = "--kind") -> ProfileKind:
    """The kind named `name`; `where` is what the error names (the option, or the file that asked)."""
    kinds = available()
    for kind in kinds:
        if kind.name == name:
            return kind
    known = [k.name for k in kinds]
    raise AdvisorError(where, f"unknown profile kind '{name}' (installed: {', '.join(known)}){suggest(name, known)}")


def _head(path: Path) -> bytes:
    """The first bytes of a file (b"" for a folder); the errors every kind would give, given once."""
    head = read_head(path, HEAD_BYTES)
    if not path.is_dir() and not head.strip():
        raise AdvisorError(str(path), "file is empty")
    return head


def detect(path: Path) -> ProfileKind:
    """The first kind that reads this input; the error lists every kind tried. A folder is asked of every
    kind: one that two kinds read holds files of both, and reading it as either drops the other's unseen."""
    kinds = available()
    exists = path.exists() or path.is_symlink()
    head = _head(path) if exists else b""
    if path.is_dir():
        claims = [kind for kind in kinds if kind.adapters().detect(path, head)]
        if len(claims) > 1:
            raise AdvisorError(str(path), _mixed(path, claims))
        if claims:
            return claims[0]
    else:
        for kind in kinds:
            if kind.adapters().detect(path, head):
                return kind
    if not exists:
        raise AdvisorError(str(path), "no such file")
    tried = "; ".join(f"{k.title} ({k.formats})" for k in kinds)
    if path.is_dir():
        raise AdvisorError(str(path), f"a folder no profile kind reads; tried {tried}")
    what = "binary data" if b"\x00" in head[:4096] else "unknown format"
    raise AdvisorError(str(path), f"{what}: no profile kind reads it; tried {tried}")


def _mixed(folder: Path, kinds: list[ProfileKind]) -> str:
    """The refusal of a folder several kinds read, naming each kind and its first files."""
    return (f"rank files of {len(kinds)} profile kinds, and a folder is read as one: "
            f"{', '.join(f'{k.title}{_first_files(k, folder)}' for k in kinds)}; give each kind a folder of its own")


def _first_files(kind: ProfileKind, folder: Path, shown: int = 3) -> str:
    """` (a, b, c and N more)`: the kind's files in the folder; what is wrong with them when they are no set of
    ranks (`rank 0 twice: …`, which names files too); "" when the kind reads the folder as a whole (Neuron
    Explorer's tables)."""
    try:
        names = [path.name for _, path in kind.adapters().members(folder) or ()]
    except AdvisorError as exc:
        where = "" if exc.where == str(folder) else f"{Path(exc.where).name}: "
        return f" ({where}{exc.problem})"
    if not names:
        return ""
    more = f" and {len(names) - shown:,} more" if len(names) > shown else ""
    return f" ({', '.join(names[:shown])}{more})"
