"""Report sections that answer the investigation: analytical cross-checks, the Amdahl picture,
hypotheses judged by the profile, and what it all means."""

from __future__ import annotations

from advisor.core import units as fmt
from advisor.core.expr import annotated
from advisor.core.model import Amdahl, Analysis
from advisor.kinds import get as get_kind
from advisor.report.budget import together
from advisor.report.document import Bullets, Chart, CodeBlock, Paragraph, Section, Table, code, escape
from advisor.report.findings import measured_words, root_causes, slower_steps
from advisor.report.view import subject


def expectations_section(analysis: Analysis) -> Section | None:
    inv = analysis.investigation
    if inv is None or not inv.expectations:
        return None
    rows = []
    for e in inv.expectations:
        verdict = {"matches": "✓ matches", "differs": "✗ **differs**", "unavailable": "unavailable"}[e.verdict]
        extra = f" ({fmt.decimal_bytes(e.expected)})" if e.unit == "bytes" else ""
        measured = f" ({fmt.decimal_bytes(e.actual)})" if e.unit == "bytes" else ""
        difference = "—" if e.relative_difference is None else f"{e.relative_difference * 100:.2g} %"
        rows.append((code(e.metric), f"{code(e.expr)} = {fmt.value(e.expected, e.unit)}{extra}",
                     f"{fmt.value(e.actual, e.unit)}{measured}", difference,
                     f"{verdict} (tolerance {fmt.percent(e.tolerance)})"))
    table = Table(("Metric", "Predicted", "Measured", "Difference", "Verdict"), tuple(rows),
                  align=("left", "left", "right", "right", "left"))
    return Section("Analytical cross-check", (Paragraph(
        "Predictions from the investigation context, computed from the kernel's shapes, against the profile."),
        table), "expectations")


def _amdahl_table(a: Amdahl) -> Table:
    rows = [(escape(step), fmt.seconds(a.baseline[step]), fmt.seconds(a.optimized[step]),
             fmt.speedup(a.baseline[step] / a.optimized[step]) if a.optimized[step] > 0 else "—",
             "changed" if step in a.changed else "unchanged") for step in a.baseline]
    before, after = sum(a.baseline.values()), sum(a.optimized.values())
    rows.append(("**total**", f"**{fmt.seconds(before)}**", f"**{fmt.seconds(after)}**",
                 f"**{fmt.speedup(a.measured)}**", ""))
    return Table(("Step", "Baseline", "Optimized", "Speedup", ""), tuple(rows),
                 align=("left", "right", "right", "right", "left"))


def _amdahl_bullets(a: Amdahl) -> list[str]:
    items = []
    if a.fraction is not None and a.step_speedup:
        changed = ", ".join(escape(s) for s in a.changed) or "none"
        direction = "faster" if (a.step_speedup or 0) >= 1 else "slower"
        factor = a.step_speedup if (a.step_speedup or 0) >= 1 else 1 / a.step_speedup if a.step_speedup else None
        items.append(f"The changed steps ({changed}) were **f = {a.fraction:.3f}** of the baseline time and got "
                     f"**{fmt.speedup(factor)} {direction}** (s = {a.step_speedup:.3g}).")
    items.append(f"Amdahl predicts 1 / ((1 − f) + f / s) = **{fmt.speedup(a.predicted)}** overall; measured "
                 f"(baseline total ÷ optimized total): **{fmt.speedup(a.measured)}**.")
    if a.ceiling is not None:
        items.append(f"Ceiling as s → ∞: 1 / (1 − f) = **{fmt.speedup(a.ceiling)}**: no speedup of these steps "
                     "alone can pass it.")
    if a.target is not None:
        if a.target_reachable:
            needed = fmt.speedup(a.needed_step_speedup)
            items.append(f"The target {fmt.speedup(a.target)} needs the changed steps **{needed}"
                         f"** faster (now {fmt.speedup(a.step_speedup)}).")
        else:
            items.append(f"The target **{fmt.speedup(a.target)} is unreachable** by speeding up these steps: it lies "
                         f"above the {fmt.speedup(a.ceiling)} ceiling. The unchanged steps must get faster too.")
    if slower_steps(a):  # a regression: undoing it comes before the ceiling and the target (issue 36)
        items.append("The change made the workload slower: **fix or revert it first**; the ceiling and the target "
                     "above are for the changed steps once they are faster than before.")
    return items


