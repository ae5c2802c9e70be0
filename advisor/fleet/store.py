"""The fleet store: a folder holding a Parquet dataset of profile rows and finding rows, plus each
profile's full analysis JSON, so any stored profile can be re-rendered or compared without its raw file.

    store.json                        format, version and the unit of each metric column
    profiles/part-000001.parquet      one row per profile; a part here is the commit record
    findings/part-000001.parquet      the fired findings of the profiles of the same part
    analyses/<hash[:2]>/<hash>.json   the full analysis (`advisor report x.json` re-renders it)

Crash safety comes from ordering and atomic renames: analyses are written first (by the workers), then
a part's findings, then its profiles file, each to a temporary name and renamed into place. Parts and
the manifest are flushed to the disk first; analyses are not (one per profile: a killed process never
leaves half of one, and one lost to a power cut is reported missing when it is read). A run
killed at any point leaves whole files only; findings without their profiles part are removed by the
next run's `recover()`, and the profiles they belonged to are analysed again. A profile analysed again
(`--force`) supersedes its older row: readers keep the latest row per content hash, and `compact()`
removes the superseded ones from disk at the end of that run (or, when it was killed, at the next).

Everything read from a store is untrusted (a store is a folder anyone may edit): the folder the user names
with --store may be a link, but nothing inside it is followed (a subfolder, part, manifest or analysis that
is a symlink or not what it should be is refused), every hash is checked to be a sha256 digest before a path
is built from it, and recovery removes only temporary files named exactly as `write_atomic` names them.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from advisor.core.errors import AdvisorError
from advisor.core.files import TEMPORARY_SUFFIX, describe_node, os_problem, temporary_prefix, write_atomic

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

    from advisor.core.model import Analysis

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


def write_analysis(folder: Path, content_hash: str, data: bytes) -> None:
    """A profile's analysis JSON into the store (by a worker), through real folders only."""
    target = analysis_file(folder, content_hash)
    for inner in (folder / ANALYSES, target.parent):
        real_folder(inner, create=True)
    try:
        write_atomic(target, data)  # not fsynced: see above
    except AdvisorError as exc:  # the store is unwritable: no profile can be stored
        raise StoreError(exc.where, exc.problem) from None


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


def _schema(columns: Sequence[tuple[str, str]], metrics: Sequence[str] = ()) -> pa.Schema:
    import pyarrow as pa

    types = {"string": pa.string(), "int64": pa.int64(), "float64": pa.float64(), "bool": pa.bool_()}
    return pa.schema([pa.field(name, types[kind]) for name, kind in columns]
                     + [pa.field(name, pa.float64()) for name in metrics])


def _part_number(path: Path) -> int | None:
    match = PART.fullmatch(path.name)
    return int(match.group(1)) if match else None


