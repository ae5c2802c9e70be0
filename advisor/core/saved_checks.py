"""What a saved analysis must be to be believed, beyond its schema (core/analysis_schema.py).

A saved analysis is untrusted input that advisor cannot measure again, so trusting one means this: its figures
agree with each other as advisor writes them. A finding's evidence is the metric it names, its estimate is within
every bound it is capped by, its rule ran and fired, its pack and its bounds are the analysis's own, a metric
with missing inputs has no value, and every unit is a unit. A file that breaks one of these cannot be advisor's
output and is refused with one line naming the field; a file consistent in all of them is shown as what it
claims to be (its source says whose). Whether the content fits the analysis's kind (its units, hardware
figures, packs and tables) is the kind's to say: kinds/check.py.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping

from advisor.core import units
from advisor.core.errors import AdvisorError
from advisor.core.model import Analysis, Evidence, Metric
from advisor.core.schema_errors import field_step as step

ROUNDING = 1e-9  # as the engine's: a ratio of two measured times can pass its cap by a few units in the last place


def check(analysis: Analysis, where: str) -> None:
    """The first inconsistency as one AdvisorError naming `where` and the field."""
    for problems in (_units(analysis), _metrics(analysis), _findings(analysis), _bounds(analysis),
                     _workload(analysis)):
        problem = next(problems, None)
        if problem is not None:
            raise AdvisorError(where, problem)


def unit_fields(analysis: Analysis) -> Iterator[tuple[str, str]]:
    """(field, unit) of every unit the analysis holds, each field named as the file has it."""
    for name, metric in analysis.metrics.items():
        yield f"metrics{step(name)}.unit", metric.unit
    for i, f in enumerate(analysis.findings):
        yield from _evidence_units(f"findings[{i}].evidence", f.evidence)
        yield from _evidence_units(f"findings[{i}].params", f.params)
    for i, b in enumerate(analysis.bounds):
        yield from _evidence_units(f"bounds[{i}].inputs", b.inputs)
    for name, unit in (analysis.hardware.units if analysis.hardware else {}).items():
        yield f"hardware.values{step(name)}.unit", unit
    inv = analysis.investigation
    for i, e in enumerate(inv.expectations if inv else ()):
        yield f"investigation.expectations[{i}].unit", e.unit
    for i, h in enumerate(inv.hypotheses if inv else ()):
        yield from _evidence_units(f"investigation.hypotheses[{i}].evidence", h.evidence)
    for i, entry in enumerate(analysis.entries):
        for j, column in enumerate(entry.columns):
            yield f"entries[{i}].columns[{j}].unit", column.unit
    for i, table in enumerate(analysis.trace.breakdowns if analysis.trace else ()):
        for part in ("columns", "text_columns", "figures"):
            for j, column in enumerate(getattr(table, part)):
                yield f"trace.breakdowns[{i}].{part}[{j}].unit", column.unit


def _evidence_units(label: str, values: Mapping[str, Evidence]) -> Iterator[tuple[str, str]]:
    for name, e in values.items():
        yield f"{label}{step(name)}.unit", e.unit


def _units(analysis: Analysis) -> Iterator[str]:
    """A unit is a generic one or has a unit's shape (a kind's own, checked against the kind later): anything
    else reached the Markdown report as it was written (`<img src=x onerror=…>`)."""
    for label, unit in unit_fields(analysis):
        if unit not in units.UNITS and not units.is_unit_word(unit):
            yield f"{label}: {_text(unit)} is not a unit advisor knows ({', '.join(u for u in units.UNITS if u)})"


def _metrics(analysis: Analysis) -> Iterator[str]:
    hardware = analysis.hardware
    figures = {**{f"metrics{step(n)}.value": (m.value, m.unit) for n, m in analysis.metrics.items()},
               **({f"hardware.values{step(n)}.value": (v, hardware.units.get(n, "")) for n, v in
                   hardware.values.items()} if hardware else {})}
    for label, (value, unit) in figures.items():  # elsewhere such a number is shown as unavailable (core/units.py)
        if value is not None and not units.in_range(value, unit):
            yield (f"{label}: {_shown(value, unit)} is beyond any physical range (a profile's figures in "
                   f"{unit or 'this unit'} stay within ±{units.limit(unit):g})")
    for name, m in analysis.metrics.items():
        if m.missing and m.value is not None:  # a missing input makes a metric unavailable, never a number
            yield (f"metrics{step(name)}.value: {_shown(m.value, m.unit)} although its inputs "
                   f"{', '.join(m.missing)} are missing")


def _findings(analysis: Analysis) -> Iterator[str]:
    bounds = {b.name: b.value for b in analysis.bounds}
    names = {f.name for f in analysis.findings}
    outcomes = {o.name: o.outcome for o in analysis.outcomes}
    for i, f in enumerate(analysis.findings):
        at = f"findings[{i}]"
        if analysis.packs and f.pack not in analysis.packs:
            yield f"{at}.pack: '{f.pack}' is not one of the analysis's packs ({', '.join(analysis.packs)})"
        if outcomes and outcomes.get(f.name) != "fired":  # every rule that ran has an outcome
            ran = outcomes.get(f.name)
            yield (f"{at}.name: rule '{f.name}' " + (f"has the outcome '{ran}' here, not 'fired'" if ran else
                   "is not a rule this analysis ran (no outcome names it)"))
        for name in f.capped_by:
            if name not in bounds:
                yield f"{at}.capped_by: '{name}' is not one of the analysis's bounds"
            elif _above(f.estimated_speedup, bounds[name]) and f.speedup_scope == "global":
                yield (f"{at}.estimated_speedup: {units.percent(f.estimated_speedup)} is above the bound "
                       f"'{name}' it is capped by ({units.percent(bounds[name])})")
        for name in f.bound.split(",") if f.bound else ():  # a bound, or the causes that capped a symptom
            if name not in bounds and name not in names:
                yield f"{at}.bound: '{name}' is neither one of the analysis's bounds nor one of its findings"
        for name in f.because:
            if name not in names:
                yield f"{at}.because: '{name}' is not one of the analysis's findings"
        yield from _agrees(f"{at}.evidence", f.evidence, analysis.metrics)


def _bounds(analysis: Analysis) -> Iterator[str]:
    for i, b in enumerate(analysis.bounds):
        if analysis.packs and b.pack and b.pack not in analysis.packs:
            yield f"bounds[{i}].pack: '{b.pack}' is not one of the analysis's packs ({', '.join(analysis.packs)})"
        yield from _agrees(f"bounds[{i}].inputs", b.inputs, analysis.metrics)


def _workload(analysis: Analysis) -> Iterator[str]:
    """The workload timings' steps are the same before and after, and the changed ones among them: advisor writes
    them so, and the Amdahl table and next steps read a step on both sides."""
    a = analysis.investigation.amdahl if analysis.investigation else None
    if a is None:
        return
    if set(a.baseline) != set(a.optimized):
        yield "investigation.amdahl: baseline and optimized name different steps"
    elif not set(a.changed) <= set(a.baseline):
        yield "investigation.amdahl.changed names a step the timings do not have"


def _agrees(label: str, values: Mapping[str, Evidence], metrics: Mapping[str, Metric]) -> Iterator[str]:
    """Evidence is the metric it names, read when the analysis was made: the same value in the same unit."""
    for name, e in values.items():
        m = metrics.get(name)
        if m is not None and (e.value != m.value or e.unit != m.unit):
            yield (f"{label}{step(name)}: {_shown(e.value, e.unit)}, where the analysis's metric {name} is "
                   f"{_shown(m.value, m.unit)}")


def _above(estimate: float | None, bound: float | None) -> bool:
    return estimate is not None and bound is not None and estimate > bound + ROUNDING


def _shown(value: float | None, unit: str) -> str:
    """A number as the file has it (an error names what to look for), with its unit."""
    text = json.dumps(value)
    return f"{text.removesuffix('.0')} {unit}".rstrip()


def _text(text: str) -> str:
    """A string from the file in an error line: quoted, cut short, control characters escaped."""
    shown = repr(text[:60])
    return shown if len(text) <= 60 else shown[:-1] + "…" + shown[-1]
