"""FleetSummary -> Document: the fleet overview (TL;DR, kinds, root causes, top offenders,
distributions, outliers, failures, trends), in the shared report blocks every format renders."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote

from advisor.core import units as fmt
from advisor.fleet.summary import Distribution, FleetSummary, Offender, Trend
from advisor.report.compare_build import VERDICT_MARK
from advisor.report.document import Bullets, Chart, Document, Paragraph, Section, Table, code, escape

RIGHT, LEFT = "right", "left"
UNEXPLAINED = " (*no cause identified*)"  # a rule whose time has no identified cause (fleet.yaml `unexplained:`)


def _more(shown: int, total: int, what: str) -> list[Paragraph]:
    return [Paragraph(f"… and {total - shown} more {what} (the JSON output lists what the overview shows).")] \
        if total > shown else []


def _change(change: float | None, verdict: str) -> str:
    if change is None:
        return VERDICT_MARK["n/a"]
    return f"{change * 100:+.1f} % {VERDICT_MARK.get(verdict, escape(verdict))}"


def _rules(names: Sequence[str]) -> str:
    return ", ".join(code(n) for n in names)


def _behind(o: Offender) -> str:
    """Root causes first, then the symptom whose estimate the recoverable time is, marked as one."""
    parts = [code(c) for c in o.causes] + ([f"symptom {code(o.symptom)}"] if o.symptom else [])
    return ", ".join(parts) or "—"


def _tldr(s: FleetSummary) -> list[str]:
    items = []
    # the table ranks time with no identified cause last: it is the biggest only when no owner has time
    cause = next((c for c in s.root_causes if c.recoverable_time is not None), None)
    if cause:
        items.append(f"Biggest recoverable time: {code(cause.rule)} ({escape(cause.kind)}), "
                     f"{fmt.seconds(cause.recoverable_time)} over {cause.profiles} profile(s) "
                     f"({fmt.percent(cause.share)} of the kind's)"
                     + (f"{UNEXPLAINED}, and no root cause with an owner has an estimate." if cause.unexplained
                        else "."))
    elif s.root_causes:
        items.append(f"Most frequent root cause: {code(s.root_causes[0].rule)}; no estimate of recoverable time.")
    else:
        items.append("No root cause fired on any profile.")
    if s.offenders:
        o = s.offenders[0]
        items.append(f"Top offender: **{escape(o.name)}** ({escape(o.kind)}"
                     f"{', ' + escape(o.device) if o.device else ''}): {fmt.seconds(o.recoverable_time)} recoverable "
                     f"of {fmt.seconds(o.total_time)}{', behind it ' + _behind(o) if o.behind else ''}.")
    if s.trends_total:
        names = ", ".join(escape(t.name) for t in s.trends if t.regression)
        items.append(f"**{s.regressions} regression(s)** among {s.trends_total} profile(s) with several runs: {names}."
                     if s.regressions else f"No regressions among {s.trends_total} profile(s) with several runs "
                                           f"(noise floor {fmt.percent(s.noise)}).")
    else:
        items.append("No trends yet: no profile name was stored at two points in time.")
    items.append(f"**{s.failed} profile(s) failed** to load; see Failures." if s.failed else "No failures.")
    return items


def _kinds(s: FleetSummary) -> Section:
    rows = tuple((escape(k.kind), str(k.profiles), str(k.ok), str(k.failed), fmt.seconds(k.total_time))
                 for k in s.kinds)
    return Section("Profiles per kind", (Table(("Kind", "Profiles", "Analysed", "Failed", "Total time"), rows,
                                               align=(LEFT, RIGHT, RIGHT, RIGHT, RIGHT)),), "kinds")


def _root_causes(s: FleetSummary, chart_rows: int) -> Section:
    if not s.root_causes:
        return Section("Root causes", (Paragraph("No root cause fired on any analysed profile."),), "root-causes")
    rows = tuple((str(i), code(c.rule) + (UNEXPLAINED if c.unexplained else ""), escape(c.kind),
                  fmt.seconds(c.recoverable_time), f"{c.profiles} ({fmt.percent(c.share)})", str(c.frequency_rank))
                 for i, c in enumerate(s.root_causes, 1))
    blocks: list[Any] = [
        Paragraph("Recoverable time is each profile's recoverable time (its findings together, each piece of time "
                  "counted once, as its report's \"All findings together\") split over its root causes in its "
                  "report's order, summed over the profiles where the rule is a root cause: one profile's time is "
                  "never counted under two root causes (global estimates only; a local estimate is never summed). "
                  "Profiles: how many it is a root cause of, and their share of the kind's analysed profiles; "
                  "the last column ranks by that count."
                  + (" Rules marked *no cause identified* measure time the device waits on something outside the "
                     "profile: they are ranked last, after every root cause with an owner, whatever their time."
                     if any(c.unexplained for c in s.root_causes) else "")),
        Table(("#", "Root cause", "Kind", "Recoverable", "Profiles", "By count"), rows,
              align=(RIGHT, LEFT, LEFT, RIGHT, RIGHT, RIGHT)),
        *_more(len(s.root_causes), s.root_causes_total, "root causes")]
    known = [c for c in s.root_causes if c.recoverable_time is not None][:chart_rows]
    if known:
        scale, unit = fmt.axis("s", [c.recoverable_time or 0.0 for c in known])
        blocks.append(Chart("root-causes", "Recoverable time by root cause", {
            "kind": "hbar", "labels": [f"{c.rule} ({c.kind})" for c in known],
            "values": [(c.recoverable_time or 0.0) / scale for c in known],
            "texts": [fmt.seconds(c.recoverable_time) for c in known], "xlabel": f"recoverable time ({unit})",
            "highlight": 0}, alt="Recoverable time summed over the fleet, by root cause"))
    return Section("Root causes", tuple(blocks), "root-causes")


def _offender_name(o: Offender, links: Mapping[str, str], attempts: bool) -> str:
    """The name, linked to its report; with several runs stored, also which attempt it is."""
    link = links.get(o.hash)
    name = f"[{escape(o.name)}]({quote(link)})" if link else escape(o.name)
    return f"{name} @ {escape(o.attempt)}" if attempts else name


def _near_bound(s: FleetSummary) -> str:
    return (f"{s.near_bound} profile(s) are near their bound by their own reports (every estimate under "
            f"{fmt.percent(s.near_bound_limit)} of their time) and are no target, however long they run."
            if s.near_bound else "")


def _offenders(s: FleetSummary, links: Mapping[str, str], analyses: bool) -> Section:
    if not s.offenders:
        return Section("Top offenders", (Paragraph(" ".join(filter(None, (
            "No analysed profile has an estimate of recoverable time.", _near_bound(s))))),), "offenders")
    rows = tuple((_offender_name(o, links, len(s.runs) > 1), escape(o.kind + (f", {o.device}" if o.device else "")),
                  fmt.seconds(o.total_time),
                  f"{fmt.seconds(o.recoverable_time)} ({fmt.percent(o.gain)})", _behind(o)) for o in s.offenders)
    said = "each linked to its own report" if links else "each with its stored analysis"
    blocks: list[Any] = [
        Paragraph(f"The {len(s.offenders)} profile(s) with the most recoverable time (all its findings together, "
                  f"each piece of time counted once, × total time), {said}. Behind it: the profile's root causes "
                  f"(time with no identified cause last), then the symptom the estimate belongs to when no root "
                  f"cause has one. {_near_bound(s)}".rstrip()),
        Table(("Profile", "Kind, device", "Total time", "Recoverable (share)", "Behind it"), rows,
              align=(LEFT, LEFT, RIGHT, RIGHT, LEFT))]
    if analyses:
        blocks.append(Paragraph("Stored analyses (re-render one with `advisor report ANALYSIS -o report.pdf`):"))
        blocks.append(Bullets(tuple(f"{escape(o.name)}: {code(o.analysis)}" for o in s.offenders)))
    return Section("Top offenders", tuple(blocks), "offenders")


def _metric_title(metric: str) -> str:
    return "total time" if metric == "total_time" else metric


def _panel(d: Distribution) -> dict[str, Any]:
    scale, unit = fmt.axis(d.unit, d.edges)
    return {"title": _metric_title(d.metric), "edges": [e / scale for e in d.edges], "counts": list(d.counts),
            "xlabel": unit or "value", "log": d.log}


def _histograms(distributions: Sequence[Distribution]) -> list[Chart]:
    """One chart per kind, a small panel per metric: a page holds a kind's distributions."""
    kinds = sorted({d.kind for d in distributions})
    return [Chart(f"distributions-{kind}", f"{kind}: distributions over its analysed profiles", {
        "kind": "histogram", "panels": [_panel(d) for d in distributions if d.kind == kind]},
        alt=f"Histograms of total time and headline metrics of the {kind} profiles") for kind in kinds]