class Store:
    """One store folder. Reading needs nothing else; writing happens under `lock()`, one run at a time."""

    def __init__(self, folder: Path, manifest: dict[str, Any]):
        self.folder = folder
        self._manifest = manifest

    @classmethod
    def open(cls, folder: Path, create: bool = False) -> Store:
        """The store in `folder`; with `create`, a new one when the folder is missing or empty. The folder
        the user named may be a link (their choice); nothing inside it is followed."""
        exists = _store_folder(folder)
        path = folder / MANIFEST
        if not exists or not _regular_file(path):
            empty = not exists or not any(os.scandir(folder))
            if not create or not empty:
                what = ("a folder that is not an advisor fleet store (no store.json) and not empty"
                        if exists else "no such store (run `advisor fleet PATH --store DIR` first)")
                raise AdvisorError(str(folder), what)
            manifest = {"format": FORMAT, "version": VERSION, "units": dict(BASE_UNITS)}
            try:
                folder.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise AdvisorError(str(folder), f"cannot make the store folder: {os_problem(exc)}") from None
            write_atomic(path, _manifest_bytes(manifest), durable=True)
            return cls(folder, manifest)
        store = cls(folder, _read_manifest(folder, path))
        store.check_layout()
        return store

    def check_layout(self) -> None:
        """Every folder of the store a real folder (or missing): none is a link or a file."""
        for table in (*TABLES, ANALYSES):
            real_folder(self.folder / table)
        analyses = self.folder / ANALYSES
        if analyses.is_dir():
            for entry in os.scandir(analyses):
                if SHARD.fullmatch(entry.name):
                    real_folder(Path(entry.path))

    # ---------------------------------------------------------------------------------------- writing

    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        """One writing run at a time; the lock goes with the process, so a killed run leaves none (its lock
        file stays, unlocked, and the next run takes it). A store that cannot be written is refused here,
        before any work."""
        import fcntl

        self.check_layout()
        self._check_writable()
        path = self.folder / LOCK
        try:  # never through a link, and a FIFO there must not block the open
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            problem = "is a symlink; advisor follows no link inside a store" if exc.errno == errno.ELOOP \
                else f"cannot write to the store: {os_problem(exc)}"
            raise StoreError(str(path), problem) from None
        with os.fdopen(fd, "r+b") as handle:
            mode = os.fstat(fd).st_mode
            if not stat.S_ISREG(mode):
                raise StoreError(str(path), f"is {describe_node(mode)}, not the store's lock file")
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise AdvisorError(str(self.folder), "the store is in use by another advisor fleet run") from None
            yield

    def _check_writable(self) -> None:
        """A read-only store (permissions, a read-only file system) as one line before any profile is read."""
        for folder in (self.folder, *(self.folder / t for t in (*TABLES, ANALYSES) if (self.folder / t).is_dir())):
            if not os.access(folder, os.W_OK):
                raise StoreError(str(folder), "cannot write to the store: read-only (permission denied or a "
                                              "read-only file system)")

    def _parts(self, table: str) -> dict[int, Path]:
        """The part files of a table by number; one that is not a regular file (a link) is refused."""
        folder = self.folder / table
        if not real_folder(folder):
            return {}
        parts = {n: p for p in folder.iterdir() if (n := _part_number(p)) is not None}
        for path in parts.values():
            _regular_file(path)
        return parts

    def next_part(self) -> int:
        return max([*self._parts("profiles"), *self._parts("findings"), 0]) + 1

    def next_run(self) -> int:
        runs = self._column("profiles", "run")
        return int(max(runs, default=0)) + 1

    def recover(self) -> None:
        """After a killed run: temporary files and findings parts never committed go; rows superseded
        by a later analysis of the same content are removed."""
        for folder, final, template in self._temporary_places():
            for entry in os.scandir(folder):
                if entry.is_file(follow_symlinks=False) and _is_temporary(entry.name, final, template):
                    os.unlink(entry.path)
        committed = self._parts("profiles")
        for number, path in self._parts("findings").items():
            if number not in committed:
                path.unlink()
        if os.path.lexists(self.folder / SUPERSEDING):  # a --force run stopped before it compacted
            self.compact()
            (self.folder / SUPERSEDING).unlink()

    def _temporary_places(self) -> Iterator[tuple[Path, re.Pattern[str], str]]:
        """Each real folder of the store where `write_atomic` makes temporary files, with the final names it
        makes there (a pattern and an example): nothing else is ever removed."""
        yield self.folder, re.compile(f"{re.escape(MANIFEST)}|{re.escape(SUPERSEDING)}"), MANIFEST
        for table in TABLES:
            if real_folder(self.folder / table):
                yield self.folder / table, PART, "part-000001.parquet"
        analyses = self.folder / ANALYSES
        if real_folder(analyses):
            for entry in os.scandir(analyses):
                if SHARD.fullmatch(entry.name) and real_folder(Path(entry.path)):
                    shard = re.compile(re.escape(entry.name) + r"[0-9a-f]{62}\.json")
                    yield Path(entry.path), shard, "0" * 64 + ".json"

    @contextlib.contextmanager
    def superseding(self) -> Iterator[None]:
        """Around a run that analyses stored profiles again: a marker, so that a run killed before its
        compaction is compacted by the next (only such runs store one content twice)."""
        write_atomic(self.folder / SUPERSEDING, b"")
        yield
        self.compact()
        (self.folder / SUPERSEDING).unlink(missing_ok=True)

    def commit(self, rows: Sequence[dict[str, Any]], findings: Sequence[dict[str, Any]],
               units: dict[str, str], metrics: Sequence[str]) -> int:
        """One part: its findings, then its profile rows (the commit). Returns the part number."""
        import pyarrow as pa

        part = self.next_part()
        merged = dict(sorted({**self._manifest.get("units", {}), **units}.items()))
        if merged != self._manifest.get("units"):
            self._manifest = {**self._manifest, "units": merged}
            write_atomic(self.folder / MANIFEST, _manifest_bytes(self._manifest), durable=True)
        name = f"part-{part:06d}.parquet"
        for table, columns, records, extra in (("findings", FINDING_COLUMNS, findings, ()),
                                               ("profiles", PROFILE_COLUMNS, rows, metrics)):
            schema = _schema(columns, extra)
            real_folder(self.folder / table, create=True)
            _write_part(self.folder / table / name,
                        pa.Table.from_pylist([{**r, "part": part} for r in records], schema=schema))
        return part

    def compact(self) -> None:
        """Rewrites the parts holding rows a later part superseded (profiles analysed again)."""
        import pyarrow.compute as pc

        latest, stale = self._latest()
        for number in sorted(stale):
            for table in ("profiles", "findings"):
                path = self.folder / table / f"part-{number:06d}.parquet"
                if not _regular_file(path):
                    continue
                data = _read(path)
                kept = data.filter(pc.is_in(data.column("hash"), value_set=_hashes_of(latest, number)))
                if table == "profiles" and kept.num_rows == 0:
                    path.unlink()
                    continue
                _write_part(path, kept)
            if not os.path.lexists(self.folder / "profiles" / f"part-{number:06d}.parquet"):
                (self.folder / "findings" / f"part-{number:06d}.parquet").unlink(missing_ok=True)

    # ---------------------------------------------------------------------------------------- reading

    def _column(self, table: str, column: str) -> list[Any]:
        return [v for path in self._parts(table).values() for v in _read(path, [column]).column(column).to_pylist()]

    def _table(self, table: str, columns: Sequence[tuple[str, str]]) -> pd.DataFrame:
        import pyarrow as pa

        parts = self._parts(table)
        tables = [_read(parts[n]) for n in sorted(parts)]
        if not tables:
            return _schema(columns).empty_table().to_pandas()
        return pa.concat_tables(tables, promote_options="default").to_pandas()

    def profiles(self) -> pd.DataFrame:
        """The latest committed row of each stored content, error rows included (status "error")."""
        frame = self._table("profiles", PROFILE_COLUMNS)
        frame = frame.sort_values("part", kind="stable").drop_duplicates("hash", keep="last")
        return frame.sort_values(["name", "run", "path"], kind="stable").reset_index(drop=True)

    def findings(self, profiles: pd.DataFrame | None = None) -> pd.DataFrame:
        """The findings of the rows `profiles()` returns (an uncommitted or superseded part's are left out);
        pass that table where it is read already."""
        frame = self._table("findings", FINDING_COLUMNS)
        if frame.empty:
            return frame
        latest = dict(zip(profiles["hash"], profiles["part"], strict=True)) if profiles is not None \
            else self._latest()[0]
        current = frame[[latest.get(h) == p for h, p in zip(frame["hash"], frame["part"], strict=True)]]
        return current.sort_values(["name", "run", "path", "rule"], kind="stable").reset_index(drop=True)

    def _latest(self) -> tuple[dict[str, int], set[int]]:
        """Each stored content's latest profiles part, and the parts holding a row a later one superseded;
        from the hash column alone."""
        latest: dict[str, int] = {}
        stale: set[int] = set()
        parts = self._parts("profiles")
        for number in sorted(parts):
            for content_hash in _read(parts[number], ["hash"]).column("hash").to_pylist():
                if content_hash in latest:
                    stale.add(latest[content_hash])
                latest[content_hash] = number
        return latest, stale

    def index(self) -> dict[str, Stored]:
        """Path -> size, mtime and hash of what is stored: a re-run skips an unchanged file unread."""
        import pyarrow as pa

        parts = self._parts("profiles")
        if not parts:
            return {}
        columns = ["path", "size", "mtime_ns", "hash"]
        data = pa.concat_tables([_read(parts[n], columns) for n in sorted(parts)])
        return {p: Stored(s, m, h) for p, s, m, h in zip(*(data.column(c).to_pylist() for c in columns), strict=True)}

    def units(self) -> dict[str, str]:
        return dict(self._manifest.get("units", {}))

    def analysis_path(self, content_hash: str) -> Path:
        return analysis_file(self.folder, content_hash)

    def analysis(self, content_hash: str) -> Analysis:
        from advisor.core.serialize import read_if_analysis

        path = self.analysis_path(content_hash)
        shard = path.parent
        present = real_folder(self.folder / ANALYSES) and real_folder(shard) and _regular_file(path)
        analysis = read_if_analysis(path) if present else None
        if analysis is None:
            raise AdvisorError(str(path), "the stored analysis is missing or unreadable")
        return analysis


