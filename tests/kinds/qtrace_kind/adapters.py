"""qtrace CSV: `qtrace,1`, then `device,<name>`, then one event per row: `queue,op,start_ns,duration_ns,bytes,name`
(`op` is kernel or copy; a kernel's bytes are empty)."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

from advisor.core.errors import AdvisorError
from advisor.core.events import EventTable, EventTrace, Interner
from advisor.core.model import Profile, SourceInfo
from advisor.kinds.base import LoadOptions
from advisor.kinds.conventions import conventions, normalise
from qtrace_kind import KIND

OPS = ("kernel", "copy")


def detect(path: Path, head: bytes) -> bool:
    return path.is_file() and head.startswith(b"qtrace,")


def _table(rows: list[list[str]]) -> EventTable:
    """One op's events as columns: times in ns, the queue as the timeline track."""
    queues, names = Interner(), Interner()
    return EventTable(start=np.array([float(r[2]) for r in rows]), duration=np.array([float(r[3]) for r in rows]),
                      track=queues.codes(np.array([queues[r[0]] for r in rows], dtype=np.int32)),
                      name=names.codes(np.array([names[r[5]] for r in rows], dtype=np.int32)),
                      bytes=np.array([float(r[4] or "nan") for r in rows]))


def load(path: Path, options: LoadOptions) -> list[Profile]:
    lines = path.read_text(encoding="utf-8").splitlines()
    rows = [r for r in csv.reader(lines[2:]) if len(r) == 6 and r[1] in OPS]
    if len(lines) < 2 or not rows:
        raise AdvisorError(str(path), "no event rows (queue,op,start_ns,duration_ns,bytes,name)")
    try:
        tables = {op: _table([r for r in rows if r[1] == op]) for op in OPS}
    except ValueError as exc:
        raise AdvisorError(str(path), f"an event's figure is not a number ({exc})") from None
    end = max(float((t.start + t.duration).max()) for t in tables.values() if len(t))
    fields = normalise({"device": lines[1].partition(",")[2], "total_time": end * 1e-9}, conventions(KIND))
    trace = EventTrace(tables=tables, summary={}, metadata={})
    source = SourceInfo(path=str(path), format="qtrace-csv", shape=f"{len(rows)} events")
    return [Profile(source=source, values=fields.values, info=fields.info, notes=fields.notes, units=fields.units,
                    trace=trace, kind=KIND.name)]
