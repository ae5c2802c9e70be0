"""The report's rule output: the verdict, ranked findings with their root-cause chains, next
steps, and the rules that could not be evaluated."""

from __future__ import annotations

from dataclasses import dataclass

from advisor.core import units as fmt
from advisor.core.model import Amdahl, Analysis, Finding, NotApplicable
from advisor.kinds import get as get_kind
from advisor.metrics.members import member_metric_names, member_spec
from advisor.report.document import Bullets, Paragraph, Section, Table, code, escape
from advisor.report.view import subject


@dataclass(frozen=True)
class Verdict:
    tldr: tuple[str, ...]
    paragraph: str


def root_causes(analysis: Analysis) -> list[Finding]:
    """The root causes the verdict may name, in the engine's order: never one whose fix gives back nothing (a share
    of the time estimated at 0 %), which is no verdict however it ranks (issue 34)."""
    return [f for f in analysis.findings if f.root_cause and not _gives_nothing(f)]


def _gives_nothing(f: Finding) -> bool:
    return f.global_speedup is not None and f.global_speedup <= 0


def _gain(f: Finding, analysis: Analysis) -> str:
    if f.estimated_speedup is None:
        return ""
    if f.global_speedup is None:
        return f", estimated local gain up to {fmt.percent(f.estimated_speedup)} of that unit's own inefficiency"
    return f", estimated gain up to {fmt.percent(f.estimated_speedup)} of the {subject(analysis)}'s time"


def verdict(analysis: Analysis) -> Verdict:
    causes = root_causes(analysis)
    if not causes:
        skipped = len(not_evaluated(analysis))
        tail = (f" {fmt.plural(skipped, 'rule')} could not be evaluated for missing metrics (see the appendix)."
                if skipped else "")
        context = [f"`{f.name}`" for f in analysis.findings]  # info findings: context, never a cause
        fired = (f"no cause to fix was found (context: {', '.join(context)})." if context
                 else "no rule in the loaded packs fired on this profile.")
        return Verdict((), "**Verdict:** " + fired + tail)
    top = causes[0]
    amdahl = analysis.investigation.amdahl if analysis.investigation else None
    share = amdahl.kernel_share if amdahl else None
    # a ceiling for its causes ranks after every cause with a gain, so none of them fired (issue 36)
    gains = ("; no finding shows waste to remove, so no gain is claimed" if top.caps_only else
             _gain(top, analysis) + _workload_gain(top, share))
    bullet = f"Root cause: **{escape(top.title)}** ({code(top.name)}{gains})."
    chain = _chain(analysis, top)
    because = f" It was reached through {chain}." if chain else ""
    others = ""
    if len(causes) > 1:
        others = " Other root causes: " + ", ".join(f"{escape(c.title)} ({code(c.name)})" for c in causes[1:]) + "."
    steps = ranked_steps(analysis)
    paragraph = (f"**Verdict: {escape(top.title)}.** {escape(top.message)}{because} "
                 f"{escape(top.root_cause_text)}{others}{_workload_sentence(analysis)} "
                 + (f"**Next:** {steps[0]}" if steps else ""))
    return Verdict((bullet,), " ".join(paragraph.split()))


def _workload_sentence(analysis: Analysis) -> str:
    """With workload timings, the verdict says how far any kernel gain can carry the workload."""
    a = analysis.investigation.amdahl if analysis.investigation else None
    if a is None or a.ceiling is None or a.measured is None:
        return ""
    text = (f" **Workload:** these steps were f = {a.fraction:.3f} of it, so however fast they get, the workload "
            f"cannot pass {fmt.speedup(a.ceiling)} (Amdahl's ceiling); measured: {measured_words(a.measured)}")
    if a.target is not None and not a.target_reachable:
        text += f", so the {fmt.speedup(a.target)} target needs the other steps to change"
    return text + "."


def measured_words(measured: float | None) -> str:
    """A measured workload change in words: a slowdown is said as one, never as a speedup or a limit."""
    if measured is None or measured <= 0:
        return "unavailable"
    if measured < 1:
        return f"{fmt.speedup(1 / measured)} slower (a slowdown)"
    return f"{fmt.speedup(measured)} faster"


def _chain(analysis: Analysis, finding: Finding) -> str:
    """`memory-bound` → `dma-fragmentation`: the required rules that led to this finding."""
    by_name = {f.name: f for f in analysis.findings}
    path: list[str] = []
    current = finding
    seen = {finding.name}
    while current.because:
        parent = by_name.get(current.because[0])
        if parent is None or parent.name in seen:
            break
        path.append(parent.name)
        seen.add(parent.name)
        current = parent
    return " → ".join(code(n) for n in [*reversed(path), finding.name]) if path else ""


