"""Analysis × Analysis -> Comparison: what changed between attempts, metric by metric and rule by
rule, and whether the two are comparable at all."""

from __future__ import annotations

import fnmatch
import math
from collections.abc import Callable, Sequence
from typing import Any

from advisor.core import units as fmt
from advisor.core.comparison import (
    STEP_WORK_WARNING,  # re-exported: the report reads it here
    BreakdownChange,
    Comparison,
    EntryChange,
    FindingChange,
    MetricChange,
    RowChange,
    Series,
    Side,
)
from advisor.core.errors import AdvisorError
from advisor.core.model import Analysis, ProfileOverview
from advisor.core.numbers import COMPARE_NOISE
from advisor.kinds import get as get_kind

DEFAULT_NOISE = COMPARE_NOISE


def compare_table(kind: str) -> dict[str, Any]:
    """The kind's compare.yaml: metric groups, metrics always shown, charts, comparability fields."""
    return get_kind(kind).data("compare.yaml")


def group_of(name: str, table: dict[str, Any]) -> str | None:
    for group in table.get("groups", ()):
        if any(fnmatch.fnmatchcase(name, pattern) for pattern in group["metrics"]):
            return group["name"]
    return None


def side(analysis: Analysis, label: str) -> Side:
    return Side(label=label, source=analysis.source, info=dict(analysis.info),
                hardware=analysis.hardware.name if analysis.hardware else None, packs=dict(analysis.packs),
                advisor_version=analysis.advisor_version, kind=analysis.kind)


def judge(a: float | None, b: float | None, better: str | None, noise: float) -> tuple[float | None, str]:
    """The relative change from a to b and its verdict under the noise floor and direction of goodness."""
    if a is None or b is None:
        return None, "n/a"
    change = 0.0 if a == b else None if a == 0 else (b - a) / abs(a)
    if change is not None and abs(change) <= noise:
        return change, "unchanged"
    if better is None:
        return change, "n/a"
    return change, "better" if (b > a) == (better == "higher") else "worse"


def _change(name: str, before: Analysis, after: Analysis, noise: float, group: str) -> MetricChange:
    old, new = before.metrics.get(name), after.metrics.get(name)
    metric = new or old
    assert metric is not None
    better = (new.better if new else None) or (old.better if old else None)
    a, b = (old.value if old else None), (new.value if new else None)
    change, verdict = judge(a, b, better, noise)
    return MetricChange(name, metric.unit, group, a, b, change, verdict, better)


def _breakdowns(before: Analysis, after: Analysis, table: dict[str, Any], noise: float) -> tuple[BreakdownChange, ...]:
    """The kind's breakdowns (compare.yaml `breakdowns:`) compared row by row: rows matched by key, a
    row on one side only marked so (a layer the fusion removed, a new one)."""
    out = []
    for spec in table.get("breakdowns", ()):
        old = before.trace.breakdown(spec["name"]) if before.trace else None
        new = after.trace.breakdown(spec["name"]) if after.trace else None
        if old is None or new is None:
            continue
        i, j = old.column(spec["column"]), new.column(spec["column"])
        a_rows = {key: values[i] for key, values in old.rows}
        b_rows = {key: values[j] for key, values in new.rows}
        rows = []
        for key in [*a_rows, *(k for k in b_rows if k not in a_rows)]:
            a, b = a_rows.get(key), b_rows.get(key)
            change, verdict = judge(a, b, spec.get("better"), noise)
            if key not in b_rows or key not in a_rows:  # absent, or beyond the rows a long table kept
                missing = new if key not in b_rows else old
                cut = missing.total_rows is not None and missing.total_rows > len(missing.rows)
                verdict = f"not in the top {len(missing.rows)}" if cut else (
                    "only before" if key not in b_rows else "only after")
            rows.append(RowChange(key, a, b, change, verdict))
        rows.sort(key=lambda r: -max(r.before or 0.0, r.after or 0.0))
        out.append(BreakdownChange(spec["name"], new.title, new.key_title, new.columns[j].title, new.columns[j].unit,
                                   tuple(rows[:spec.get("top", 20)])))
    return tuple(out)