def _distributions(s: FleetSummary) -> Section:
    if not s.distributions:
        return Section("Distributions", (Paragraph("Too few analysed profiles for a distribution."),),
                       "distributions")
    rows = tuple((escape(d.kind), code(d.metric), str(d.count), fmt.value(d.minimum, d.unit),
                  fmt.value(d.median, d.unit), fmt.value(d.maximum, d.unit)) for d in s.distributions)
    blocks: list[Any] = [
        Paragraph("Total time and each kind's headline metrics over its analysed profiles (unavailable values "
                  "are left out). Bins are log-spaced when the largest value is over 100× the smallest."),
        Table(("Kind", "Metric", "Profiles", "Min", "Median", "Max"), rows,
              align=(LEFT, LEFT, RIGHT, RIGHT, RIGHT, RIGHT)),
        *_histograms(s.distributions)]
    return Section("Distributions", tuple(blocks), "distributions")


def _outliers(s: FleetSummary, min_group: int) -> Section:
    rule = (f"Robust z = (value − group median) / (1.4826 × MAD); |z| above {s.outlier_threshold:g} is an outlier. "
            f"Total time is judged among profiles of the same kind and name, headline metrics among the kind's "
            f"profiles; groups need at least {min_group} profiles.")
    if not s.outliers:
        return Section("Outliers", (Paragraph(rule + " None found."),), "outliers")
    rows = tuple((f"{escape(o.name)} ({escape(o.kind)})", code(o.metric), fmt.value(o.value, o.unit),
                  f"{fmt.value(o.median, o.unit)} of {o.group_size}", f"{o.z:+.1f}") for o in s.outliers)
    return Section("Outliers", (Paragraph(rule), Table(
        ("Profile (kind)", "Metric", "Value", "Group median of n", "z"), rows, align=(LEFT, LEFT, RIGHT, RIGHT, RIGHT)),
        *_more(len(s.outliers), s.outliers_total, "outliers")),
        "outliers")


