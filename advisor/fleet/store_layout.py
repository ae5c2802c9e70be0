"""The fleet store's on-disk layout: names, row columns, manifest, and the checks that nothing in it is followed."""

from __future__ import annotations

import json
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from advisor.core.errors import AdvisorError
from advisor.core.files import TEMPORARY_SUFFIX, describe_node, os_problem, temporary_prefix

FORMAT = "advisor-fleet-store"
VERSION = 1
MANIFEST = "store.json"
SUPERSEDING = ".superseding"
LOCK = ".lock"
TABLES = ("profiles", "findings")
ANALYSES = "analyses"
PART = re.compile(r"part-(\d{6,12})\.parquet")
HASH = re.compile(r"[0-9a-f]{64}")  # sha256, as `discover.content_hash` gives it
ANALYSIS_NAME = re.compile(r"[0-9a-f]{64}\.json")
SHARD = re.compile(r"[0-9a-f]{2}")  # analyses/<hash[:2]>/
# write_atomic's temporary name: `.<name, maybe shortened>.<8 characters of tempfile's alphabet>.tmp`
TEMPORARY = re.compile(r"\.([^/]{1,255})\.[a-z0-9_]{8}" + re.escape(TEMPORARY_SUFFIX))
ARROW_TYPES = {"string": "string", "int64": "int64", "float64": "double", "bool": "bool"}  # as pyarrow names them
MAX_MANIFEST_BYTES = 1 << 20  # format, version and a unit per metric column: a few KiB
REQUIRED = {"profiles": ("hash", "path", "status", "name", "run", "part"), "findings": ("hash", "part", "rule")}

# (column, arrow type name) of every profile row; the kinds' headline metrics follow as float64 columns
PROFILE_COLUMNS = (
    ("hash", "string"), ("path", "string"), ("size", "int64"), ("mtime_ns", "int64"), ("kind", "string"),
    ("status", "string"), ("error", "string"), ("name", "string"), ("device", "string"),
    ("profiler_version", "string"), ("captured", "string"), ("label", "string"), ("run", "int64"),
    ("part", "int64"), ("total_time", "float64"), ("gain", "float64"), ("gain_finding", "string"),
    ("recoverable_time", "float64"), ("findings", "int64"), ("root_causes", "string"), ("top_severity", "string"),
    ("capture", "string"),  # the capture's key (fleet/capture.py): null in rows stored before it
)
FINDING_COLUMNS = (
    ("hash", "string"), ("part", "int64"), ("path", "string"), ("name", "string"), ("kind", "string"),
    ("label", "string"), ("run", "int64"), ("rule", "string"), ("rule_id", "string"), ("severity", "string"),
    ("title", "string"), ("root_cause", "bool"), ("gain", "float64"), ("scope", "string"),
    ("recoverable_time", "float64"), ("total_time", "float64"),
)
BASE_UNITS = {"size": "bytes", "total_time": "s", "gain": "fraction", "recoverable_time": "s"}


class StoreError(AdvisorError):
    """The store itself cannot be used (damaged, edited, unwritable): fatal for the whole run, unlike a
    profile that fails to load (stored as its error row)."""


@dataclass(frozen=True)
class Stored:
    """What a re-run needs to know of a stored profile without reading its file again."""

    size: int
    mtime_ns: int
    hash: str


def check_hash(value: object, where: str) -> str:
    """`value` when it is a sha256 digest (64 lowercase hex characters); any other is refused before a
    path is built from it (an edited `/../../x` would name a file outside the store)."""
    if isinstance(value, str) and HASH.fullmatch(value):
        return value
    shown = repr(value) if not isinstance(value, str) or len(value) <= 80 else repr(value[:80]) + "…"
    raise StoreError(where, f"hash {shown} is not a sha256 digest (64 lowercase hex characters); the store was "
                            "edited or damaged")


def analysis_file(folder: Path, content_hash: str) -> Path:
    check_hash(content_hash, str(folder))
    return folder / ANALYSES / content_hash[:2] / f"{content_hash}.json"


