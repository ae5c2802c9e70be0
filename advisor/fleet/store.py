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
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from advisor.core.errors import AdvisorError
from advisor.core.files import write_atomic

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

    from advisor.core.model import Analysis

FORMAT = "advisor-fleet-store"
VERSION = 1
MANIFEST = "store.json"
SUPERSEDING = ".superseding"
PART = re.compile(r"part-(\d{6,})\.parquet")

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


@dataclass(frozen=True)
class Stored:
    """What a re-run needs to know of a stored profile without reading its file again."""

    size: int
    mtime_ns: int
    hash: str


def analysis_file(folder: Path, content_hash: str) -> Path:
    return folder / "analyses" / content_hash[:2] / f"{content_hash}.json"


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
        """The store in `folder`; with `create`, a new one when the folder is missing or empty."""
        path = folder / MANIFEST
        if not path.is_file():
            empty = not folder.exists() or (folder.is_dir() and not any(folder.iterdir()))
            if not create or not empty:
                what = ("a folder that is not an advisor fleet store (no store.json) and not empty"
                        if folder.exists() else "no such store (run `advisor fleet PATH --store DIR` first)")
                raise AdvisorError(str(folder), what)
            manifest = {"format": FORMAT, "version": VERSION, "units": dict(BASE_UNITS)}
            folder.mkdir(parents=True, exist_ok=True)
            write_atomic(path, _manifest_bytes(manifest), durable=True)
            return cls(folder, manifest)
        try:
            manifest = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise AdvisorError(str(path), f"unreadable store manifest ({exc})") from None
        if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
            raise AdvisorError(str(folder), "not an advisor fleet store (store.json has another format)")
        if manifest.get("version") != VERSION:
            raise AdvisorError(str(folder), f"store version {manifest.get('version')} is not {VERSION}, which this "
                                            "advisor reads")
        return cls(folder, manifest)

    # ---------------------------------------------------------------------------------------- writing

    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        """One writing run at a time; the lock goes with the process, so a killed run leaves none."""
        import fcntl

        with open(self.folder / ".lock", "a+b") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise AdvisorError(str(self.folder), "the store is in use by another advisor fleet run") from None
            yield

    def _parts(self, table: str) -> dict[int, Path]:
        folder = self.folder / table
        if not folder.is_dir():
            return {}
        return {n: p for p in folder.iterdir() if (n := _part_number(p)) is not None}

    def next_part(self) -> int:
        return max([*self._parts("profiles"), *self._parts("findings"), 0]) + 1

    def next_run(self) -> int:
        runs = self._column("profiles", "run")
        return int(max(runs, default=0)) + 1

    def recover(self) -> None:
        """After a killed run: temporary files and findings parts never committed go; rows superseded
        by a later analysis of the same content are removed."""
        for table in ("profiles", "findings", "analyses"):
            folder = self.folder / table
            if folder.is_dir():
                for temporary in folder.rglob(".*.tmp"):
                    temporary.unlink(missing_ok=True)
        committed = self._parts("profiles")
        for number, path in self._parts("findings").items():
            if number not in committed:
                path.unlink()
        if (self.folder / SUPERSEDING).exists():  # a --force run stopped before it compacted
            self.compact()
            (self.folder / SUPERSEDING).unlink()

    @contextlib.contextmanager
    def superseding(self) -> Iterator[None]:
        """Around a run that analyses stored profiles again: a marker, so that a run killed before its
        compaction is compacted by the next (only such runs store one content twice)."""
        write_atomic(self.folder / SUPERSEDING, b"")
        yield
        self.compact()
        (self.folder / SUPERSEDING).unlink()

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
            (self.folder / table).mkdir(exist_ok=True)
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
                if not path.is_file():
                    continue
                data = _read(path)
                kept = data.filter(pc.is_in(data.column("hash"), value_set=_hashes_of(latest, number)))
                if table == "profiles" and kept.num_rows == 0:
                    path.unlink()
                    continue
                _write_part(path, kept)
            if not (self.folder / "profiles" / f"part-{number:06d}.parquet").exists():
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
        analysis = read_if_analysis(path) if path.is_file() else None
        if analysis is None:
            raise AdvisorError(str(path), "the stored analysis is missing or unreadable")
        return analysis


def _read(path: Path, columns: Sequence[str] | None = None) -> pa.Table:
    """One part file; through ParquetFile, which needs none of pyarrow's dataset machinery (a re-run
    with nothing to do would spend a third of its time importing it)."""
    import pyarrow.parquet as pq

    return pq.ParquetFile(path).read(columns=list(columns) if columns is not None else None)


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


def _manifest_bytes(manifest: dict[str, Any]) -> bytes:
    return (json.dumps(manifest, indent=2, sort_keys=True) + "\n").encode("utf-8")
