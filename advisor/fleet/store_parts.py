"""The fleet store's Parquet part files: read and checked (their cells are untrusted), and written."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from advisor.core.files import write_atomic
from advisor.fleet.store_layout import ARROW_TYPES, FINDING_COLUMNS, PROFILE_COLUMNS, REQUIRED, StoreError, check_hash

if TYPE_CHECKING:
    import pyarrow as pa


def _schema(columns: Sequence[tuple[str, str]], metrics: Sequence[str] = ()) -> pa.Schema:
    import pyarrow as pa

    types = {"string": pa.string(), "int64": pa.int64(), "float64": pa.float64(), "bool": pa.bool_()}
    return pa.schema([pa.field(name, types[kind]) for name, kind in columns]
                     + [pa.field(name, pa.float64()) for name in metrics])


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


def prepare_commit() -> None:
    """Loads what writing a part needs, ahead of the first commit: pyarrow's parquet writer and pandas,
    which pyarrow imports when it first converts Python values (half a second in all)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.Table.from_pylist([{"part": 0}]), pa.BufferOutputStream(), compression="zstd")


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
