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
import os
import re
import stat
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from advisor.core.errors import AdvisorError
from advisor.core.files import describe_node, os_problem, write_atomic
from advisor.fleet.store_layout import (
    ANALYSES,
    BASE_UNITS,
    FINDING_COLUMNS,
    FORMAT,
    LOCK,
    MANIFEST,
    PART,
    PROFILE_COLUMNS,
    SHARD,
    SUPERSEDING,
    TABLES,
    VERSION,
    Stored,
    StoreError,
    _is_temporary,
    _manifest_bytes,
    _part_number,
    _read_manifest,
    _regular_file,
    _store_folder,
    analysis_file,
    check_hash,  # noqa: F401  (re-exported: imported from here)
    real_folder,
)
from advisor.fleet.store_parts import _hashes_of, _read, _schema, _write_part

if TYPE_CHECKING:
    import pandas as pd

    from advisor.core.model import Analysis


def write_analysis(folder: Path, content_hash: str, data: bytes) -> None:
    """A profile's analysis JSON into the store (by a worker), through real folders only."""
    target = analysis_file(folder, content_hash)
    for inner in (folder / ANALYSES, target.parent):
        real_folder(inner, create=True)
    try:
        write_atomic(target, data)  # not fsynced: see above
    except AdvisorError as exc:  # the store is unwritable: no profile can be stored
        raise StoreError(exc.where, exc.problem) from None


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
        from advisor.inputs.limits import saved_analysis_limit

        path = self.analysis_path(content_hash)
        shard = path.parent
        present = real_folder(self.folder / ANALYSES) and real_folder(shard) and _regular_file(path)
        analysis = read_if_analysis(path, *saved_analysis_limit()) if present else None
        if analysis is None:
            raise AdvisorError(str(path), "the stored analysis is missing or unreadable")
        return analysis