def _finding_section(rank: int, f: Finding, by_name: dict[str, Finding],
                     explained_by: dict[str, list[str]]) -> Section:
    role = (" · **root cause**" if f.root_cause else
            " · context, not a cause to fix" if f.severity == "info" and not explained_by.get(f.name) else "")
    blocks: list = [Paragraph(f"**{escape(f.severity.upper())}** · {escape(f.category)} · {code(f.id)} "
                              f"{code(f.name)}{role}"),
                    Paragraph(escape(f.message))]
    if f.because:
        reasons = []
        for name in f.because:
            parent = by_name.get(name)
            detail = f": {code(parent.condition)}" if parent and parent.condition else ""
            reasons.append(f"because {code(name)} fired{detail}")
        blocks.append(Paragraph("Chain: " + "; ".join(reasons) + "."))
    explainers = explained_by.get(f.name, [])
    if explainers:
        them = "it" if len(explainers) == 1 else "them"
        blocks.append(Paragraph("Explained further by " + ", ".join(code(n) for n in explainers)
                                + f": act on {them}; this finding is the symptom."))
    if f.root_cause_text:
        blocks.append(Paragraph(f"**Why:** {escape(f.root_cause_text)}"))
    blocks.append(Paragraph(f"**Action:** {escape(f.recommendation)}"))
    rows = tuple((code(name), fmt.value(e.value, e.unit)) for name, e in f.evidence.items())
    rows += tuple((f"{code(name)} (threshold)", fmt.value(p.value, p.unit)) for name, p in f.params.items())
    blocks.append(Table(("Evidence", "Value"), rows, align=("left", "right"),
                        caption=f"Condition: {code(f.condition)}" if f.condition else ""))
    if f.estimated_speedup is not None and f.global_speedup is None:
        blocks.append(Paragraph(f"Estimated local speedup: up to {fmt.percent(f.estimated_speedup)} of the affected "
                                "unit's own inefficiency — an upper bound for that unit, not a share of total time "
                                "(Nsight Compute's local estimate)."))
    elif f.estimated_speedup is not None:
        overall = fmt.speedup(1 / (1 - f.estimated_speedup)) if f.estimated_speedup < 1 else "unbounded"
        blocks.append(Paragraph(f"Estimated speedup: removing this problem could save up to "
                                f"{fmt.percent(f.estimated_speedup)} of total time ({overall} overall)."))
    if f.references:
        blocks.append(Paragraph("References: " + "; ".join(escape(r) for r in f.references)))
    return Section(f"{rank}. {escape(f.title)}", tuple(blocks), f"finding-{f.name}", level=3)


def findings_sections(analysis: Analysis) -> list[Section]:
    hidden = _hidden_section(analysis)
    if not analysis.findings:
        return [Section("Findings", (Paragraph("No rule fired on this profile."),), "findings"),
                *([hidden] if hidden else [])]
    intro = Paragraph(f"{fmt.plural(len(analysis.findings), 'rule')} fired: root causes first, then the symptoms "
                      "they explain, each ranked by estimated gain, then severity. A root cause is a finding no "
                      "other fired finding explains further.")
    by_name = {f.name: f for f in analysis.findings}  # once: a saved analysis may hold thousands
    explained_by: dict[str, list[str]] = {}
    for f in analysis.findings:
        for name in f.explains:
            explained_by.setdefault(name, []).append(f.name)
    return [Section("Findings", (intro,), "findings"),
            *(_finding_section(i + 1, f, by_name, explained_by) for i, f in enumerate(analysis.findings)),
            *([hidden] if hidden else [])]


def _hidden_section(analysis: Analysis) -> Section | None:
    """Findings --ignore hid: a rule that requires an ignored one, or one an ignored rule explains."""
    hidden = analysis.settings.hidden if analysis.settings else ()
    if not hidden:
        return None
    rows = tuple((code(h.name), escape(h.title), escape(h.reason)) for h in hidden)
    ignored = ", ".join(code(n) for n in analysis.settings.ignore) if analysis.settings else ""
    return Section("Hidden by --ignore", (
        Paragraph(f"Ignoring {ignored} hid more than those rules' own findings: the rules below require an ignored "
                  "rule (so they were skipped) or are explained by one (so they now show as root causes). Run "
                  "without --ignore to see them."),
        Table(("Rule", "Title", "Why"), rows)), "hidden")


def _workload_gain(f: Finding, kernel_share: float | None) -> str:
    """A kernel-level estimate carried to the workload: the kernel is `kernel_share` of it."""
    if f.global_speedup is None or kernel_share is None:
        return ""
    share = f.global_speedup * kernel_share
    return f"; {fmt.percent(share)} of the workload, {fmt.speedup(1 / (1 - share))} overall"


def slower_steps(a: Amdahl) -> list[str]:
    """The changed steps the change made slower (a regression), as "name (before → after)"."""
    return [f"{escape(s)} ({fmt.seconds(a.baseline[s])} → {fmt.seconds(a.optimized[s])})" for s in a.changed
            if s in a.baseline and s in a.optimized and a.optimized[s] > a.baseline[s]]


