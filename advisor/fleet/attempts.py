"""The order of one name's stored attempts, shared by the trends, the history and `store:NAME@LABEL`:
capture time when the profiles carry one, else the run number, then the path as a tie-breaker; and the
points in time they make (one run stores a kernel once per rank, core or GPU: those are one point)."""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd


def order(row: dict[str, Any]) -> tuple[str, int, str, str]:
    """Attempts sort by (captured, run, path); a missing capture time sorts as the empty string."""
    return row.get("captured") or "", int(row["run"]), row["path"], row["hash"]


def ordered(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """The frame's rows as plain records, in attempt order."""
    return sorted(records(frame), key=order)


def point(row: dict[str, Any]) -> tuple[str, int]:
    """What tells two attempts apart in time: the capture time and the run that stored them."""
    return row.get("captured") or "", int(row["run"])


def point_label(row: dict[str, Any]) -> str:
    """How an attempt is named: its --label, else its capture time, else its run number."""
    return row.get("label") or row.get("captured") or f"run {int(row['run'])}"


def clean(value: Any) -> Any:
    """A DataFrame cell as plain Python: numpy scalars unwrapped, NaN and pandas' missing markers None."""
    import pandas as pd

    if hasattr(value, "item"):
        value = value.item()
    if value is None or (not isinstance(value, (str, bool)) and pd.isna(value)):
        return None
    return value


def records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """Rows as dicts of plain Python values (None for missing)."""
    return [{k: clean(v) for k, v in row.items()} for row in frame.to_dict("records")]


@dataclass(frozen=True)
class Point:
    """One point in time of a name: every profile of it stored then (the ranks, cores or GPUs of a run)."""

    label: str  # --label, else the capture time, else "run N"
    captured: str | None
    run: int
    rows: tuple[dict[str, Any], ...]  # in attempt order
    total_time: float | None  # seconds: the median over the profiles with a time
    rules: tuple[str, ...]  # the findings fired in any of them

    @property
    def paths(self) -> tuple[str, ...]:
        return tuple(r["path"] for r in self.rows)


def points(rows: list[dict[str, Any]], rules_of: dict[str, tuple[str, ...]]) -> list[Point]:
    """Attempt-ordered rows of one name grouped by point in time, in order."""
    grouped: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for row in rows:
        grouped.setdefault(point(row), []).append(row)
    out = []
    for group in grouped.values():
        times = [r["total_time"] for r in group if r.get("total_time") is not None]
        rules = sorted({rule for r in group for rule in rules_of.get(r["hash"], ())})
        out.append(Point(point_label(group[0]), group[0].get("captured"), int(group[0]["run"]), tuple(group),
                         statistics.median(times) if times else None, tuple(rules)))
    return out
