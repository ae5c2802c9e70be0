"""The store's tables -> FleetSummary: counts per kind, root causes by recoverable time and frequency,
top offenders, distributions, outliers, failures and trends. Pure functions over the DataFrames of
`Store.profiles()` and `Store.findings()`; thresholds and row counts come from advisor/data/fleet.yaml."""

from __future__ import annotations

import bisect
import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from advisor.comparing.diff import judge
from advisor.core.resources import load_yaml_resource
from advisor.fleet.attempts import order, point_label, points, records
from advisor.fleet.capture import same_captures
from advisor.fleet.store import PROFILE_COLUMNS

if TYPE_CHECKING:
    import pandas as pd

# Every profile column the store does not list as fixed is a kind's headline metric.
FIXED_COLUMNS = frozenset(name for name, _ in PROFILE_COLUMNS)
MAD_TO_SIGMA = 1.4826  # MAD of normal data × this = its standard deviation (the modified z-score)
MEAN_AD_TO_SIGMA = 1.253314  # the same for the mean absolute deviation, used when over half the values tie
UNKNOWN_KIND = "unknown"


def limits() -> dict[str, Any]:
    return load_yaml_resource("data/fleet.yaml")


@dataclass(frozen=True)
class KindCount:
    kind: str
    profiles: int
    ok: int
    failed: int
    total_time: float | None  # summed over its analysed profiles, seconds


@dataclass(frozen=True)
class RootCause:
    rule: str
    kind: str
    title: str
    recoverable_time: float | None  # its part of each profile's recoverable time, over those it is a root cause of
    profiles: int
    share: float | None  # of the kind's analysed profiles, 0..1
    frequency_rank: int  # 1 = fires on the most profiles; ties share a rank
    unexplained: bool = False  # its time has no identified cause (fleet.yaml `unexplained:`): ranked last


@dataclass(frozen=True)
class Offender:
    name: str
    kind: str
    device: str | None
    path: str
    hash: str
    attempt: str  # --label, capture time or run: which attempt of the name this is
    total_time: float | None
    recoverable_time: float
    gain: float | None
    finding: str | None  # the root cause with the largest global estimate (a symptom's when no root cause has one)
    analysis: str  # the stored analysis JSON
    causes: tuple[str, ...] = ()  # the profile's root causes, in its report's order; no identified cause last

    @property
    def symptom(self) -> str | None:
        """The largest estimate's finding when it is no root cause: listed after them (root causes first)."""
        return self.finding if self.finding and self.finding not in self.causes else None

    @property
    def behind(self) -> tuple[str, ...]:
        """What is behind its recoverable time: root causes before the symptom."""
        return (*self.causes, *([self.symptom] if self.symptom else []))


@dataclass(frozen=True)
class Distribution:
    kind: str
    metric: str
    unit: str
    count: int
    minimum: float
    median: float
    maximum: float
    edges: tuple[float, ...]  # bin edges in the metric's unit, len(counts) + 1
    counts: tuple[int, ...]
    log: bool  # log-spaced bins


@dataclass(frozen=True)
class Outlier:
    kind: str
    name: str
    path: str
    hash: str
    metric: str
    unit: str
    value: float
    median: float
    z: float  # robust z: (value - median) / (1.4826 · MAD)
    group: str  # "name": among the same kind and name; "kind": among the kind's profiles
    group_size: int


@dataclass(frozen=True)
class Failure:
    path: str
    message: str


@dataclass(frozen=True)
class Trend:
    kind: str
    name: str
    attempts: int  # points in time
    profiles: int  # profiles over all of them (ranks, cores, GPUs of each run)
    first: str  # the first point's label (--label, capture time or run)
    last: str
    first_time: float | None  # seconds: the median over the point's profiles
    last_time: float | None
    change: float | None  # relative, first -> last
    verdict: str  # "better" | "worse" | "unchanged" | "n/a", with the noise floor
    step_change: float | None  # previous -> last
    step_verdict: str
    new: tuple[str, ...]  # findings of the last attempt not in the previous one
    fixed: tuple[str, ...]

    @property
    def regression(self) -> bool:
        return "worse" in (self.verdict, self.step_verdict)


