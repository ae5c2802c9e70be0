"""Neuron Explorer's Parquet output directory (`neuron-explorer view … --output-file DIR`): Summary,
Metadata, Instruction, DmaPacket, Warning … tables, large ones split into `Name_0.parquet`,
`Name_1.parquet`, …. Only the needed columns are read (reference: neuron-explorer-parquet.md).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from advisor.core.errors import AdvisorError
from advisor.core.events import EventTrace, Interner
from advisor.inputs.text import require_regular_file
from advisor.kinds.base import Progress
from advisor.profilers.neuron.adapters.columns import neuron_trace, tensor_decls

NAME = "parquet"
TABLES = ("Summary", "Metadata", "Instruction", "DmaPacket", "TensorInfo", "Warning")  # the tables read
INSTRUCTION_COLUMNS = ("start_ts", "duration_ns", "engine", "hlo_name", "nki_source_location")
DMA_COLUMNS = ("start_ts", "duration_ns", "transfer_bytes", "variable")
TENSOR_COLUMNS = ("variable_name", "type", "size", "load_to_sbuf_repeat_factor", "load_to_sbuf_total_size_bytes",
                  "load_to_sbuf_dma_count")


def table_files(folder: Path, table: str) -> list[Path]:
    """`Table.parquet`, or its parts `Table_0.parquet`, `Table_1.parquet` … in numeric order."""
    whole = folder / f"{table}.parquet"
    if whole.is_file():
        return [whole]
    pattern = re.compile(rf"^{table}_(\d+)\.parquet$")
    parts = sorted((int(m.group(1)), p) for p in folder.iterdir() if (m := pattern.match(p.name)))
    return [p for _, p in parts]


_TABLE_FILE = re.compile(rf"^({'|'.join(TABLES)})(_\d+)?\.parquet$")


def has_tables(folder: Path) -> bool:
    """Whether the folder holds any table advisor reads, from one listing (detection asks every folder
    a fleet walks)."""
    return any(_TABLE_FILE.match(p.name) for p in folder.iterdir())


def is_explorer_dir(folder: Path) -> bool:
    return folder.is_dir() and bool(table_files(folder, "Summary"))


def _read(folder: Path, table: str, wanted: tuple[str, ...] | None) -> Any | None:
    """The table (a pyarrow Table) with the wanted columns it has, or None when it was not written
    (Explorer writes a table only when the profile has that activity)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    files = table_files(folder, table)
    if not files:
        return None
    try:
        parts = []
        for file in files:
            require_regular_file(file)  # a FIFO named like a table would block the reader
            names = pq.read_schema(file).names
            columns = [c for c in wanted if c in names] if wanted else None
            parts.append(pq.read_table(file, columns=columns))
        return pa.concat_tables(parts, promote_options="default") if len(parts) > 1 else parts[0]
    except (OSError, pa.ArrowException) as exc:
        said = " ".join(str(exc).split())  # pyarrow's messages can run over several lines
        raise AdvisorError(str(files[0]), f"cannot read Parquet table {table}: {said}") from None


def _first_row(table: Any | None) -> dict[str, Any]:
    if table is None or table.num_rows == 0:
        return {}
    return {k: v[0] for k, v in table.slice(0, 1).to_pydict().items()}


def _numbers(table: Any, column: str, default: float = -1.0) -> Any:
    import numpy as np

    if column not in table.column_names:
        return np.full(table.num_rows, default)
    return np.asarray(table.column(column).to_numpy(zero_copy_only=False), dtype=np.float64)


def _texts(table: Any, column: str) -> Any:
    import numpy as np

    interner = Interner()
    values = table.column(column).to_pylist() if column in table.column_names else [""] * table.num_rows
    codes = np.fromiter((interner[v or ""] for v in values), dtype=np.int32, count=table.num_rows)
    return interner.codes(codes)


def load(folder: Path, progress: Progress | None = None) -> EventTrace:
    import numpy as np
    import pyarrow as pa

    def read(table: str, wanted: tuple[str, ...] | None) -> Any:
        if progress:
            progress(f"reading Parquet table {table}")
        return _read(folder, table, wanted)

    summary = _first_row(read("Summary", None))
    if not summary:
        raise AdvisorError(str(folder), "the Summary table is empty")
    metadata = _first_row(read("Metadata", None))
    none = pa.table({})  # a table Explorer did not write: no rows
    instr = read("Instruction", INSTRUCTION_COLUMNS) or none
    dma = read("DmaPacket", DMA_COLUMNS) or none
    tensors = read("TensorInfo", TENSOR_COLUMNS) or none
    warnings = read("Warning", ("category", "message")) or none
    # Explorer timestamps are hardware clock values: events are placed relative to the trace start.
    origin = metadata.get("first_hw_timestamp")
    if origin is None:
        starts = [float(np.min(_numbers(t, "start_ts"))) for t in (instr, dma) if t.num_rows]
        origin = min(starts) if starts else 0.0
    categories, messages = (_texts(warnings, c) for c in ("category", "message"))
    return neuron_trace(
        {"start": _numbers(instr, "start_ts") - float(origin), "duration": _numbers(instr, "duration_ns"),
         "engine": _texts(instr, "engine"), "hlo": _texts(instr, "hlo_name"),
         "nki": _texts(instr, "nki_source_location")},
        {"start": _numbers(dma, "start_ts") - float(origin), "duration": _numbers(dma, "duration_ns"),
         "size": _numbers(dma, "transfer_bytes"), "variable": _texts(dma, "variable")},
        {**{k: v for k, v in metadata.items() if isinstance(v, (str, int, float))}, **summary}, metadata,
        tuple(f"{categories.names[c]}: {messages.names[m]}".strip(": ")
              for c, m in zip(categories.codes, messages.codes, strict=True)),
        tensor_decls(tensors.to_pylist()))