def _read(path: Path, columns: Sequence[str] | None = None) -> pa.Table:
    """One part file; through ParquetFile, which needs none of pyarrow's dataset machinery (a re-run
    with nothing to do would spend a third of its time importing it)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        data = pq.ParquetFile(path).read(columns=list(columns) if columns is not None else None)
    except (OSError, ValueError, pa.ArrowException) as exc:
        said = " ".join(str(exc).split())[:200]
        raise StoreError(str(path), f"unreadable part of the store ({type(exc).__name__}: {said})") from None
    _check_part(path, data)
    return data


def _check_part(path: Path, data: pa.Table) -> None:
    """A part's cells are untrusted: every hash a sha256 digest, the columns rows are ordered and grouped by
    present, and each fixed column of the type advisor writes."""
    import pyarrow.compute as pc

    table = path.parent.name
    columns = dict(PROFILE_COLUMNS if table == "profiles" else FINDING_COLUMNS)
    for name in data.column_names:
        wanted = columns.get(name)
        if wanted is not None and str(data.schema.field(name).type) != ARROW_TYPES[wanted]:
            raise StoreError(str(path), f"column '{name}' is {data.schema.field(name).type}, not {wanted}; the store "
                                        "was edited or damaged")
    for name in REQUIRED.get(table, ()):
        if name in data.column_names and data.column(name).null_count:
            row = pc.index(pc.is_null(data.column(name)), True).as_py()
            raise StoreError(str(path), f"row {row}: '{name}' is empty; the store was edited or damaged")
    if "hash" in data.column_names:
        good = pc.match_substring_regex(data.column("hash"), "^[0-9a-f]{64}$")  # RE2: linear
        if pc.all(good).as_py() is False:  # null: no rows
            row = pc.index(good, False).as_py()
            check_hash(data.column("hash")[row].as_py(), f"{path}: row {row}")


def _write_part(path: Path, data: pa.Table) -> None:
    """A part, compressed and flushed to the disk before it is renamed into place (it commits rows)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    sink = pa.BufferOutputStream()
    pq.write_table(data, sink, compression="zstd")
    write_atomic(path, sink.getvalue().to_pybytes(), durable=True)


def _hashes_of(latest: dict[str, int], number: int) -> pa.Array:
    """The hashes whose latest row is in part `number`."""
    import pyarrow as pa

    return pa.array(sorted(h for h, n in latest.items() if n == number), type=pa.string())


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
