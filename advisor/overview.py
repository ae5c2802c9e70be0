"""Several profiles of one input (cores of a file, ranks of a capture, kernels of a run): the chosen
analysis, carrying one overview row per profile with the columns the kind's report.yaml names. When the
profiles are members of one piece of work (the kind's `members:` block), the chosen one's rules run again
with the cross-member metrics (advisor/metrics/members.py), so a straggler is a finding like any other."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from advisor.core.model import Analysis, Finding, Hardware, HiddenFinding, Metric, OverviewColumn, ProfileOverview
from advisor.core.trace import text_fields
from advisor.engine.evaluate import Selection, evaluate
from advisor.kinds import get as get_kind
from advisor.metrics.members import member_metric_names, member_metrics, member_spec
from advisor.packs.model import RuleSet

# What --ignore hid, found by evaluating again without it (advisor.api._hidden): recomputed on the new metrics
Hidden = Callable[[RuleSet, dict[str, Metric], Hardware | None, Selection, Sequence[Finding], Mapping[str, str]],
                  tuple[HiddenFinding, ...]]


def _where(analysis: Analysis, fields: Sequence[str]) -> str | None:
    """`nd_idx 0, nc_idx 1`: the named fields the profile has, as text or numbers."""
    parts = []
    for name in fields:
        text = analysis.info.get(name)
        number = analysis.value(name)
        if text or number is not None:
            parts.append(f"{name} {text or f'{number:g}'}")
    return ", ".join(parts) or None


def _column(analysis: Analysis, spec: dict[str, Any]) -> OverviewColumn:
    """The first of the spec's metrics the analysis has a value for (a fallback chain)."""
    for name in spec["metrics"]:
        if analysis.value(name) is not None:
            return OverviewColumn(spec["title"], analysis.value(name), analysis.metrics[name].unit)
    first = analysis.metrics.get(spec["metrics"][0])
    return OverviewColumn(spec["title"], None, first.unit if first else "")


def overview_row(analysis: Analysis, name: str, analysed: bool) -> ProfileOverview:
    spec = get_kind(analysis.kind).data("report.yaml").get("overview") or {}
    estimated = [f for f in analysis.findings if f.global_speedup is not None]
    # a root cause's gain, which includes its symptoms' time; a symptom's only when no root cause has one
    causes = [f for f in estimated if f.root_cause] or estimated
    best = max(causes, key=lambda f: f.global_speedup or 0.0, default=None)
    return ProfileOverview(
        name=name, total_time=analysis.value("total_time"), where=_where(analysis, spec.get("where", {}).get(
            "fields", ())), columns=tuple(_column(analysis, c) for c in spec.get("columns", ())),
        analysed=analysed, findings=tuple(f.name for f in analysis.findings),
        root_causes=tuple(f.name for f in analysis.findings if f.root_cause),
        gain=best.estimated_speedup if best else None, gain_finding=best.name if best else "")


# What makes members' windows comparable (issue 34, class 8): the same device (vendor and name), the same job
# (world size) and the same number of steps. A CPU-only rank against a GPU rank, a rank of another job or a
# 1-step trace against a 6-step one differ for reasons no straggler explains; each field is compared only when
# some member has it (a kind whose profiles carry none of them is compared as before).
SAME_INFO = ("device_vendor", "device_name")
SAME_METRICS = ("world_size", "step_count")
WITHHELD = "comparable_members"  # the missing input a withheld straggler metric names
KEPT = ("member_count", "member_median_time")  # what the members are, not a judgement of one against them


def _differences(analyses: Sequence[Analysis], names: Sequence[str]) -> list[str]:
    """`device_name differs (rank 0 none, rank 1 Tesla V100)`: each field the members do not share."""
    found = []
    for field in (*SAME_INFO, *SAME_METRICS):
        values = _field_values(analyses, field)
        if any(v is not None for v in values) and len(set(values)) > 1:
            shown = ", ".join(f"{n} {'none' if v is None else v if isinstance(v, str) else f'{v:g}'}"
                              for n, v in zip(names, values, strict=True))
            found.append(f"{field} differs ({shown})")
    return found


def _field_values(analyses: Sequence[Analysis], field: str) -> list[str | float | None]:
    """A compared field of each member: a device field from its info (empty is none), else a metric's value."""
    if field in SAME_INFO:
        return [a.info.get(field) or None for a in analyses]
    return [a.value(field) for a in analyses]


def _withheld(added: dict[str, Metric], differences: Sequence[str]) -> dict[str, Metric]:
    """The straggler metrics unavailable: no straggler or imbalance is judged across members that differ."""
    why = "; ".join(differences)
    return {n: m if n in KEPT else replace(
        m, value=None, missing=(WITHHELD,),
        description=f"{m.description} Withheld: the members are not comparable ({why}).") for n, m in added.items()}


def with_members(analyses: Sequence[Analysis], chosen: int, ruleset: RuleSet, selection: Selection | None = None,
                 hidden: Hidden | None = None, names: Sequence[str] | None = None) -> Analysis:
    """The chosen analysis with its cross-member metrics, its rules evaluated again with them; as it was when
    the kind's profiles are not members of one piece of work. Members that differ in device, world size or
    step count get a note saying so and no straggler metrics (their rules are not applicable)."""
    analysis = analyses[chosen]
    spec = member_spec(analysis.kind)
    if spec is None:
        return analysis
    added = member_metrics([a.metrics for a in analyses], chosen, spec, ruleset.inputs)
    differences = _differences(analyses, names or [f"profile {i}" for i in range(len(analyses))])
    notes = analysis.notes
    if differences:
        added = _withheld(added, differences)
        notes = (*notes, f"The {len(analyses)} members of this input are not comparable: "
                 + "; ".join(differences) + ". Their windows differ for reasons no straggler explains, so no "
                 "straggler or rank imbalance is judged across them (" + ", ".join(
                     n for n in member_metric_names(spec) if n not in KEPT) + " withheld); analyse "
                 "each on its own, or compare ranks of one job, on one device type, over the same steps.")
    metrics = dict(sorted({**analysis.metrics, **added}.items()))
    selection = selection or Selection()
    texts = text_fields(analysis.info, analysis.trace)
    result = evaluate(ruleset, metrics, analysis.hardware, selection, texts)
    settings = analysis.settings
    if settings is not None and hidden is not None:
        settings = replace(settings, hidden=hidden(ruleset, metrics, analysis.hardware, selection, result.findings,
                                                     texts))
    return replace(analysis, metrics=metrics, findings=result.findings, not_applicable=result.not_applicable,
                   outcomes=result.outcomes, settings=settings, bounds=result.bounds, notes=notes)


def with_overview(analyses: Sequence[Analysis], names: Sequence[str], chosen: int, ruleset: RuleSet | None = None,
                  selection: Selection | None = None, hidden: Hidden | None = None) -> Analysis:
    """The chosen analysis, carrying an overview of all of them; with the rule set, also its cross-member
    findings (the overview's row of it shows them)."""
    analyses = list(analyses)
    if ruleset is not None and len(analyses) > 1:
        analyses[chosen] = with_members(analyses, chosen, ruleset, selection, hidden, names)
    rows = tuple(overview_row(a, n, i == chosen) for i, (a, n) in enumerate(zip(analyses, names, strict=True)))
    return replace(analyses[chosen], entries=rows)