@dataclass(frozen=True)
class FleetSummary:
    store: str
    profiles: int
    ok: int
    failed: int
    runs: tuple[int, ...]
    labels: tuple[str, ...]
    noise: float
    kinds: tuple[KindCount, ...] = ()
    root_causes: tuple[RootCause, ...] = ()
    root_causes_total: int = 0
    offenders: tuple[Offender, ...] = ()
    near_bound: int = 0  # analysed profiles left out of the offenders: every estimate under the limit below
    near_bound_limit: float = 0.0  # a share of the profile's time
    distributions: tuple[Distribution, ...] = ()
    outliers: tuple[Outlier, ...] = ()
    outliers_total: int = 0
    outlier_threshold: float = 0.0
    failures: tuple[Failure, ...] = ()
    trends: tuple[Trend, ...] = ()
    trends_total: int = 0
    regressions: int = 0
    headline: tuple[str, ...] = field(default=())  # the kinds' headline metric columns found in the store
    same_capture: int = 0  # analysed profiles left out of every count: another format of a capture counted


def _number(value: Any) -> float | None:
    return float(value) if value is not None and math.isfinite(float(value)) else None


def _sum(values: Sequence[float | None]) -> float | None:
    """Sum of the known values; unavailable (None) when none is known, never 0."""
    known = [v for v in values if v is not None]
    return math.fsum(known) if known else None


def kind_counts(rows: list[dict[str, Any]]) -> tuple[KindCount, ...]:
    kinds = sorted({r["kind"] or UNKNOWN_KIND for r in rows})
    out = []
    for kind in kinds:
        mine = [r for r in rows if (r["kind"] or UNKNOWN_KIND) == kind]
        ok = [r for r in mine if r["status"] == "ok"]
        out.append(KindCount(kind, len(mine), len(ok), len(mine) - len(ok),
                             _sum([_number(r["total_time"]) for r in ok])))
    return tuple(out)


def root_causes(findings: list[dict[str, Any]], counts: tuple[KindCount, ...],
                unexplained: frozenset[str] = frozenset()) -> tuple[RootCause, ...]:
    """Root-cause findings per (kind, rule): recoverable time summed (each profile's part, as the store gives
    it), the profiles it fires on, ranked by recoverable time then by frequency; the rules in `unexplained`
    ("kind/rule": time with no identified cause) after every other."""
    ok_per_kind = {c.kind: c.ok for c in counts}
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for f in findings:
        if f["root_cause"]:
            groups.setdefault((f["kind"] or UNKNOWN_KIND, f["rule"]), []).append(f)
    fired = {key: len({f["hash"] for f in group}) for key, group in groups.items()}
    out = []
    for (kind, rule), group in groups.items():
        profiles = fired[kind, rule]
        share = profiles / ok_per_kind[kind] if ok_per_kind.get(kind) else None
        rank = 1 + sum(1 for n in fired.values() if n > profiles)  # competition ranking: 1, 1, 3
        out.append(RootCause(rule, kind, min(f["title"] or "" for f in group),
                             _sum([_number(f["recoverable_time"]) for f in group]), profiles, share, rank,
                             f"{kind}/{rule}" in unexplained))
    return tuple(sorted(out, key=lambda c: (c.unexplained, c.recoverable_time is None, -(c.recoverable_time or 0.0),
                                            -c.profiles, c.kind, c.rule)))


def unexplained_rules(config: dict[str, Any]) -> frozenset[str]:
    """fleet.yaml's rules whose time has no identified cause, as "kind/rule"."""
    return frozenset(config["root_causes"].get("unexplained") or ())


def near_bound(row: dict[str, Any], limit: float) -> bool:
    """Its own report says it is near its bound: it has estimates and together they are under `limit`."""
    gain = _number(row["gain"])
    return gain is not None and gain < limit


def _causes(row: dict[str, Any], unexplained: frozenset[str]) -> tuple[str, ...]:
    """The row's root causes in its report's order, those with no identified cause last."""
    causes = [c for c in (row["root_causes"] or "").split(",") if c]
    kind = row["kind"] or UNKNOWN_KIND
    return tuple(sorted(causes, key=lambda c: f"{kind}/{c}" in unexplained))  # stable


def offenders(rows: list[dict[str, Any]], top: int, analysis_path: Callable[[str], Path],
              near: float = 0.0, unexplained: frozenset[str] = frozenset()) -> tuple[Offender, ...]:
    """The analysed profiles with the most recoverable time (none when no estimate is known), leaving out those
    near their bound (all their findings together under `near`): a large profile's few percent is no target."""
    known = [r for r in rows if r["status"] == "ok" and (_number(r["recoverable_time"]) or 0.0) > 0
             and not near_bound(r, near)]
    known.sort(key=lambda r: (-r["recoverable_time"], r["name"], r["path"], r["hash"]))
    return tuple(Offender(r["name"], r["kind"] or UNKNOWN_KIND, r["device"], r["path"], r["hash"], point_label(r),
                          _number(r["total_time"]), float(r["recoverable_time"]), _number(r["gain"]),
                          r["gain_finding"], str(analysis_path(r["hash"])), _causes(r, unexplained))
                 for r in known[:max(top, 0)])


