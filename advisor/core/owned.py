"""A folder advisor writes into that may hold other files too (a report's `<name>_files/`, a rule-docs
folder): a manifest inside it records what each output wrote there, with each file's sha256, and only a
file recorded there, still holding exactly what advisor wrote, is ever removed. Anything else is left as
it is and named, so the user knows it was kept.

The manifest is read as untrusted input: an entry that is not a plain relative name inside the folder,
reaches it through a symlink, or no longer matches its recorded hash is never touched.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from advisor.core.files import FileSet

MANIFEST = ".advisor-written.json"
MAX_MANIFEST_BYTES = 16 * 2**20  # thousands of entries; a larger one is not advisor's
HEX = frozenset("0123456789abcdef")


@dataclass(frozen=True)
class FolderResult:
    folder: Path
    removed: tuple[str, ...]  # files of an earlier write by the same output, no longer written
    kept: tuple[str, ...]  # files in the folder that advisor did not write: left alone

    def note(self) -> str | None:
        """One line naming what was kept, or None when the folder holds only advisor's files."""
        if not self.kept:
            return None
        shown = ", ".join(self.kept[:5]) + (f" and {len(self.kept) - 5} more" if len(self.kept) > 5 else "")
        count = len(self.kept)
        return (f"{self.folder}: left {count} file{'s' if count != 1 else ''} advisor did not write as "
                f"{'they were' if count != 1 else 'it was'}: {shown}")


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _safe_relative(name: object) -> PurePosixPath | None:
    """A manifest entry as a relative path of plain parts, or None (absolute, `..`, empty, odd types)."""
    if not isinstance(name, str) or not name or "\x00" in name or "\\" in name:
        return None
    path = PurePosixPath(name)
    if path.is_absolute() or any(part in ("", ".", "..") for part in path.parts) or str(path) != name:
        return None
    return path


@dataclass(frozen=True)
class Written:
    """One file advisor wrote in the folder: the sha256 of what it wrote last, and the outputs (report file
    names) whose renders still include it."""
    sha256: str
    by: frozenset[str]


def read_manifest(folder: Path) -> dict[str, Written]:
    """relative path -> what advisor wrote there; empty when missing or not advisor's."""
    path = folder / MANIFEST
    try:
        info = os.lstat(path)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_MANIFEST_BYTES:
            return {}
        data = json.loads(path.read_bytes())
    except (OSError, ValueError, RecursionError):
        return {}
    files = data.get("files") if isinstance(data, dict) and data.get("advisor") == 1 else None
    if not isinstance(files, dict):
        return {}
    manifest: dict[str, Written] = {}
    for name, entry in files.items():
        sha = entry.get("sha256") if isinstance(entry, dict) else None
        by = entry.get("by") if isinstance(entry, dict) else None
        if (_safe_relative(name) is not None and isinstance(sha, str) and len(sha) == 64 and set(sha) <= HEX
                and isinstance(by, list) and by and all(isinstance(owner, str) for owner in by)):
            manifest[name] = Written(sha, frozenset(by))
    return manifest


def _manifest_bytes(manifest: dict[str, Written]) -> bytes:
    files = {name: {"sha256": entry.sha256, "by": sorted(entry.by)} for name, entry in manifest.items()}
    return (json.dumps({"advisor": 1, "files": files}, indent=1, sort_keys=True) + "\n").encode("utf-8")


def _inside(folder: Path, relative: PurePosixPath) -> Path | None:
    """`folder/relative` when every folder on the way is a real folder (no symlink), else None."""
    current = folder
    for part in relative.parts[:-1]:
        current = current / part
        try:
            if not stat.S_ISDIR(os.lstat(current).st_mode):
                return None
        except OSError:
            return None
    return folder / relative


def _holds(path: Path, sha: str) -> bool:
    """A regular file (not a symlink) whose bytes are still exactly what advisor wrote."""
    try:
        info = os.lstat(path)
        if not stat.S_ISREG(info.st_mode) or info.st_size > 2**31:
            return False
        return digest(path.read_bytes()) == sha
    except OSError:
        return False


def _foreign(folder: Path, known: set[str]) -> list[str]:
    """Files under `folder` (symlinks not followed) that no manifest entry names."""
    found: list[str] = []
    for root, dirs, names in os.walk(folder, followlinks=False):
        relative_root = PurePosixPath(Path(root).relative_to(folder).as_posix())
        for name in sorted(names + [d for d in dirs if os.path.islink(os.path.join(root, d))]):
            relative = str(relative_root / name) if str(relative_root) != "." else name
            if relative not in known and relative != MANIFEST:
                found.append(relative)
        dirs.sort()
    return sorted(found)


def write_owned(folder: Path, owner: str, files: dict[str, bytes],
                main: tuple[Path, bytes] | None = None) -> FolderResult:
    """Write `files` (paths relative to `folder`) and the manifest, then `main` (the report linking them),
    all or nothing; then remove what `owner` wrote there before and no longer writes, when no other output
    still includes it and it still holds exactly what advisor wrote."""
    before = read_manifest(folder)
    after = {name: Written(entry.sha256, entry.by - {owner}) for name, entry in before.items()}
    after.update({name: Written(digest(data), (before[name].by if name in before else frozenset()) | {owner})
                  for name, data in files.items()})
    stale = {name: before[name].sha256 for name, entry in after.items() if not entry.by}
    after = {name: entry for name, entry in sorted(after.items()) if entry.by}
    with FileSet() as batch:
        batch.make_folder(folder)
        for relative in sorted({PurePosixPath(name).parent for name in files} - {PurePosixPath(".")},
                               key=lambda p: len(p.parts)):
            for depth in range(1, len(relative.parts) + 1):
                batch.make_folder(folder.joinpath(*relative.parts[:depth]))
        for name, data in files.items():
            batch.add(folder / name, data)
        batch.add(folder / MANIFEST, _manifest_bytes(after))
        if main is not None:
            batch.add(*main)
        batch.commit()
    removed = []
    for name, sha in sorted(stale.items()):
        safe = _safe_relative(name)
        target = _inside(folder, safe) if safe is not None else None
        if target is not None and _holds(target, sha):
            target.unlink()
            removed.append(name)
            _remove_empty_parents(folder, target.parent)
    return FolderResult(folder, tuple(removed), tuple(_foreign(folder, set(after))))


def _remove_empty_parents(folder: Path, inner: Path) -> None:
    """Folders emptied by a removal, up to (not including) `folder`; a folder still holding anything stays."""
    while inner != folder and folder in inner.parents:
        try:
            inner.rmdir()
        except OSError:
            return
        inner = inner.parent
