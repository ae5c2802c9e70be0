"""Comparison / Series -> Document: the before/after report (or the attempts series)."""

from __future__ import annotations

from pathlib import PurePath
from typing import Any

from advisor.comparing.diff import STEP_WORK_WARNING, WORK_WARNING, compare_table
from advisor.core import units as fmt
from advisor.core.comparison import Comparison, FindingChange, MetricChange, RowChange, Series, Side
from advisor.report.document import Bullets, Chart, Document, Paragraph, Section, Table, code, escape

VERDICT_MARK = {"better": "better", "worse": "**worse**", "unchanged": "unchanged", "n/a": "—"}


def _who(s: Side) -> str:
    return f"**{escape(s.label)}** ({code(s.source.path)})"


def _change_text(m: MetricChange | RowChange, unit: str) -> str:
    """Relative change; for fractions also the change in percentage points, which is what a
    reader of "42 % → 70 % active" thinks in."""
    if m.change is None:
        return "—"
    relative = f"{m.change * 100:+.1f} %"
    if unit == "fraction" and m.before is not None and m.after is not None:
        return f"{(m.after - m.before) * 100:+.2f} pp ({relative})"
    return relative


def _speedup_sentence(c: Comparison) -> str:
    headline, total = c.metrics.get(c.speedup_of), c.metrics.get("total_time")
    per_step = c.speedup_of != "total_time"
    parts = [f"{escape(c.speedup_title.lower())} {fmt.seconds(headline.before)} → {fmt.seconds(headline.after)}"
             ] if per_step and headline else []
    if total:
        parts.append(f"{'windows ' if per_step else ''}{fmt.seconds(total.before)} → {fmt.seconds(total.after)}")
    times = f" ({'; '.join(parts)})" if parts else ""
    status = speedup_status(c)
    if status == UNAVAILABLE or c.speedup is None:
        return "Total time is unavailable on one side: no speedup can be computed."
    if status == UNCHANGED:
        return f"{escape(c.speedup_title)} is unchanged within the {fmt.percent(c.noise)} noise floor{times}."
    factor = c.speedup if c.speedup > 1 else 1 / c.speedup
    if status == OTHER_STEPS:
        return (f"{escape(c.speedup_title)} changed{times}, **not like-for-like**: each step ran different work "
                "(see the warnings), so no speedup is claimed.")
    if status == OTHER_WORK:
        shorter = "shorter" if c.speedup > 1 else "longer"
        return (f"Total time {fmt.speedup(factor)} {shorter}{times}, **not like-for-like**: the two sides did "
                "different amounts of work (see the warnings).")
    return (f"**{escape(c.after.label)} is {fmt.speedup(factor)} {status}{' per step' if per_step else ''}** than "
            f"{escape(c.before.label)}{times}.")


UNAVAILABLE, UNCHANGED, OTHER_STEPS, OTHER_WORK = "unavailable", "unchanged", "other steps", "other work"


def speedup_status(c: Comparison) -> str:
    """What a comparison may claim, for the report's headline and the CLI's closing line alike: "faster" or
    "slower"; or none: a time unavailable, unchanged within the noise, steps that ran different work (not even a
    per-step speedup), or windows of different work without a per-step headline."""
    if c.speedup is None:
        return UNAVAILABLE
    if abs(c.speedup - 1) <= c.noise:
        return UNCHANGED
    if any(w.startswith(STEP_WORK_WARNING) for w in c.warnings):
        return OTHER_STEPS
    if not like_for_like(c) and c.speedup_of == "total_time":
        return OTHER_WORK
    return "faster" if c.speedup > 1 else "slower"


def like_for_like(c: Comparison) -> bool:
    """Both sides did the same work as far as the kind's work metrics tell (compare.yaml `work:`)."""
    return not any(w.startswith((WORK_WARNING, STEP_WORK_WARNING)) for w in c.warnings)


def _names(changes: list[FindingChange]) -> str:
    return ", ".join(code(f.name) for f in changes) or "none"


def headline(c: Comparison) -> list[str]:
    fixed = [f for f in c.findings if f.status == "fixed"]
    new = [f for f in c.findings if f.status == "new"]
    persisting = [f for f in c.findings if f.status == "persisting"]
    items = [_speedup_sentence(c), f"Fixed: {_names(fixed)}. New: {_names(new)}. Persisting: {_names(persisting)}."]
    unjudged = [f for f in c.findings if f.status == "not comparable"]
    if unjudged:
        items.append(f"Not comparable: {_names(unjudged)}, fired on one side only while the other could not "
                     "evaluate them (their metrics are missing there): neither fixed nor new.")
    top_before = c.root_cause_before[0] if c.root_cause_before else None
    top_after = c.root_cause_after[0] if c.root_cause_after else None
    if top_before != top_after:
        items.append(f"The bottleneck moved from {code(top_before) if top_before else 'none'} to "
                     f"{code(top_after) if top_after else 'none'}.")
    elif top_after:
        items.append(f"The bottleneck is still {code(top_after)}.")
    worse = [m for m in c.metrics.values() if m.verdict == "worse"]
    if worse:
        items.append("Worse: " + ", ".join(f"{code(m.name)} {_change_text(m, m.unit)}" for m in worse[:6]) + ".")
    return items


