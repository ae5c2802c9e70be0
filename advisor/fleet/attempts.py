"""The order of one name's stored attempts, shared by the trends, the history and `store:NAME@LABEL`:
capture time when the profiles carry one, else the run number, then the path as a tie-breaker; and the
points in time they make (one run stores a kernel once per rank, core or GPU: those are one point; two
captures stored by one run, a before and an after, are two)."""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd


# The order a path's words make evident when no capture time says it (issue 36: `after` sorted before `before`,
# so the fix read as a regression): a word of the first list comes first, then the unmarked, then the second's.
_EARLY = re.compile(r"(?<![a-z])(before|baseline|base|orig|original|old|ref|reference)(?![a-z])")
_LATE = re.compile(r"(?<![a-z])(after|new|fixed|opt|optimi[sz]ed|tuned)(?![a-z])")


def evident(path: str) -> tuple[int, tuple[Any, ...]]:
    """A path's place among attempts without a capture time: before/after words, then its numbers as numbers
    (attempt_2 before attempt_10), then its text."""
    low = path.lower()
    rank = 0 if _EARLY.search(low) else 2 if _LATE.search(low) else 1
    return rank, tuple(int(p) if p.isdigit() else p for p in re.split(r"([0-9]+)", low))


def order(row: dict[str, Any]) -> tuple[Any, ...]:
    """Attempts sort by (captured, run, the path's evident order); a missing capture time sorts as the empty
    string."""
    return row.get("captured") or "", int(row["run"]), evident(str(row["path"])), row["hash"]


def ordered(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """The frame's rows as plain records, in attempt order."""
    return sorted(records(frame), key=order)


# Digit runs in a path: the ranks, cores or GPUs of one capture are files whose paths differ only by a
# number (rank0.pb, rank1.pb; rank0/profile.json), the convention fleet discovery reads rank folders by.
_DIGITS = re.compile(r"(?<!attempt)(?<!attempt_)(?<!attempt-)(?<!try)(?<!try_)(?<!version)(?<!version_)[0-9]+")


def capture(row: dict[str, Any]) -> str:
    """The capture a stored profile belongs to: its path with every number blanked, so the ranks of one
    capture share it and a before and an after (before/gemm.json, after/gemm.json) do not. A number that counts
    attempts (attempt_2, try3, version_4) is kept: attempt_2 and attempt_10 are two captures."""
    return _DIGITS.sub("#", str(row["path"]))


def point(row: dict[str, Any]) -> tuple[str, int]:
    """What tells two attempts apart in time: the capture time and the run that stored them."""
    return row.get("captured") or "", int(row["run"])


def attempt(row: dict[str, Any]) -> tuple[str, int, str, str]:
    """What tells two attempts apart: the point in time, the label, and the capture within the run. A run
    may store a before and an after of one name: a median over those would be a time no attempt took,
    so only the ranks or cores of one capture share an attempt."""
    return *point(row), row.get("label") or "", capture(row)


def point_label(row: dict[str, Any]) -> str:
    """How an attempt is named: its --label, else its capture time, else its run number."""
    return row.get("label") or row.get("captured") or f"run {int(row['run'])}"


def _labels(groups: list[list[dict[str, Any]]]) -> list[str]:
    """Each point's label; points that would share one (two captures of one run) also name their first path."""
    plain = [point_label(g[0]) for g in groups]
    return [f"{label} ({g[0]['path']})" if plain.count(label) > 1 else label for label, g in zip(plain, groups,
                                                                                                   strict=True)]


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


def points(rows: list[dict[str, Any]], rules_of: dict[str, tuple[str, ...]], captures: bool = False) -> list[Point]:
    """Attempt-ordered rows of one name grouped by point in time, in order; with `captures`, each capture of
    a point is its own (the history: every attempt with its own time, never a median of a before and an after)."""
    key = attempt if captures else point
    grouped: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for row in rows:
        grouped.setdefault(key(row), []).append(row)
    groups = list(grouped.values())
    out = []
    for label, group in zip(_labels(groups), groups, strict=True):
        times = [r["total_time"] for r in group if r.get("total_time") is not None]
        rules = sorted({rule for r in group for rule in rules_of.get(r["hash"], ())})
        out.append(Point(label, group[0].get("captured"), int(group[0]["run"]), tuple(group),
                         statistics.median(times) if times else None, tuple(rules)))
    return out