def _workload_step(analysis: Analysis) -> tuple[float, str] | None:
    """With workload timings, the step Amdahl points at: shorten the unchanged steps; but where the change made
    its own steps slower, fix or revert it first (issue 36: a regression was told to shorten the rest)."""
    a = analysis.investigation.amdahl if analysis.investigation else None
    if a is None or not a.changed:
        return None
    slower = slower_steps(a)
    if slower:  # ranks above every cause: the change itself lost the time
        return 2.0, (f"Fix or revert the change: the changed {'steps got' if len(slower) > 1 else 'step got'} "
                     f"slower — {', '.join(slower)} — so the workload is {measured_words(a.measured)}; the "
                     "kernel's own findings and the unchanged steps come after. (Amdahl, from the workload timings)")
    if a.ceiling is None:
        return None
    unchanged = [s for s in a.baseline if s not in a.changed]
    if not unchanged:
        return None
    names = ", ".join(f"{escape(s)} ({fmt.seconds(a.optimized[s])})" for s in unchanged)
    share = 1 - (a.kernel_share or 0)
    text = (f"Shorten the unchanged steps — {names}, {fmt.percent(share)} of the optimized workload: no "
            f"speedup of this kernel takes the workload past {fmt.speedup(a.ceiling)}")
    if a.target is not None and a.unchanged_needed_speedup is not None:
        text += (f"; for {fmt.speedup(a.target)} overall they must get {fmt.speedup(a.unchanged_needed_speedup)} "
                 "faster with this kernel as it is (or be fused with it, so they shrink together)")
    return share, text + ". (Amdahl, from the workload timings)"


def ranked_steps(analysis: Analysis) -> list[str]:
    """The root causes' recommendations, each once, ordered by what they can gain (a catch-all after the
    specific causes); with workload timings the gains are carried to the workload, and the Amdahl step
    competes with them."""
    a = analysis.investigation.amdahl if analysis.investigation else None
    kernel_share = a.kernel_share if a else None
    # (0 for root causes and Amdahl, 1 for what they explain), catch-alls after specific causes, gain
    ranked: list[tuple[int, bool, float, str]] = []
    seen: set[str] = set()
    for f in analysis.findings:
        # a symptom's action is under its finding: as a step it would repeat or contradict its root cause's
        # ("raise occupancy" under a saturated unit that says occupancy cannot help)
        # a local estimate that stayed local (Nsight Compute: the issue slots are not under-used) claims no time
        # of the kernel: its own condition for being worth it is unmet, so it is no step
        # and a cause estimated to give back nothing is no step either (its action stays under its finding)
        if (f.root_cause and f.recommendation and f.recommendation not in seen and f.speedup_scope != "local"
                and not _gives_nothing(f)):
            seen.add(f.recommendation)
            gain = (f.global_speedup or 0) * (kernel_share if kernel_share is not None else 1)
            gains = _gain(f, analysis) + _workload_gain(f, kernel_share)
            ranked.append((0 if f.root_cause else 1, f.catch_all, gain,
                           f"{escape(f.recommendation)} ({code(f.name)}{gains})"))
    workload = _workload_step(analysis)
    if workload:
        ranked.append((0, False, *workload))
    return [text for _, _, _, text in sorted(ranked, key=lambda item: (item[0], item[1], -item[2]))]


def next_steps_section(analysis: Analysis) -> Section | None:
    steps = ranked_steps(analysis)
    if not steps:
        return None
    blocks: list = [Bullets(tuple(steps), ordered=True)]
    if any(not f.root_cause and f.recommendation for f in analysis.findings):
        blocks.append(Paragraph("The root causes' actions; each symptom's own action is under its finding, to take "
                                "once its root cause is fixed."))
    return Section("Next steps", tuple(blocks), "next-steps")


def not_evaluated(analysis: Analysis) -> list[NotApplicable]:
    """The rules a better capture would enable: not those across members (stragglers), which need an input of
    several profiles, not more metrics of this one."""
    spec = member_spec(analysis.kind)
    across = set(member_metric_names(spec)) if spec is not None and not analysis.entries else set()
    return [n for n in analysis.not_applicable if not (n.missing and set(n.missing) <= across)]


def not_evaluated_section(analysis: Analysis) -> Section | None:
    missing = not_evaluated(analysis)
    if not missing:
        return None
    rows = tuple((code(n.name), escape(n.title), ", ".join(code(m) for m in n.missing)) for n in missing)
    hints = get_kind(analysis.kind).data("report.yaml").get("capture_hints") or {}
    full = None if analysis.trace is not None else hints.get(analysis.source.format, hints.get("default"))
    ways = ", ".join(["a newer profiler", *([full] if full else []), "or `--hardware` for `hw_*` figures"])
    return Section("Rules not evaluated", (
        Paragraph(f"These rules read metrics the profile does not have. Capturing them ({ways}) enables the rule."),
        Table(("Rule", "Title", "Missing metrics"), rows)), "not-evaluated")