def _metric_sections(c: Comparison) -> list[Section]:
    groups: dict[str, list[tuple[str, ...]]] = {}
    table = compare_table(c.after.kind)
    keep = frozenset(table.get("always", ()))
    hidden = 0
    for m in c.metrics.values():
        if m.before is None and m.after is None:
            continue
        if m.verdict == "unchanged" and m.name not in keep:
            hidden += 1
            continue
        groups.setdefault(m.group, []).append((code(m.name), fmt.value(m.before, m.unit), fmt.value(m.after, m.unit),
                                               _change_text(m, m.unit), VERDICT_MARK[m.verdict]))
    header = ("Metric", escape(c.before.label), escape(c.after.label), "Change", "Verdict")
    order = [g["name"] for g in table.get("groups", ())]
    blocks: list[Any] = [Paragraph(
        f"Changes within ±{fmt.percent(c.noise)} are shown as unchanged (`--noise`); a share's change is in "
        "percentage points (pp: 40 % → 45 % is +5 pp), with the relative change beside it. Better or worse follows "
        "each metric's direction of goodness; metrics without one (utilisation shares can drop while a kernel gets "
        f"faster) show —. {fmt.plural(hidden, 'unchanged metric')} {'is' if hidden == 1 else 'are'} left out "
        "here; the JSON output has them all.")]
    for group in sorted(groups, key=lambda g: order.index(g) if g in order else len(order)):
        blocks.append(Table(header, tuple(groups[group]), align=("left", "right", "right", "right", "left"),
                            caption=group))
    return [Section("Metrics", tuple(blocks), "metrics")]


def _findings_section(c: Comparison) -> Section:
    blocks: list[Any] = []
    for status, heading in (("fixed", "Fixed"), ("new", "New"), ("persisting", "Persisting"),
                            ("not comparable", "Not comparable (the other side could not evaluate the rule)")):
        rows = []
        for f in (x for x in c.findings if x.status == status):
            if status == "persisting":
                assert f.before and f.after
                evidence = "; ".join(
                    f"{code(n)} {fmt.value(e.value, e.unit)} → {fmt.value(f.after.evidence[n].value, e.unit)}"
                    for n, e in f.before.evidence.items() if n in f.after.evidence)
                rows.append((code(f.name), escape(f.title), escape(f.severity), evidence))
            else:
                finding = f.after or f.before
                assert finding is not None
                rows.append((code(f.name), escape(f.title), escape(f.severity), escape(finding.message)))
        if rows:
            last = "Evidence before → after" if status == "persisting" else "Message"
            blocks.append(Table(("Rule", "Title", "Severity", last), tuple(rows), caption=heading))
    if not blocks:
        blocks.append(Paragraph("No rule fired on either side."))
    roots = (f"Root causes before: {_plain(c.root_cause_before)}; after: {_plain(c.root_cause_after)}.")
    return Section("Findings: fixed, new, persisting", (Paragraph(roots), *blocks), "findings")


def _plain(names: tuple[str, ...]) -> str:
    return ", ".join(code(n) for n in names) or "none"


def _present(c: Comparison, name: str) -> bool:
    m = c.metrics.get(name)
    return m is not None and bool(m.before or m.after)


def _charts(c: Comparison) -> list[Chart]:
    """The kind's before/after charts (compare.yaml `charts:`), each with the metrics either side has."""
    charts = []
    for spec in compare_table(c.after.kind).get("charts", ()):
        shown = [(name, label) for name, label in spec["metrics"] if _present(c, name)]
        if not shown:
            continue
        fraction = c.metrics[shown[0][0]].unit == "fraction"

        def values(side: str, shown: list = shown, fraction: bool = fraction) -> list:
            raw = [getattr(c.metrics[name], side) for name, _ in shown]
            return [100 * (v or 0) for v in raw] if fraction else raw

        charts.append(Chart(spec["id"], spec["title"], {
            "kind": "grouped_hbar", "labels": [label for _, label in shown], "xlabel": spec["xlabel"],
            **({} if fraction else {"bytes": True}),
            "series": [{"name": label, "values": values(side)}
                       for label, side in ((c.before.label, "before"), (c.after.label, "after"))],
        }, alt=spec["alt"]))
    return charts


def _warnings(c: Comparison) -> Section | None:
    if not c.warnings:
        return None
    return Section("Comparability warnings", (Bullets(tuple(escape(w) for w in c.warnings)),), "warnings")


def _analysed(side: Side) -> str:
    """Which profile of an input was analysed: the file's entry, or a folder's member (its file's name)."""
    return side.source.entry or PurePath(side.source.path.replace("\\", "/")).name


