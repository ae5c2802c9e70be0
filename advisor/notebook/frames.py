"""Results as pandas DataFrames for a notebook: one row per finding, metric, bound, profile, row of a kind's
breakdown, attempt. Values stay in machine units (seconds, bytes, fractions 0..1), typed (float, bool, an ordered
severity), and every table says each numeric column's unit in `frame.attrs["units"]` (column -> unit), as the
report does beside each number. pandas is imported here, on first use."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from advisor.core.comparison import Comparison
from advisor.core.model import SEVERITIES, Analysis
from advisor.core.trace import Breakdown

if TYPE_CHECKING:
    import pandas


def frame(rows: Sequence[Mapping[str, Any]], columns: Sequence[str], units: Mapping[str, str],
          index: str | None = None) -> pandas.DataFrame:
    """A table of `columns` in that order (an empty one keeps them), numbers as floats, severities ordered,
    the units in attrs."""
    import pandas

    table = pandas.DataFrame(list(rows), columns=list(columns))
    for name, unit in units.items():
        if name in table.columns and unit != "text":
            numbers = pandas.to_numeric(table[name], errors="coerce").astype("float64")
            whole = unit == "count" and bool((numbers.dropna() % 1 == 0).all())
            table[name] = numbers.astype("Int64") if whole else numbers  # a count of things is an integer
    if "severity" in table.columns:
        table["severity"] = pandas.Categorical(table["severity"], categories=list(SEVERITIES), ordered=True)
    if index is not None:
        table = table.set_index(index)
    table.attrs["units"] = {k: v for k, v in units.items() if k in (*table.columns, table.index.name)}
    return table


def findings(analysis: Analysis) -> pandas.DataFrame:
    """Root causes first, then the symptoms they explain (the report's order). `estimated_gain` is a share of
    the profile's time (global) or of one unit's own inefficiency (local, `scope`); NaN where none is claimed."""
    rows = [{"rule": f.name, "id": f.id, "pack": f.pack, "severity": f.severity, "category": f.category,
             "title": f.title, "root_cause": f.root_cause, "estimated_gain": f.estimated_speedup,
             "scope": f.speedup_scope, "set_by": f.bound, "claim": f.claim, "explains": ", ".join(f.explains),
             "message": f.message, "recommendation": f.recommendation} for f in analysis.findings]
    columns = ("rule", "id", "pack", "severity", "category", "title", "root_cause", "estimated_gain", "scope",
               "set_by", "claim", "explains", "message", "recommendation")
    return frame(rows, columns, {"estimated_gain": "fraction"}, index="rule")


def metrics(analysis: Analysis) -> pandas.DataFrame:
    """Every metric: value in machine units, unit, source (reported, derived, hardware) and formula."""
    rows = [{"name": m.name, "value": m.value, "unit": m.unit, "source": m.source, "formula": m.formula,
             "description": m.description} for m in analysis.metrics.values()]
    table = frame(rows, ("name", "value", "unit", "source", "formula", "description"), {"value": "per row"},
                  index="name")
    table.attrs["units"] = {"value": "the row's `unit` column"}
    return table


def bounds(analysis: Analysis) -> pandas.DataFrame:
    """The time budget: the most of the run each class of fix can give back, tightest first."""
    rows = sorted(({"bound": b.name, "title": b.title, "recoverable_at_most": b.value, "formula": b.formula}
                   for b in analysis.bounds), key=lambda r: (r["recoverable_at_most"] is None,
                                                             r["recoverable_at_most"] or 0.0))
    return frame(rows, ("bound", "title", "recoverable_at_most", "formula"), {"recoverable_at_most": "fraction"},
                 index="bound")


def breakdown(table: Breakdown) -> pandas.DataFrame:
    """One of a kind's tables (layers, kernels, operators, idle gaps …) with its columns' units."""
    rows = []
    for key, values in table.rows:
        row: dict[str, Any] = {"key": key, **{c.name: v for c, v in zip(table.columns, values, strict=False)}}
        row.update({c.name: t for c, t in zip(table.text_columns, table.texts.get(key, ()), strict=False)})
        rows.append(row)
    columns = ("key", *(c.name for c in table.columns), *(c.name for c in table.text_columns))
    result = frame(rows, columns, {c.name: c.unit for c in table.columns}, index="key")
    result.index.name = table.key_title
    result.attrs["title"] = table.title
    return result


def breakdowns(analysis: Analysis) -> dict[str, pandas.DataFrame]:
    return {b.name: breakdown(b) for b in (analysis.trace.breakdowns if analysis.trace else ())}


def entries(analysis: Analysis) -> pandas.DataFrame:
    """The profiles of a multi-profile input (kernels of a run, ranks, cores), with the analysed one marked."""
    rows = [{"profile": e.name, "where": e.where, "total_time": e.total_time, "analysed": e.analysed,
             "root_causes": ", ".join(e.root_causes), "gain": e.gain, "gain_finding": e.gain_finding}
            for e in analysis.entries]
    return frame(rows, ("profile", "where", "total_time", "analysed", "root_causes", "gain", "gain_finding"),
                 {"total_time": "s", "gain": "fraction"}, index="profile")


def vendor_findings(analysis: Analysis) -> pandas.DataFrame:
    """The profiler's own rule results (Nsight Compute's), as read."""
    rows = [{"rule": v.rule, "section": v.section, "type": v.type, "title": v.title, "estimate": v.speedup,
             "scope": v.speedup_scope, "message": v.message} for v in analysis.vendor_findings]
    return frame(rows, ("rule", "section", "type", "title", "estimate", "scope", "message"), {"estimate": "fraction"})


def metric_changes(comparison: Comparison) -> pandas.DataFrame:
    rows = [{"metric": m.name, "group": m.group, "before": m.before, "after": m.after, "change": m.change,
             "verdict": m.verdict, "unit": m.unit} for m in comparison.metrics.values()]
    table = frame(rows, ("metric", "group", "before", "after", "change", "verdict", "unit"),
                  {"before": "per row", "after": "per row", "change": "fraction"}, index="metric")
    table.attrs["units"] = {"before": "the row's `unit` column", "after": "the row's `unit` column",
                            "change": "fraction (relative: (after - before) / before)"}
    return table


def finding_changes(comparison: Comparison) -> pandas.DataFrame:
    rows = [{"rule": f.name, "title": f.title, "severity": f.severity, "status": f.status,
             "gain_before": f.before.estimated_speedup if f.before else None,
             "gain_after": f.after.estimated_speedup if f.after else None} for f in comparison.findings]
    return frame(rows, ("rule", "title", "severity", "status", "gain_before", "gain_after"),
                 {"gain_before": "fraction", "gain_after": "fraction"}, index="rule")
