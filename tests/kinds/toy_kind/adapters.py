"""toyprof CSV: `toyprof,1`, then `device,<name>`, then `metric,value,unit` rows with vendor names."""

from __future__ import annotations

import csv
from pathlib import Path

from advisor.core.errors import AdvisorError
from advisor.core.model import Profile, SourceInfo
from advisor.kinds.base import LoadOptions
from advisor.kinds.conventions import conventions, normalise
from toy_kind import KIND


def detect(path: Path, head: bytes) -> bool:
    return path.is_file() and head.startswith(b"toyprof,")


def load(path: Path, options: LoadOptions) -> list[Profile]:
    rows = list(csv.reader(path.read_text(encoding="utf-8").splitlines()[1:]))
    raw = {name: value for name, value, *_ in (r for r in rows if len(r) >= 2)}
    units = {r[0]: r[2] for r in rows if len(r) >= 3}
    if "kernel__time.sum" not in raw:
        raise AdvisorError(str(path), "no kernel__time.sum row")
    fields = normalise(raw, conventions(KIND), units)
    source = SourceInfo(path=str(path), format="toyprof-csv", shape=f"{len(rows)} rows")
    return [Profile(source=source, values=fields.values, info=fields.info, notes=fields.notes, units=fields.units,
                    raw_names=fields.raw_names, kind=KIND.name)]