def real_folder(path: Path, create: bool = False) -> bool:
    """Whether `path`, a folder inside a store, exists (made when missing, with `create`). It must be a
    real folder: a symlink there is refused, never followed (it could lead anywhere)."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        if not create:
            return False
        try:
            path.mkdir()
        except FileExistsError:  # made meanwhile (another worker): checked again
            return real_folder(path)
        except OSError as exc:
            raise StoreError(str(path), f"cannot make the folder: {os_problem(exc)}") from None
        return True
    except OSError as exc:
        raise StoreError(str(path), f"cannot use the folder: {os_problem(exc)}") from None
    if not stat.S_ISDIR(mode):
        what = "a file" if stat.S_ISREG(mode) else describe_node(mode)
        raise StoreError(str(path), f"is {what}, not a folder; advisor follows no link inside a store (put the "
                                    "folder itself there)")
    return True


def _regular_file(path: Path) -> bool:
    """Whether `path` inside a store is a file (False when missing); a symlink or anything else is refused."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise StoreError(str(path), f"cannot read: {os_problem(exc)}") from None
    if not stat.S_ISREG(mode):
        raise StoreError(str(path), f"is {describe_node(mode)}, not a regular file; advisor follows no link inside "
                                    "a store")
    return True


def _temporary_stem(name: str) -> str:
    """The part of a final name that `write_atomic` puts in its temporary file's name."""
    return temporary_prefix(name)[1:-1]


def _is_temporary(name: str, final: re.Pattern[str], template: str) -> bool:
    """Whether `name` is a temporary file `write_atomic` made for a final name matching `final`; `template`
    is such a name, whose tail completes a shortened stem. The stem must be a whole final name or exactly
    the shortened form of one (its completed form shortens back to it)."""
    match = TEMPORARY.fullmatch(name)
    if match is None:
        return False
    stem = match.group(1)
    if final.fullmatch(stem):
        return True
    completed = stem + template[len(stem):]
    return bool(final.fullmatch(completed)) and _temporary_stem(completed) == stem


def _part_number(path: Path) -> int | None:
    match = PART.fullmatch(path.name)
    return int(match.group(1)) if match else None


def _store_folder(folder: Path) -> bool:
    """Whether the store folder exists; it must be a folder (the link the user named is followed)."""
    try:
        mode = os.stat(folder).st_mode
    except FileNotFoundError:
        if os.path.islink(folder):
            raise AdvisorError(str(folder), "is a symlink to a missing folder") from None
        return False
    except OSError as exc:
        raise AdvisorError(str(folder), f"cannot open the store: {os_problem(exc)}") from None
    if not stat.S_ISDIR(mode):
        what = "a file" if stat.S_ISREG(mode) else describe_node(mode)
        raise AdvisorError(str(folder), f"is {what}, not a store folder")
    return True


def _read_manifest(folder: Path, path: Path) -> dict[str, Any]:
    """store.json, bounded and checked: format, version and a unit (text) per metric column."""
    try:
        with open(path, "rb") as handle:
            raw = handle.read(MAX_MANIFEST_BYTES + 1)
    except OSError as exc:
        raise AdvisorError(str(path), f"cannot read the store manifest: {os_problem(exc)}") from None
    if len(raw) > MAX_MANIFEST_BYTES:
        raise AdvisorError(str(path), f"store manifest larger than {MAX_MANIFEST_BYTES // 1024} KiB; not advisor's")
    try:
        manifest = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError) as exc:
        said = " ".join(str(exc).split())[:200] or type(exc).__name__
        raise AdvisorError(str(path), f"unreadable store manifest ({said})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise AdvisorError(str(folder), "not an advisor fleet store (store.json has another format)")
    if manifest.get("version") != VERSION:
        raise AdvisorError(str(folder), f"store version {str(manifest.get('version'))[:20]} is not {VERSION}, which "
                                        "this advisor reads")
    units = manifest.get("units", {})
    if not isinstance(units, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in units.items()):
        raise AdvisorError(str(path), "'units' must map each metric column to its unit (text)")
    return manifest


def _manifest_bytes(manifest: dict[str, Any]) -> bytes:
    return (json.dumps(manifest, indent=2, sort_keys=True) + "\n").encode("utf-8")