def _entries_section(c: Comparison) -> Section | None:
    """Every profile of both inputs (the kernels of two runs), matched by name and launch shape."""
    if not c.entries:
        return None
    rows = tuple((escape(e.name), escape(e.where or "—"), fmt.seconds(e.before), fmt.seconds(e.after),
                  fmt.speedup(e.speedup) if e.speedup else ("only before" if e.after is None else "only after"))
                 for e in sorted(c.entries, key=lambda e: -max(e.before or 0.0, e.after or 0.0)))
    runs = [sum(e.before or 0.0 for e in c.entries), sum(e.after or 0.0 for e in c.entries)]
    total = (f"Whole run: {fmt.seconds(runs[0])} → {fmt.seconds(runs[1])} "
             f"({fmt.speedup(runs[0] / runs[1]) if runs[1] else 'unavailable'}); the rest of this comparison is of "
             f"the analysed profile ({escape(_analysed(c.before))} → {escape(_analysed(c.after))}).")
    return Section("Matched profiles", (Paragraph(total), Table(("Profile", "Where", "Before", "After", "Speedup"),
                                                                rows, align=("left", "left", "right", "right",
                                                                             "right"))), "entries")


def _breakdown_sections(c: Comparison) -> list[Section]:
    """The kind's tables compared row by row (per-layer deltas), largest first."""
    sections = []
    for b in c.breakdowns:
        rows = tuple((escape(r.key), fmt.value(r.before, b.unit), fmt.value(r.after, b.unit),
                      _change_text(r, b.unit),
                      VERDICT_MARK.get(r.verdict, escape(r.verdict))) for r in b.rows)
        table = Table((escape(b.key_title), escape(c.before.label), escape(c.after.label), "Change", "Verdict"), rows,
                      align=("left", "right", "right", "right", "left"))
        sections.append(Section(f"{b.title}: {b.column.lower()}", (Paragraph(
            f"Matched by {escape(b.key_title.lower())} name; changes within ±{fmt.percent(c.noise)} are unchanged, "
            "and a row on one side only is marked so."), table), f"breakdown-{b.name}"))
    return sections


def comparison_document(c: Comparison) -> Document:
    lines = (f"Before: {_who(c.before)}", f"After: {_who(c.after)}")
    charts = _charts(c)
    sections = [_warnings(c), Section("Headline", (Bullets(tuple(headline(c))),), "headline"),
                _entries_section(c), _findings_section(c), *_metric_sections(c), *_breakdown_sections(c),
                Section("Charts", tuple(charts), "charts") if charts else None]
    return Document(title=f"Comparison: {escape(c.before.label)} → {escape(c.after.label)}", lines=lines,
                    sections=tuple(s for s in sections if s))


def series_document(series: Series) -> Document:
    first = series.total_times[0]
    rows = []
    for i, s in enumerate(series.sides):
        total = series.total_times[i]
        step = series.steps[i - 1] if i else None
        vs_prev = fmt.speedup(step.speedup) if step and step.speedup else "—"
        vs_prev += "" if step is None or like_for_like(step) else " (different work)"
        vs_first = fmt.speedup(first / total) if first and total else "—"
        roots = (step.root_cause_after if step else series.steps[0].root_cause_before) if series.steps else ()
        rows.append((escape(s.label), code(s.source.path), fmt.seconds(total), vs_prev, vs_first, _plain(roots[:1])))
    table = Table(("Attempt", "Input", "Total time", "vs previous", "vs first", "Root cause"), tuple(rows),
                  align=("left", "left", "right", "right", "right", "left"))
    blocks: list[Any] = [table]
    known = [t for t in series.total_times if t is not None]
    if len(known) == len(series.total_times):
        scale, unit = fmt.axis("s", known)
        blocks.append(Chart("series", "Total time across attempts", {
            "kind": "series", "labels": [s.label for s in series.sides], "values": [t / scale for t in known],
            "texts": [fmt.seconds(t) for t in known], "ylabel": f"total time ({unit})"}, alt="Total time per attempt"))
    steps = [f"{escape(c.before.label)} → {escape(c.after.label)}: " + " ".join(headline(c)[:3])
             for c in series.steps]
    warnings = sorted({w for c in (*series.steps, series.overall) for w in c.warnings})
    sections = [
        Section("Comparability warnings", (Bullets(tuple(escape(w) for w in warnings)),), "warnings")
        if warnings else None,
        Section("Attempts", tuple(blocks), "attempts"),
        Section("Step by step", (Bullets(tuple(steps)),), "steps"),
        Section("Overall: first → last", (Bullets(tuple(headline(series.overall))),), "overall"),
        _findings_section(series.overall), *_metric_sections(series.overall),
    ]
    labels = " → ".join(escape(s.label) for s in series.sides)
    return Document(title=f"Attempts: {labels}", lines=tuple(f"{escape(s.label)}: {code(s.source.path)}"
                                                             for s in series.sides),
                    sections=tuple(s for s in sections if s))