# The start of the warning that the two sides did different work; the report labels the speedup by it.
WORK_WARNING = "Different amounts of work"


def work_changes(before: Analysis, after: Analysis, table: dict[str, Any], noise: float) -> list[str]:
    """The work metrics (compare.yaml `work:`: the problem's size, which an optimisation does not change)
    that differ beyond the noise floor, each as `name a → b`. A side where a metric is unavailable or 0
    says nothing: 0 FP32 FLOPs after a move to the tensor cores is work measured elsewhere, not less work."""
    out = []
    for name in table.get("work", ()):
        old, new = before.metrics.get(name), after.metrics.get(name)
        a, b = (old.value if old else None), (new.value if new else None)
        if not a or not b or not math.isfinite(a) or not math.isfinite(b):
            continue
        change, _ = judge(a, b, None, noise)
        if change is not None and abs(change) > noise:
            unit = (new or old).unit  # type: ignore[union-attr]
            out.append(f"{name} {fmt.value(a, unit)} → {fmt.value(b, unit)} ({change * 100:+.1f} %)")
    return out


def _work_warning(before: Analysis, after: Analysis, table: dict[str, Any], noise: float) -> list[str]:
    changes = work_changes(before, after, table, noise)
    return [f"{WORK_WARNING}: {'; '.join(changes)}. The time difference is not like-for-like: it is not a speedup "
            "or slowdown of the same work."] if changes else []


def _per_step(analysis: Analysis, name: str, steps: str) -> float | None:
    value, count = analysis.value(name), analysis.value(steps)
    if not value or not count or not math.isfinite(value) or not math.isfinite(count) or count <= 0:
        return None  # unavailable, or 0 (the count's operators ran elsewhere): says nothing
    return value / count


def _step_work_warning(before: Analysis, after: Analysis, table: dict[str, Any]) -> list[str]:
    """compare.yaml `work_per_step`: metrics of the work one step does (matmul FLOPs from recorded shapes), which
    differ beyond `tolerance` only when the steps ran another model or other shapes (issue 36: two models read
    "10.7× faster per step"). The tolerance leaves room for a compilation that moves some operators out of the
    ones the count reads."""
    spec = table.get("work_per_step") or {}
    steps, tolerance = str(spec.get("steps", "")), float(spec.get("tolerance", 0.25))
    changes = []
    for name in spec.get("metrics", ()):
        a, b = _per_step(before, name, steps), _per_step(after, name, steps)
        if a is None or b is None or abs(b / a - 1) <= tolerance:
            continue
        unit = (after.metrics.get(name) or before.metrics[name]).unit
        changes.append(f"{name} per step {fmt.value(a, unit)} → {fmt.value(b, unit)} ({(b / a - 1) * 100:+.1f} %)")
    return [f"{STEP_WORK_WARNING}: {'; '.join(changes)}, more than the {fmt.percent(tolerance)} a compilation or "
            "fusion could move. The steps ran different work (another model or other shapes), so neither the "
            "window's nor a step's time is a speedup of the same work."] if changes else []


def identity(analysis: Analysis, key: str) -> str | None:
    """A comparability field (compare.yaml `comparability:`) as shown: the analysis's text field, else its metric
    of that name with its unit (a world size or a device count is a number, not text); None when neither exists."""
    if key in analysis.info:
        return analysis.info[key]
    metric = analysis.metrics.get(key)
    return fmt.value(metric.value, metric.unit) if metric is not None and metric.value is not None else None