def histogram(values: Sequence[float], max_bins: int, log_span: float) -> tuple[tuple[float, ...], tuple[int, ...],
                                                                                   bool]:
    """Bin edges, counts and whether the bins are log-spaced (a span of more than `log_span`×).
    Sturges' bin count, capped; one bin around a value when all values are equal."""
    lo, hi = min(values), max(values)
    bins = max(1, min(max_bins, math.ceil(math.log2(len(values))) + 1))
    log = lo > 0 and hi / lo > log_span
    if hi == lo:
        pad = abs(lo) * 0.05 or 0.5
        return (lo - pad, hi + pad), (len(values),), False
    if log:
        edges = [lo * (hi / lo) ** (i / bins) for i in range(bins + 1)]
    else:
        edges = [lo + (hi - lo) * i / bins for i in range(bins + 1)]
    edges[0], edges[-1] = lo, hi
    counts = [0] * bins
    for v in values:
        counts[min(bisect.bisect_right(edges, v) - 1, bins - 1)] += 1
    return tuple(edges), tuple(counts), log


def _distribution(kind: str, metric: str, unit: str, values: list[float], config: dict[str, Any]
                  ) -> Distribution | None:
    if len(values) < config["min_values"]:
        return None
    edges, counts, log = histogram(values, config["max_bins"], config["log_span"])
    return Distribution(kind, metric, unit, len(values), min(values), statistics.median(values), max(values), edges,
                        counts, log)


def headline_columns(frame: pd.DataFrame) -> tuple[str, ...]:
    """The kinds' headline metric columns: every numeric column outside the contract's fixed ones."""
    return tuple(sorted(c for c in frame.columns if c not in FIXED_COLUMNS and frame[c].dtype.kind == "f"))


def distributions(rows: list[dict[str, Any]], metrics: Sequence[str], units: dict[str, str],
                  config: dict[str, Any]) -> tuple[Distribution, ...]:
    """Per kind: total time, then each headline metric with enough known values."""
    out = []
    for kind in sorted({r["kind"] for r in rows if r["status"] == "ok" and r["kind"]}):
        mine = [r for r in rows if r["status"] == "ok" and r["kind"] == kind]
        for metric in ("total_time", *metrics):
            values = sorted(v for r in mine if (v := _number(r.get(metric))) is not None)
            found = _distribution(kind, metric, units.get(metric, "s" if metric == "total_time" else ""), values,
                                  config)
            if found:
                out.append(found)
    return tuple(out)


def robust_z(values: Sequence[float]) -> tuple[float, list[float]] | None:
    """The median and each value's robust z; None when the values do not spread (all equal)."""
    median = statistics.median(values)
    deviations = [abs(v - median) for v in values]
    mad = statistics.median(deviations)
    scale = MAD_TO_SIGMA * mad if mad > 0 else MEAN_AD_TO_SIGMA * statistics.fmean(deviations)
    if scale <= 0:
        return None
    return median, [(v - median) / scale for v in values]


def outliers(rows: list[dict[str, Any]], metrics: Sequence[str], units: dict[str, str],
             config: dict[str, Any]) -> list[Outlier]:
    """Total time within each (kind, name) and headline metrics within each kind, groups of at least
    `min_group` profiles; |z| above the threshold, the most extreme first."""
    ok = [r for r in rows if r["status"] == "ok" and r["kind"]]
    groups: list[tuple[str, str, str, list[dict[str, Any]]]] = []
    by_name: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in ok:
        by_name.setdefault((r["kind"], r["name"]), []).append(r)
    groups += [("name", "total_time", kind, members) for (kind, _), members in sorted(by_name.items())]
    for kind in sorted({r["kind"] for r in ok}):
        groups += [("kind", metric, kind, [r for r in ok if r["kind"] == kind]) for metric in metrics]
    out = []
    for scope, metric, kind, members in groups:
        known = [(r, v) for r in members if (v := _number(r.get(metric))) is not None]
        if len(known) < config["min_group"]:
            continue
        spread = robust_z([v for _, v in known])
        if spread is None:
            continue
        median, zs = spread
        out += [Outlier(kind, r["name"], r["path"], r["hash"], metric, units.get(metric, ""), v, median, z, scope,
                        len(known)) for (r, v), z in zip(known, zs, strict=True) if abs(z) > config["threshold"]]
    return sorted(out, key=lambda o: (-abs(o.z), o.kind, o.name, o.metric, o.path, o.hash))