def _profile_bounds(analysis: Analysis) -> list:
    """Without workload timings: per finding, what the kernel could gain."""
    vendor = get_kind(analysis.kind).data("report.yaml").get("speedup_bound")  # the vendor's own statement
    noun = subject(analysis)
    titles = {b.name: b.title for b in analysis.bounds}
    rows = []
    for f in analysis.findings:
        if f.global_speedup is None:  # a local estimate is not a share of time: no Amdahl bound from it
            continue
        rows.append((f"{escape(f.title)} ({code(f.name)})", fmt.percent(f.global_speedup),
                     _speedup_bound(f.global_speedup), _set_by(f.bound, titles),
                     code(f.claim)))
    if not rows:  # nothing to tabulate: say so instead of introducing a table that is not there
        blocks: list = [Paragraph(
            f"No finding claims a share of the {noun}'s time (the findings are context, or name which unit sets the "
            "pace and no time a fix is known to give back), so there is no Amdahl bound to show.")]
        return blocks + _pipeline(analysis)
    blocks = [Paragraph(
        f"No workload timings were given (`--context` with `workload:`), so this is the {noun}-level view: for each "
        f"finding, the share of total time it could recover and the {noun} speedup that would give, 1 / (1 − share)"
        + (f" — {vendor}." if vendor else ".") + " Findings that claim the same time share one claim: together "
        "they count once.")]
    combined, capped_by = together(analysis)
    if combined is not None and len(rows) > 1:
        rows.append(("**All findings together**, each claim once", f"**{fmt.percent(combined)}**",
                     f"**{_speedup_bound(combined)}**", escape(capped_by) or "the claims' sum", ""))
    blocks.append(Table(("Finding", "Recoverable share of total time", f"{noun.capitalize()} speedup bound",
                         "Set by", "Claims"), tuple(rows), align=("left", "right", "right", "left", "left")))
    return blocks + _pipeline(analysis)


def _pipeline(analysis: Analysis) -> list:
    pipeline = _perfect_pipeline(analysis)
    return [Paragraph(pipeline)] if pipeline else []


def _set_by(bound: str, titles: dict[str, str]) -> str:
    """What set an estimate: a bound of the time budget, a cause whose time it is, or the rule's own formula."""
    if bound in titles:
        return escape(titles[bound])
    causes = [code(c) for c in bound.split(",") if c]
    if len(causes) > 1:
        return f"its causes {', '.join(causes)} together"
    return f"its cause {causes[0]}" if causes else "its own formula"


def _speedup_bound(share: float) -> str:
    return fmt.speedup(1 / (1 - share)) if share < 1 else "unbounded"


def _perfect_pipeline(analysis: Analysis) -> str:
    """AWS's perfect pipeline: the run cannot get shorter than its busiest unit, DMA included (a
    kernel whose DMA is busy 96 % of the run gains at most 1.04× from overlap, whatever compute does)."""
    total = analysis.value("total_time")
    compute = analysis.value("busiest_compute_engine_active_time_percent")
    if not total or not compute:
        return ""
    dma = analysis.value("dma_active_time_percent")
    unit, busiest = ("DMA", dma) if dma is not None and dma > compute else ("the busiest compute engine", compute)
    return (f"Perfect pipeline: with the same work on every engine and DMA queue, perfect overlap could reach at "
            f"most {fmt.speedup(1 / busiest)}, because {unit} is active {fmt.percent(busiest)} of the time. The "
            "finding bounds above are larger only where the fix itself removes or speeds up that unit's work.")