def _warnings(before: Analysis, after: Analysis) -> list[str]:
    out = []
    old_hw, new_hw = (a.hardware.name if a.hardware else None for a in (before, after))
    if old_hw != new_hw:
        out.append(f"Different hardware: {old_hw or 'unknown'} → {new_hw or 'unknown'}; peaks, "
                   "ridge points and utilisation percentages are not comparable.")
    for key, what in compare_table(after.kind).get("comparability", ()):
        a, b = identity(before, key), identity(after, key)
        if a != b:
            out.append(f"Different {what}: {a or 'unknown'} → {b or 'unknown'}.")
    for pack in sorted(set(before.packs) | set(after.packs)):
        a, b = before.packs.get(pack), after.packs.get(pack)
        if a != b:
            out.append(f"Rule pack {pack}: {a or 'not loaded'} → {b or 'not loaded'}; findings may differ because "
                       "the rules did.")
    return out


def _settings_warnings(before: Analysis, after: Analysis, labels: tuple[str, str]) -> list[str]:
    """Two sides analysed with different rule settings (--select, --ignore, --set, --hardware): their
    findings differ because the rules did. Unknown settings (an analysis saved before they were recorded)
    are said once, as unknown."""
    a, b = before.settings, after.settings
    if a is None or b is None:
        unknown = [label for label, s in zip(labels, (a, b), strict=True) if s is None]
        return [f"Settings unknown for {' and '.join(unknown)} (saved before advisor recorded them): the two "
                "sides may have run with different --select, --ignore or --set."] if unknown else []
    out = []
    for what, old, new in (("--select", a.select, b.select), ("--ignore", a.ignore, b.ignore),
                           ("--set", _params(a.params), _params(b.params)), ("--hardware", a.hardware, b.hardware)):
        if old != new:
            out.append(f"Different {what}: {_shown(old)} ({labels[0]}) → {_shown(new)} ({labels[1]}); findings may "
                       "differ because the settings did.")
    return out


def _params(params: Any) -> tuple[str, ...]:
    return tuple(f"{k}={v:g}" for k, v in sorted(params.items()))


def _shown(value: Any) -> str:
    if isinstance(value, tuple):
        return ", ".join(value) or "none"
    return value or "none"


def _checked_noise(noise: float) -> float:
    """The noise floor as a fraction: a NaN or infinite one would make every change (or none) count."""
    if not isinstance(noise, (int, float)) or not math.isfinite(noise) or not 0 <= noise < 1:
        raise AdvisorError("--noise", f"must be a percentage from 0 to 100, got {noise!r} as a fraction")
    return float(noise)


NOT_COMPARABLE = "not comparable"


def _evaluated(analysis: Analysis) -> Callable[[str], bool]:
    """Whether a side evaluated a rule: it fired, passed, or was skipped because a rule it requires evaluated and
    did not fire (weight-reload without memory-bound is fixed); not applicable (metrics missing) or not selected is
    not evaluated. A side that recorded no outcomes (saved before advisor kept them) evaluated everything."""
    outcomes = {o.name: o for o in analysis.outcomes}

    def judged(name: str, depth: int = 0) -> bool:
        o = outcomes.get(name)
        if o is None or depth > len(outcomes):
            return False
        if o.outcome != "skipped":
            return o.outcome in ("fired", "passed")
        # "requires memory-bound (did not fire)": evaluated when every rule it waited for was
        required = [part.split(" (")[0] for part in o.detail.removeprefix("requires ").split(", ")]
        return "not selected" not in o.detail and all(judged(r, depth + 1) for r in required)

    return judged if analysis.outcomes else (lambda name: True)


