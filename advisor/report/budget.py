"""The time budget section: the bounds every estimate in the report is capped by, in one table."""

from __future__ import annotations

from advisor.core import units as fmt
from advisor.core.expr import annotated
from advisor.core.model import Analysis, Bound
from advisor.engine.budget import bound_values, together_and_bound
from advisor.report.document import Paragraph, Section, Table, code, escape
from advisor.report.view import subject


def _caps(analysis: Analysis, bound: Bound) -> str:
    """The findings that name this bound; bold where it set the estimate."""
    names = [f"**{code(f.name)}**" if f.bound == bound.name else code(f.name)
             for f in analysis.findings if bound.name in f.capped_by or f.bound == bound.name]
    return ", ".join(names) or "—"


def _formula(analysis: Analysis, bound: Bound) -> str:
    """The bound's formula with its inputs' values; a bound that is one derived metric shows that metric's
    formula, so the reader sees the floors it is made of."""
    metric = analysis.metrics.get(bound.formula)
    if metric is not None and metric.formula and set(bound.inputs) == {bound.formula}:
        hw = analysis.hardware
        values: dict[str, tuple[float | None, str]] = (
            {n: (v, hw.env_units().get(n, "")) for n, v in hw.env().items()} if hw else {})
        values.update({n: (analysis.value(n), analysis.metrics[n].unit) for n in metric.inputs
                       if n in analysis.metrics})
        return f"{bound.formula} = {annotated(metric.formula, values)}"
    return annotated(bound.formula, {n: (e.value, e.unit) for n, e in bound.inputs.items()})


def together(analysis: Analysis) -> tuple[float | None, str]:
    """What every finding could recover together, each piece of time counted once, and the title of the bound
    that capped the sum ('' when none did)."""
    value, bound = together_and_bound(analysis.findings, bound_values(analysis.bounds))
    return value, next((b.title for b in analysis.bounds if b.name == bound), "")


def time_budget_section(analysis: Analysis) -> Section | None:
    cited = {n for f in analysis.findings for n in (*f.capped_by, f.bound)}
    # a bound no finding names and that gives nothing back (another engine's lead) is only noise here
    known = sorted(((b, b.value) for b in analysis.bounds if b.value is not None and (b.value > 0 or b.name in cited)),
                   key=lambda known_bound: (known_bound[1], known_bound[0].name))
    if not known:
        return None
    total = analysis.value("total_time")
    noun = subject(analysis)
    rows = []
    for b, value in known:
        floor = fmt.seconds(total * (1 - value)) if total else "unavailable"
        formula = _formula(analysis, b)
        rows.append((f"{escape(b.title)} ({code(b.name)})", fmt.percent(value), floor, code(formula),
                     _caps(analysis, b)))
    blocks: list = [
        Paragraph(f"Every estimate in this report is a claim on a piece of the {noun}'s measured time, capped by each "
                  "bound its fix cannot move (bold: the bound that set the estimate). A bound is the most of the run "
                  "one class of fix can give back; tightest first."),
        Table(("Bound", "Recoverable at most", "Run no shorter than", "Formula (values)", "Caps"), tuple(rows),
              align=("left", "right", "right", "left", "left"))]
    return Section("Time budget", tuple(blocks), "time-budget")
