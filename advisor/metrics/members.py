"""Cross-member metrics: the profiles of one input (the cores of one file, a folder of rank files) are
members of one piece of work, so the chosen member is measured against the others. Data-parallel members
wait for the slowest at every collective, which makes a straggler a finding, and the metric the slowest
spends more time in than the others' median is where its excess comes from.

Which metrics are possible causes is the kind's knowledge: the `members:` block of its report.yaml. A
kind without one (Nsight Compute: the launches of a run are different kernels, not members of one step)
gets no member metrics. Every metric is computed for the chosen member only; with one profile none
exists, so the rules that read them are not applicable."""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from advisor.core.model import Metric
from advisor.kinds import get as get_kind
from advisor.packs.model import InputDef

TIME = "total_time"
COMMON = ("member_count", "member_median_time", "straggler_excess_time", "straggler_excess_percent")


@dataclass(frozen=True)
class MemberSpec:
    """A kind's `members:` block: the metrics (seconds) whose excess over the others' median can explain a
    straggler, each measured as `straggler_<metric>_excess`."""

    causes: tuple[str, ...] = ()


def member_spec(kind: str) -> MemberSpec | None:
    """The kind's member block, or None when its profiles are not members of one piece of work."""
    block = get_kind(kind).data("report.yaml").get("members")
    if not isinstance(block, dict):
        return None
    return MemberSpec(causes=tuple(str(c) for c in block.get("causes") or ()))


def excess_name(metric: str) -> str:
    return f"straggler_{metric}_excess"


def member_metric_names(spec: MemberSpec) -> tuple[str, ...]:
    """Every metric the stage measures for a kind with this block (the names its pack declares as inputs)."""
    return (*COMMON, *(excess_name(c) for c in spec.causes))


def _median(values: Sequence[float | None]) -> float | None:
    """The median of the known values; unavailable (None) when none is known, never 0."""
    known = [v for v in values if v is not None]
    return statistics.median(known) if known else None


def _unit(members: Sequence[Mapping[str, Metric]], name: str, fallback: str) -> str:
    return next((m[name].unit for m in members if name in m and m[name].unit), fallback)


def _metric(name: str, value: float | None, unit: str, formula: str, inputs: tuple[str, ...],
            declared: Mapping[str, InputDef], description: str, missing: tuple[str, ...] = ()) -> Metric:
    """A member metric, described and directed as the pack declares it (its inputs.yaml)."""
    known = declared.get(name)
    return Metric(name=name, value=value, unit=known.unit if known and known.unit else unit, source="derived",
                  description=known.description if known else description, formula=formula, inputs=inputs,
                  missing=missing if value is None else (), better=known.better if known else None)


def _excess(members: Sequence[Mapping[str, Metric]], chosen: int, name: str, declared: Mapping[str, InputDef],
            called: str) -> Metric:
    """The chosen member's `name` minus the median of the others' (seconds): positive when it spends longer."""
    values = [m[name].value if name in m else None for m in members]
    others = _median([v for i, v in enumerate(values) if i != chosen])
    mine = values[chosen]
    value = mine - others if mine is not None and others is not None else None
    return _metric(called, value, _unit(members, name, "s"),
                   f"{name} − median({name} of the other members)", (name,), declared,
                   f"This profile's {name} minus the median of the other profiles' of the same input.",
                   missing=(name,))


def member_metrics(members: Sequence[Mapping[str, Metric]], chosen: int, spec: MemberSpec,
                   declared: Mapping[str, InputDef] | None = None) -> dict[str, Metric]:
    """The chosen member's cross-member metrics, from every member's metrics. `declared`: the packs' inputs,
    which give each metric's unit and description; a metric no pack declares is still measured."""
    declared = declared or {}
    time_unit = _unit(members, TIME, "s")
    excess = _excess(members, chosen, TIME, declared, "straggler_excess_time")
    total = members[chosen][TIME].value if TIME in members[chosen] else None
    share = excess.value / total if excess.value is not None and total else None
    out = {
        "member_count": _metric("member_count", float(len(members)), "count", "count(members of the input)", (),
                                declared, "Profiles of the input compared (cores of one file, ranks of a folder)."),
        "member_median_time": _metric(
            "member_median_time", _median([m[TIME].value if TIME in m else None for m in members]), time_unit,
            f"median({TIME} of every member)", (TIME,), declared, "Median total time of the input's profiles.",
            missing=(TIME,)),
        "straggler_excess_time": excess,
        "straggler_excess_percent": _metric(
            "straggler_excess_percent", share, "fraction", "straggler_excess_time / total_time",
            ("straggler_excess_time", TIME), declared,
            "The excess over this profile's own total time: what it gives back by matching the others' median.",
            missing=tuple(n for n, v in (("straggler_excess_time", excess.value), (TIME, total)) if v is None)),
    }
    for cause in spec.causes:
        out[excess_name(cause)] = _excess(members, chosen, cause, declared, excess_name(cause))
    return out


__all__ = ["MemberSpec", "excess_name", "member_metric_names", "member_metrics", "member_spec"]
