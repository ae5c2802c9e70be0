"""What a comparison of analyses produces: metric and finding changes, each side, a series of attempts."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from advisor.core.model import Finding, SourceInfo

# The start of the warning that each step did different work (another model, other shapes): compare claims no
# speedup, not even per step, and the regression gate cannot judge one (issue 36).
STEP_WORK_WARNING = "Different work per step"


@dataclass(frozen=True)
class MetricChange:
    """One metric before and after, judged by its direction of goodness."""

    name: str
    unit: str
    group: str
    before: float | None
    after: float | None
    change: float | None  # relative: (after - before) / before
    verdict: str  # better | worse | unchanged | n/a
    better: str | None = None


@dataclass(frozen=True)
class FindingChange:
    name: str
    title: str
    severity: str
    status: str  # fixed | new | persisting | not comparable (the other side did not evaluate the rule)
    before: Finding | None
    after: Finding | None


@dataclass(frozen=True)
class Side:
    """One of the compared analyses, as the comparison needs it."""

    label: str
    source: SourceInfo
    info: Mapping[str, str]
    hardware: str | None
    packs: Mapping[str, str]
    advisor_version: str
    kind: str = field(kw_only=True)


@dataclass(frozen=True)
class EntryChange:
    """One profile of a multi-profile input (a kernel of a run) matched across before and after by
    its name and where it ran (for kernels: function name and launch shape), or found on one side only."""

    name: str
    where: str | None
    before: float | None  # total_time
    after: float | None
    speedup: float | None


@dataclass(frozen=True)
class RowChange:
    """One row of a kind's breakdown (a layer, a device) matched by key across before and after."""

    key: str
    before: float | None  # None: unavailable, or the row is on one side only
    after: float | None
    change: float | None  # relative: (after - before) / before
    verdict: str  # better | worse | unchanged | only before | only after | n/a


@dataclass(frozen=True)
class BreakdownChange:
    """One column of a breakdown (per-layer time) compared row by row, as the kind's compare.yaml asks."""

    name: str  # the breakdown: layers, devices
    title: str
    key_title: str
    column: str  # the column's title
    unit: str
    rows: tuple[RowChange, ...]  # largest on either side first


@dataclass(frozen=True)
class Comparison:
    before: Side
    after: Side
    speedup: float | None  # before / after of the headline time (`speedup_of`)
    noise: float  # relative changes within it are "unchanged"
    metrics: Mapping[str, MetricChange]
    findings: tuple[FindingChange, ...]
    root_cause_before: tuple[str, ...]
    root_cause_after: tuple[str, ...]
    warnings: tuple[str, ...]
    entries: tuple[EntryChange, ...] = ()  # every profile of both inputs, matched (kernels of two runs)
    breakdowns: tuple[BreakdownChange, ...] = ()  # the kind's tables compared row by row (per-layer deltas)
    speedup_of: str = "total_time"  # the metric the speedup is a ratio of (compare.yaml `headline:`)
    speedup_title: str = "Total time"


@dataclass(frozen=True)
class Series:
    """Several attempts in order: each consecutive pair, and first against last."""

    sides: tuple[Side, ...]
    total_times: tuple[float | None, ...]
    steps: tuple[Comparison, ...]
    overall: Comparison
