"""The files of a capture folder (one trace per rank) that a kind reads, in natural order (rank2 before rank10),
with the folder's size bounded: a runaway folder is refused before it is listed whole."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path

from advisor.core.errors import AdvisorError

MAX_LISTED = 1_000_000  # entries of a folder looked at: past this it is a runaway folder, not a capture
_DIGITS = re.compile(r"(\d+)")


def natural_key(path: Path) -> list[object]:
    """rank2 before rank10: the digit runs (odd places of the split) as numbers, the rest as text."""
    parts = _DIGITS.split(path.name)
    return [(0, int(p), "") if i % 2 else (1, 0, p.lower()) for i, p in enumerate(parts)]


def listing(folder: Path, accept: Callable[[str], bool], limit: int = MAX_LISTED) -> list[Path]:
    """The folder's files whose names `accept` takes, in natural order; refused past `limit` entries. An
    entry named like a trace that cannot be looked at (a symlink loop, no permission) is named itself: it
    is not the folder that failed."""
    found = []
    try:
        with os.scandir(folder) as entries:
            for count, entry in enumerate(entries, 1):
                if count > limit:
                    raise AdvisorError(str(folder), f"more than {limit:,} entries: not a folder of rank traces")
                if accept(entry.name) and _is_file(entry):  # the name first: other entries are never followed
                    found.append(Path(entry.path))
    except OSError as exc:
        raise AdvisorError(str(folder), exc.strerror or str(exc)) from None
    return sorted(found, key=natural_key)


def _is_file(entry: os.DirEntry[str]) -> bool:
    """Whether the entry is a file, following a symlink; a loop or a refused look is one error naming it."""
    try:
        return entry.is_file()
    except OSError as exc:
        raise AdvisorError(entry.path, exc.strerror or str(exc)) from None