def failures(rows: list[dict[str, Any]]) -> tuple[Failure, ...]:
    return tuple(sorted((Failure(r["path"], r["error"] or "unknown error") for r in rows if r["status"] != "ok"),
                        key=lambda f: (f.path, f.message)))


def trends(rows: list[dict[str, Any]], rules_of: dict[str, tuple[str, ...]], noise: float) -> list[Trend]:
    """Each (kind, name) stored at two or more points in time (capture times or runs): total time first
    -> last and previous -> last under the noise floor, and the findings of the last step; regressions first.
    A point's time is the median over its profiles (the ranks or cores of one run), so a trend compares
    runs, not one rank of the first with another rank of the last. Grouped in plain Python: a fleet has
    nearly as many names as profiles, and a pandas group costs milliseconds."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for row in rows:
        if row["status"] == "ok":
            groups.setdefault((row["kind"], row["name"]), []).append(row)
    out = []
    for (kind, name), group in sorted(groups.items()):
        steps = points(sorted(group, key=order), rules_of)
        if len(steps) < 2:
            continue
        first, previous, last = steps[0], steps[-2], steps[-1]
        change, verdict = judge(first.total_time, last.total_time, "lower", noise)
        step_change, step_verdict = judge(previous.total_time, last.total_time, "lower", noise)
        before, after = set(previous.rules), set(last.rules)
        out.append(Trend(kind, name, len(steps), len(group), first.label, last.label, first.total_time,
                         last.total_time, change, verdict, step_change, step_verdict, tuple(sorted(after - before)),
                         tuple(sorted(before - after))))
    return sorted(out, key=lambda t: (not t.regression, t.kind, t.name))


def rules_by_hash(findings: list[dict[str, Any]]) -> dict[str, tuple[str, ...]]:
    rules: dict[str, set[str]] = {}
    for finding in findings:
        rules.setdefault(finding["hash"], set()).add(finding["rule"])
    return {h: tuple(sorted(r)) for h, r in rules.items()}


def summarize(profiles: pd.DataFrame, findings: pd.DataFrame, units: dict[str, str], store: str,
              analysis_path: Callable[[str], Path], noise: float = 0.02, top: int = 10,
              config: dict[str, Any] | None = None,
              renamed: Callable[[str, str], str] | None = None) -> FleetSummary:
    """`renamed(kind, rule)`: a rule's current name, so history across a rename (an alias) is one rule."""
    config = config or limits()
    rows = records(profiles)
    same = same_captures(rows)  # another format of a capture counted: left out of everything below
    rows = [r for r in rows if r["hash"] not in same]
    found = [f for f in records(findings) if f["hash"] not in same]
    if renamed is not None:
        found = [{**f, "rule": renamed(f["kind"] or UNKNOWN_KIND, f["rule"])} for f in found]
    metrics = headline_columns(profiles)
    counts = kind_counts(rows)
    unexplained = unexplained_rules(config)
    causes = root_causes(found, counts, unexplained)
    spotted = outliers(rows, metrics, units, config["outliers"])
    failed = failures(rows)
    moving = trends(rows, rules_by_hash(found), noise)
    ok = sum(c.ok for c in counts)
    near = float(config["offenders"]["near_bound"])
    return FleetSummary(
        store=store, profiles=len(rows), ok=ok, failed=len(rows) - ok,
        runs=tuple(sorted({int(r["run"]) for r in rows})),
        labels=tuple(sorted({r["label"] for r in rows if r["label"]})),
        noise=noise, kinds=counts, root_causes=causes[:config["root_causes"]["rows"]],
        root_causes_total=len(causes), offenders=offenders(rows, top, analysis_path, near, unexplained),
        near_bound=sum(r["status"] == "ok" and near_bound(r, near) for r in rows), near_bound_limit=near,
        distributions=distributions(rows, metrics, units, config["distributions"]),
        outliers=tuple(spotted[:config["outliers"]["rows"]]), outliers_total=len(spotted),
        outlier_threshold=float(config["outliers"]["threshold"]), failures=failed[:config["failures"]["rows"]],
        trends=tuple(moving[:config["trends"]["rows"]]), trends_total=len(moving),
        regressions=sum(t.regression for t in moving), headline=metrics, same_capture=len(same))