def _failures(s: FleetSummary) -> Section:
    if not s.failed:
        return Section("Failures", (Paragraph("Every profile loaded."),), "failures")
    rows = tuple((code(f.path), escape(f.message)) for f in s.failures)
    return Section("Failures", (Paragraph(f"{s.failed} profile(s) failed to load; each is stored as an error row "
                                          "and is read again when its file changes."),
                                Table(("Path", "Message"), rows), *_more(len(s.failures), s.failed, "failures")),
                   "failures")


def _findings_step(t: Trend) -> str:
    parts = ([f"new {_rules(t.new)}"] if t.new else []) + ([f"fixed {_rules(t.fixed)}"] if t.fixed else [])
    return "; ".join(parts) or "no change"


def _trends(s: FleetSummary) -> Section:
    if not s.trends:
        return Section("Trends", (Paragraph(
            "No profile name was stored at two points in time. Store later runs with `--label` (a date or a "
            "commit), or profiles that carry their capture time, to see trends here."),), "trends")
    rows = tuple((f"{escape(t.name)} ({escape(t.kind)})", f"{t.attempts} ({escape(t.first)} → {escape(t.last)})"
                  + (f", {t.profiles} profiles" if t.profiles > t.attempts else ""),
                  f"{fmt.seconds(t.first_time)} → {fmt.seconds(t.last_time)}", _change(t.change, t.verdict),
                  _change(t.step_change, t.step_verdict)) for t in s.trends)
    # findings go below the table: rule names in a narrow column would wrap letter by letter on A4
    steps = tuple(f"{escape(t.name)} ({escape(t.kind)}): {_findings_step(t)}" for t in s.trends if t.new or t.fixed)
    blocks: list[Any] = [
        Paragraph(f"Attempts are points in time, in order of capture time, else run; when a run stored a name "
                  "several times (its ranks, cores or GPUs), the attempt's time is their median. Changes within "
                  f"±{fmt.percent(s.noise)} are unchanged (`--noise`), as in `advisor compare`; a profile worse "
                  "first → last or in its last step is a regression and is listed first. "
                  "`advisor history NAME --store DIR` shows every attempt."),
        Table(("Profile (kind)", "Attempts", "Time first → last", "Change", "Last step"), rows,
              align=(LEFT, LEFT, RIGHT, RIGHT, RIGHT)),
        *([Paragraph("Findings in the last step:"), Bullets(steps)] if steps else []),
        *_more(len(s.trends), s.trends_total, "profiles with trends")]
    return Section("Trends", tuple(blocks), "trends")


def _lines(s: FleetSummary) -> tuple[str, ...]:
    runs = f"run {s.runs[0]}" if len(s.runs) == 1 else f"runs {s.runs[0]}–{s.runs[-1]}"
    labels = ", ".join(escape(label) for label in s.labels[:8]) + (f" and {len(s.labels) - 8} more"
                                                                   if len(s.labels) > 8 else "")
    return (f"Store: {code(s.store)}",
            f"{s.profiles} profile(s): {s.ok} analysed, {s.failed} failed; {runs}"
            + (f"; labels: {labels}" if labels else "")
            + (f"; {s.same_capture} more stored the same capture in another format (not counted)"
               if s.same_capture else ""))


def fleet_document(s: FleetSummary, config: Mapping[str, Any], links: Mapping[str, str] | None = None,
                   analyses: bool = False) -> Document:
    """`links`: offender hash -> its report, relative to the overview; `analyses`: list the stored
    analysis paths instead (the PDF, which renders no other report)."""
    if not s.profiles:
        return Document("Fleet overview: the store is empty", (f"Store: {code(s.store)}",), (Section("Summary", (
            Paragraph("The store holds no profiles yet: `advisor fleet PATH --store DIR` analyses profiles into "
                      "it."),), "summary"),))
    sections = (Section("TL;DR", (Bullets(tuple(_tldr(s))),), "tldr"), _kinds(s),
                _root_causes(s, config["root_causes"]["chart_rows"]), _offenders(s, links or {}, analyses),
                _trends(s), _distributions(s), _outliers(s, config["outliers"]["min_group"]), _failures(s))
    return Document(f"Fleet overview: {s.profiles} profiles", _lines(s), sections)
