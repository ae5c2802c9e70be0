"""Which inputs a fleet run analyses: the paths given, folders searched recursively, globs expanded.

A folder some kind reads as one input stays one profile set and is not searched: a Neuron Explorer
output folder, or a capture folder of per-rank files (its profile files are the kind's members and their
names differ only by a number: rank0.pb, rank1.pb). A folder of unrelated traces (before.pb, after.pb)
is searched, each file its own profile. In a folder walk, only files with a profile's ending (each
kind's `fleet: endings:`, and advisor/data/fleet_run.yaml's) are candidates, so READMEs and scripts beside
the profiles are skipped, counted; a file named on the command line always is a candidate. Whether a
candidate really is a profile is decided where it is analysed, with the same content detection as
`advisor report`.
"""

from __future__ import annotations

import glob
import hashlib
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from advisor.core.errors import AdvisorError
from advisor.core.resources import load_yaml_resource

HASH_CHUNK = 1 << 20
_DIGITS = re.compile(r"\d+")


@dataclass(frozen=True)
class Candidate:
    """One input to analyse: a file, or a folder read as one profile set."""

    path: Path
    size: int  # bytes; a folder: of all its files
    mtime_ns: int  # a folder: its newest file's


@dataclass(frozen=True)
class Discovery:
    candidates: tuple[Candidate, ...]
    skipped: int = 0  # files in the folders searched that no profile has the ending of
    missing: tuple[str, ...] = field(default_factory=tuple)  # paths or globs that matched nothing


@cache
def run_settings() -> dict[str, Any]:
    """advisor/data/fleet_run.yaml, read once per process like a kind's data files (hashing asks for the
    endings once per folder)."""
    return load_yaml_resource("data/fleet_run.yaml")


@cache
def profile_endings() -> tuple[str, ...]:
    """The endings a folder walk keeps: each installed kind's (its report.yaml `fleet: endings:`, so a new kind
    brings its own), and fleet_run.yaml's for what is no kind's (saved analyses)."""
    from advisor.kinds import available

    found = {str(e).lower() for e in run_settings()["discovery"].get("extensions", ())}
    for kind in available():
        found.update(str(e).lower() for e in (kind.data("report.yaml").get("fleet") or {}).get("endings", ()))
    return tuple(sorted(found))


def _is_profile_set(folder: Path, extensions: tuple[str, ...]) -> bool:
    from advisor.kinds import detect

    try:
        members = detect(folder).adapters().members(folder)
    except AdvisorError:
        return False
    if not members:
        return True  # read as a whole (Neuron Explorer's tables)
    files = {p.name for p in folder.iterdir() if p.is_file() and p.name.lower().endswith(extensions)}
    names = {path.name for _, path in members}
    return names == files and len(names) > 1 and len({_DIGITS.sub("#", n) for n in names}) == 1


def _files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file())


def _candidate(path: Path) -> Candidate:
    if path.is_dir():
        stats = [p.stat() for p in _files(path)]
        return Candidate(path, sum(s.st_size for s in stats), max((s.st_mtime_ns for s in stats), default=0))
    stat = path.stat()
    return Candidate(path, stat.st_size, stat.st_mtime_ns)


def _walk(folder: Path, extensions: tuple[str, ...], skip: frozenset[str], excluded: str | None,
          found: list[Candidate]) -> int:
    """Candidates under `folder` in name order; returns how many files were skipped."""
    skipped = 0
    for entry in sorted(os.scandir(folder), key=lambda e: e.name):
        path = Path(entry.path)
        if entry.is_dir():
            if entry.name in skip or (excluded is not None and os.path.abspath(path) == excluded):
                continue
            if _is_profile_set(path, extensions):
                found.append(_candidate(path))
            else:
                skipped += _walk(path, extensions, skip, excluded, found)
        elif entry.is_file():
            if entry.name.lower().endswith(extensions):
                found.append(_candidate(path))
            else:
                skipped += 1
    return skipped


def discover(paths: Sequence[str], store: Path | None = None) -> Discovery:
    """Every candidate under `paths`, each once, in the order given (folders in name order). The store
    folder is never searched: its analyses are not new profiles."""
    settings = run_settings()["discovery"]
    extensions = profile_endings()
    skip = frozenset(settings["skip_folders"])
    excluded = os.path.abspath(store) if store is not None else None
    found: list[Candidate] = []
    skipped = 0
    missing: list[str] = []
    for given in paths:
        matches = [Path(given)] if os.path.lexists(given) else [Path(m) for m in sorted(glob.glob(given,
                                                                                                 recursive=True))]
        if not matches:
            missing.append(given)
        for path in matches:
            if path.is_dir() and not _is_profile_set(path, extensions):
                skipped += _walk(path, extensions, skip, excluded, found)
            elif path.exists():
                found.append(_candidate(path))
            else:
                missing.append(str(path))  # a dangling link
    return Discovery(tuple(_unique(found)), skipped, tuple(missing))


def scanned(paths: Sequence[str]) -> list[Path]:
    """What a run over `paths` reads, now or next time, for the output check: each path given, and for a
    glob its matches and the folder it searches (the part before its first wildcard), since a new file
    there may match it next time."""
    out: list[Path] = []
    for given in paths:
        if os.path.lexists(given) or not glob.has_magic(given):
            out.append(Path(given))
            continue
        out += [Path(m) for m in glob.glob(given, recursive=True)]
        fixed = Path(given).parts
        base = next((i for i, part in enumerate(fixed) if glob.has_magic(part)), len(fixed))
        out.append(Path(*fixed[:base]) if base else Path("."))
    return out


def _unique(found: Iterable[Candidate]) -> Iterable[Candidate]:
    """Each path once (named twice, or inside a folder also named); a file reached through a link is
    found again, and then stored once by its content hash."""
    seen: set[str] = set()
    for candidate in found:
        key = os.path.abspath(candidate.path)
        if key not in seen:
            seen.add(key)
            yield candidate


def content_hash(path: Path) -> str:
    """sha256 of a file's bytes; of a folder, of its profile files' relative names and hashes (a README
    edited beside the ranks changes nothing)."""
    if path.is_dir():
        extensions = profile_endings()
        digest = hashlib.sha256()
        for file in (f for f in _files(path) if f.name.lower().endswith(extensions)):
            digest.update(f"{file.relative_to(path).as_posix()}\0{content_hash(file)}\n".encode())
        return digest.hexdigest()
    from advisor.core.regular import open_regular

    try:
        with open_regular(path) as handle:  # a FIFO named like a profile would block the hashing
            return hashlib.file_digest(handle, "sha256").hexdigest() if hasattr(hashlib, "file_digest") \
                else _digest(handle)
    except OSError as exc:
        raise AdvisorError(str(path), f"cannot be read ({exc.strerror or exc})") from None


def _digest(handle) -> str:  # Python 3.10 has no hashlib.file_digest
    digest = hashlib.sha256()
    while chunk := handle.read(HASH_CHUNK):
        digest.update(chunk)
    return digest.hexdigest()