def compare(before: Analysis, after: Analysis, labels: tuple[str, str] = ("before", "after"),
            noise: float = DEFAULT_NOISE) -> Comparison:
    noise = _checked_noise(noise)
    if before.kind != after.kind:
        raise AdvisorError("compare", f"{labels[0]} is of profile kind {get_kind(before.kind).title} and {labels[1]} "
                                      f"of {get_kind(after.kind).title}: profiles of different kinds do not compare")
    table = compare_table(after.kind)
    names = sorted(n for n in set(before.metrics) | set(after.metrics) if group_of(n, table))
    metrics = {n: _change(n, before, after, noise, group_of(n, table) or "") for n in names}
    old = {f.name: f for f in before.findings}
    new = {f.name: f for f in after.findings}
    # a finding is fixed (or new) only where the other side evaluated its rule: one the other side could not
    # evaluate (its metrics missing there, a metrics-only export) is not comparable (issue 36)
    judged_before, judged_after = _evaluated(before), _evaluated(after)
    findings = [FindingChange(n, old[n].title, old[n].severity, "fixed" if judged_after(n) else NOT_COMPARABLE,
                              old[n], None) for n in old if n not in new]
    findings += [FindingChange(n, new[n].title, new[n].severity, "new" if judged_before(n) else NOT_COMPARABLE,
                               None, new[n]) for n in new if n not in old]
    findings += [FindingChange(n, new[n].title, new[n].severity, "persisting", old[n], new[n])
                 for n in new if n in old]
    of, title = headline_time(before, after, table)
    a, b = before.value(of), after.value(of)
    sides = side(before, labels[0]), side(after, labels[1])
    return Comparison(
        before=sides[0], after=sides[1], speedup=a / b if a and b else None, speedup_of=of, speedup_title=title,
        noise=noise, metrics=metrics,
        findings=tuple(findings),
        warnings=(*_step_work_warning(before, after, table), *_work_warning(before, after, table, noise),
                  *_warnings(before, after), *_settings_warnings(before, after, labels)),
        root_cause_before=tuple(f.name for f in before.findings if f.root_cause),
        root_cause_after=tuple(f.name for f in after.findings if f.root_cause),
        entries=_entries(before, after) if before.entries and after.entries else (),
        breakdowns=_breakdowns(before, after, table, noise),
    )


def headline_time(before: Analysis, after: Analysis, table: dict[str, Any]) -> tuple[str, str]:
    """The metric whose ratio is the headline speedup, and its title: the kind's (compare.yaml `headline:`, per-step
    time for a training loop, so that windows of different step counts compare) where both sides have it, else the
    total time."""
    spec = table.get("headline") or {}
    metric = spec.get("metric")
    if metric and before.value(metric) and after.value(metric):
        return metric, spec["title"]
    return "total_time", "Total time"


def entry_key(entry: ProfileOverview) -> tuple[str, str | None]:
    """What identifies a profile across two inputs: its name without a leading launch ordinal (`12 gemm`
    is `gemm` in the other run too), and where it ran (the launch shape, the core)."""
    words = entry.name.split(" ", 1)
    name = words[1] if len(words) == 2 and words[0].isdigit() else entry.name
    return name, entry.where


def _entries(before: Analysis, after: Analysis) -> tuple[EntryChange, ...]:
    """Profiles matched in order of appearance (the n-th launch of a kernel with the n-th), then those
    on one side only."""
    remaining: dict[tuple[str, str | None], list[ProfileOverview]] = {}
    for e in after.entries:
        remaining.setdefault(entry_key(e), []).append(e)
    out = []
    for e in before.entries:
        match = remaining.get(entry_key(e))
        other = match.pop(0) if match else None
        a, b = e.total_time, other.total_time if other else None
        out.append(EntryChange(entry_key(e)[0], e.where, a, b, a / b if a and b else None))
    out += [EntryChange(entry_key(e)[0], e.where, None, e.total_time, None) for left in remaining.values()
            for e in left]
    return tuple(out)


def compare_series(analyses: Sequence[Analysis], labels: Sequence[str], noise: float = DEFAULT_NOISE) -> Series:
    steps = tuple(compare(analyses[i], analyses[i + 1], (labels[i], labels[i + 1]), noise)
                  for i in range(len(analyses) - 1))
    overall = compare(analyses[0], analyses[-1], (labels[0], labels[-1]), noise)
    return Series(sides=tuple(side(a, label) for a, label in zip(analyses, labels, strict=True)),
                  total_times=tuple(a.value("total_time") for a in analyses), steps=steps, overall=overall)