def amdahl_section(analysis: Analysis) -> Section:
    inv = analysis.investigation
    a = inv.amdahl if inv else None
    if a is None:
        return Section("The Amdahl picture", tuple(_profile_bounds(analysis)), "amdahl")
    blocks: list = [_amdahl_table(a), Bullets(tuple(_amdahl_bullets(a)))]
    if a.fraction is not None and a.step_speedup is not None:
        f, s = a.fraction, a.step_speedup
        blocks.append(CodeBlock(f"speedup = 1 / ((1 - f) + f/s)\n        = 1 / ({1 - f:.3f} + {f:.3f}/{s:.3g})\n"
                                f"        = 1 / ({1 - f:.3f} + {f / s:.4f})\n        ≈ {a.predicted:.3f}×"))
        blocks.append(Chart("amdahl", "Overall speedup against the speedup of the changed steps",
                            {"kind": "amdahl", "fraction": f, "step_speedup": s, "measured": a.measured,
                             "ceiling": a.ceiling, "target": a.target, "needed": a.needed_step_speedup},
                            alt="Amdahl curve with the measured point, the ceiling and the target"))
    return Section("The Amdahl picture", tuple(blocks), "amdahl")


def hypotheses_section(analysis: Analysis) -> Section | None:
    inv = analysis.investigation
    if inv is None or not inv.hypotheses:
        return None
    mark = {"supported": "supported", "falsified": "**falsified**", "undecided": "undecided (metrics missing)"}
    rows = []
    for h in inv.hypotheses:
        shown = annotated(h.expect, {n: (e.value, e.unit) for n, e in h.evidence.items()})
        rows.append((escape(h.name), code(shown), mark[h.verdict]))
    counts = {v: sum(1 for h in inv.hypotheses if h.verdict == v) for v in ("supported", "falsified", "undecided")}
    summary = ", ".join(f"{n} {v}" for v, n in counts.items() if n)
    return Section("Hypotheses", (Paragraph(f"Each hypothesis names what the profile would show if it were true. "
                                            f"Judged: {summary}."),
                                  Table(("Hypothesis", "Would show (profile's values)", "Verdict"), tuple(rows))),
                   "hypotheses")


def meaning_section(analysis: Analysis) -> Section:
    """Templated conclusions: each sentence present only when its numbers are."""
    sentences = []
    causes = root_causes(analysis)
    if causes:
        top = causes[0]
        gain = (f"; fixing it could recover up to {fmt.percent(top.global_speedup)} of the {subject(analysis)}'s time"
                if top.global_speedup is not None else "")
        sentences.append(f"The rules' verdict: **{escape(top.title.rstrip('.'))}** ({code(top.name)}){gain}.")
    else:
        sentences.append("No rule identified a bottleneck in this profile.")
    busiest = analysis.value("busiest_compute_engine_active_time_percent")
    if busiest is not None and busiest >= 0.9:
        sentences.append(f"Its busiest engine is already active {fmt.percent(busiest)} of the time: the kernel is "
                         "near what its current work allows, and further gains inside it must come from doing less "
                         "work on that engine, not from better overlap.")
    inv = analysis.investigation
    if inv and inv.hypotheses:
        falsified = [h for h in inv.hypotheses if h.verdict == "falsified"]
        if falsified:
            sentences.append(f"{len(falsified)} of the {len(inv.hypotheses)} hypotheses are falsified by the "
                             "profile: they targeted a bottleneck the kernel does not have.")
    a = inv.amdahl if inv else None
    slower = slower_steps(a) if a else []
    if a and slower:  # a regression: the change lost the time, and undoing it comes before any Amdahl ceiling
        sentences.append(f"The change made its own {'steps' if len(slower) > 1 else 'step'} slower "
                         f"({', '.join(slower)}): the workload is {measured_words(a.measured)}, so the first step "
                         "is to fix or revert the change, not to shorten the unchanged steps.")
    elif a and a.ceiling is not None:
        unchanged = [s for s in a.baseline if s not in a.changed]
        share = sum(a.optimized[s] for s in unchanged) / sum(a.optimized.values()) if unchanged else 0
        rest = (f" The unchanged steps ({', '.join(escape(s) for s in unchanged)}) are now "
                f"{fmt.percent(share)} of the optimized workload.") if unchanged else ""
        sentences.append(f"At the workload level Amdahl's law caps what these steps can give at "
                         f"{fmt.speedup(a.ceiling)} however fast they get; the measured result is "
                         f"{measured_words(a.measured)}.{rest}")
        if a.target is not None and not a.target_reachable:
            sentences.append(f"Reaching {fmt.speedup(a.target)} needs an algorithmic change that also shortens the "
                             "unchanged steps (for example fusing them with this kernel), not more tuning here.")
    return Section("What this means", (Paragraph(" ".join(sentences)),), "meaning")
