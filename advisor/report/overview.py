"""The cross-profile overview section: several cores, ranks or kernels side by side, with the columns
the kind's report.yaml names (`overview:`)."""

from __future__ import annotations

import statistics
from collections.abc import Callable
from itertools import pairwise
from typing import Any

from advisor.core import units as fmt
from advisor.core.model import Analysis, ProfileOverview
from advisor.core.numbers import OUTLIER_BAND
from advisor.kinds import get as get_kind
from advisor.report.document import Bullets, Paragraph, Section, Table, code, escape

NOT_COMPARABLE = "members of this input are not comparable"  # the note advisor/overview.py writes


def overview_section(analysis: Analysis) -> Section | None:
    """Several profiles side by side: the analysed one marked, the skew, outliers against the median
    in the columns the kind marks, and findings that fire on some of them only."""
    entries = analysis.entries
    if not entries:
        return None
    spec = get_kind(analysis.kind).data("report.yaml").get("overview") or {}
    if spec.get("serial"):
        return _serial_run(analysis, spec)
    where_title = (spec.get("where") or {}).get("title", "Where")
    titles, units = _columns(entries, spec)
    rows = tuple(_cells(e, titles, units) for e in entries)
    blocks: list[Any] = [Table(("Profile", where_title, "Total time", *titles, "Root cause"), rows,
                               align=("left", "left", "right", *("right" for _ in titles), "left"))]
    # members that differ in device, world size or step count (advisor/overview.py): said here, above their figures
    blocks += [Paragraph("**Not comparable.** " + escape(n)) for n in analysis.notes if NOT_COMPARABLE in n]
    timed = [(e, e.total_time) for e in entries if e.total_time is not None]
    if len(timed) > 1:  # one profile has no slowest to name
        median = statistics.median(time for _, time in timed)
        slowest, slowest_time = max(timed, key=lambda pair: pair[1])
        blocks.append(Paragraph(
            f"The slowest is {escape(slowest.name)}{_where(slowest, where_title)}: "
            f"{fmt.seconds(slowest_time)}, {slowest_time / median:.4g}× the median "
            f"{fmt.seconds(median)} (skew = max ÷ median). This report analyses "
            f"{'it' if slowest.analysed else 'the profile marked above'}; `--entry` analyses another."))
    for column in (c for c in spec.get("columns", ()) if c.get("outliers")):
        blocks += _outliers(entries, column["title"], units.get(column["title"], ""))
    everywhere = set.intersection(*(set(e.findings) for e in entries))
    differing = sorted({f for e in entries for f in e.findings} - everywhere)
    if differing:
        items = tuple(f"{code(f)} fires on " + ", ".join(escape(e.name) for e in entries if f in e.findings)
                      + " only" for f in differing)
        blocks += [Paragraph("Findings that differ between them:"), Bullets(items)]
    title = f"{overview_words(analysis)[0]} ({len(entries)})"
    return Section(title, tuple(blocks), "entries")


def _where(entry: ProfileOverview, where_title: str) -> str:
    """" (rank 3)" after a profile's name, unless the name says it already."""
    where = entry.where or where_title.lower() + " unknown"
    return "" if where == entry.name else f" ({escape(where)})"


def _columns(entries: Any, spec: dict[str, Any]) -> tuple[list[str], dict[str, str]]:
    """The overview's column titles (as the kind names them) and the unit of each."""
    titles = [c["title"] for c in spec.get("columns", ())] or [c.title for c in entries[0].columns]
    return titles, {c.title: c.unit for e in entries for c in e.columns}


def _cells(e: Any, titles: list[str], units: dict[str, str]) -> tuple[str, ...]:
    """One profile's row: name (the analysed one marked), where it ran, time, the columns, root causes;
    `_serial_run` puts the share of the run after the time."""
    return (f"**{escape(e.name)}** (analysed)" if e.analysed else escape(e.name), escape(e.where or "—"),
            fmt.seconds(e.total_time), *(fmt.value(e.column(t), units.get(t, "")) for t in titles),
            ", ".join(code(r) for r in e.root_causes[:2]) or "—")


def overview_words(analysis: Analysis) -> tuple[str, str]:
    """(section title, plural noun) for the profiles of the overview, as the kind names them: the
    separately captured members of a folder (ranks), or the entries of one file."""
    spec = get_kind(analysis.kind).data("report.yaml").get("overview") or {}
    words = spec.get("entries" if analysis.source.entries else "members") or {}
    return words.get("title", "Profiles"), words.get("noun", "profiles")


def _groups(measured: list[tuple[Any, float]]) -> tuple[list[tuple[Any, float]], list[tuple[Any, float]]] | None:
    """Two groups of profiles, split at the widest gap between neighbouring figures when that gap is wider than
    the outlier band and each side holds two or more (two tensor-parallel pairs on links of different speed);
    None when the figures form one group. The median of two clusters lies between them, and every profile of
    either is an "outlier" of it: the groups are the finding, not the outliers (issue 34, class 8)."""
    ranked = sorted(measured, key=lambda m: m[1])
    if len(ranked) < 4 or ranked[0][1] <= 0:
        return None
    gap, at = max((b[1] / a[1], i + 1) for i, (a, b) in enumerate(pairwise(ranked)))
    if gap <= OUTLIER_BAND[1] or min(at, len(ranked) - at) < 2:
        return None
    return ranked[:at], ranked[at:]


def _outliers(entries: Any, title: str, unit: str) -> list[Paragraph]:
    """Profiles whose figure lies outside the outlier band around the median (needs two or more); when the
    figures form two groups, the groups, and the outliers of each against its own median."""
    measured = [(e, e.column(title)) for e in entries if e.column(title)]
    if len(measured) < 2:
        return []
    low, high = OUTLIER_BAND

    def outside(members: list[tuple[Any, float]]) -> tuple[float, list[tuple[Any, float]]]:
        middle = statistics.median(v for _, v in members)
        return middle, [(e, v) for e, v in members if not low <= v / middle <= high]

    def named(members: list[tuple[Any, float]]) -> str:
        return ", ".join(f"{escape(e.name)} {fmt.value(v, unit)}" for e, v in members) or "none"

    groups = _groups(measured)
    if groups is not None:
        (fast, fast_out), (slow, slow_out) = (outside(g) for g in groups)
        order = [e for e, _ in measured]  # as the overview lists them (rank order), not by name
        listed = [", ".join(escape(e.name) for e in order if any(e is m for m, _ in g)) + f" (median "
                  f"{fmt.value(middle, unit)})" for g, middle in ((groups[0], fast), (groups[1], slow))]
        return [Paragraph(
            f"{title}: two groups, {fmt.speedup(slow / fast)} apart — the faster {listed[0]}, the slower "
            f"{listed[1]}. Outliers within a group (outside {low:g}–{high:g}× its own median): "
            f"{named(fast_out + slow_out)}.")]
    middle, outliers = outside(measured)
    if len(measured) == 2 and outliers:  # the median of two lies between them: each is an "outlier" of it
        (fast, v_fast), (slow, v_slow) = sorted(measured, key=lambda m: m[1])
        return [Paragraph(f"{title}: {escape(slow.name)} {fmt.value(v_slow, unit)} is {fmt.speedup(v_slow / v_fast)} "
                          f"{escape(fast.name)} {fmt.value(v_fast, unit)} (outside {low:g}–{high:g}×).")]
    return [Paragraph(
        f"{title} outliers (outside {low:g}–{high:g}× the median " + fmt.value(middle, unit) + "): "
        + named(outliers) + ".")]


def _run_sentence(count: int, timed: int, words: str, run: float | None) -> str:
    """How long the run took: the sum of the known durations, and how many of them are known."""
    if run is None:
        return f"{count} {words} ran one after another; none has a known duration. Ranked as listed:"
    known = "" if timed == count else f" ({timed} of the {count} have a known duration; the rest are left out)"
    return (f"{count} {words} took {fmt.seconds(run)} together{known} (the sum of their durations: they ran one "
            "after another). Ranked by time:")


def _serial_run(analysis: Analysis, spec: dict[str, Any]) -> Section:
    """Profiles that ran one after another (the kernel launches of a run): ranked by time with their
    share of the run, the top ones with their root cause and what fixing it gives the whole run
    (Amdahl: a fix saving a fraction g of a kernel holding share s of the run speeds the run up
    1 / (1 − s·g)), the rest summarised."""
    entries = sorted(analysis.entries, key=lambda e: -(e.total_time or 0.0))
    timed = [e for e in entries if e.total_time is not None]
    # an unknown duration is not 0 s: the run is the sum of the known ones, and says how many those are
    run = sum(e.total_time for e in timed if e.total_time is not None) if timed else None
    top = int(spec.get("top", 5))
    item = str(spec.get("item", "profile"))  # what one entry is: "kernel"
    where_title = (spec.get("where") or {}).get("title", "Where")
    titles, units = _columns(entries, spec)

    def share(e: ProfileOverview) -> float | None:
        return (e.total_time / run) if run and e.total_time is not None else None

    def ranked(rank: int, e: ProfileOverview) -> tuple[str, ...]:
        name, where, time, *rest = _cells(e, titles, units)
        return (str(rank), name, where, time, fmt.percent(share(e)), *rest)

    rows = tuple(ranked(rank, e) for rank, e in enumerate(entries[:top], 1))
    blocks: list[Any] = [
        Paragraph(_run_sentence(len(entries), len(timed), overview_words(analysis)[1], run)),
        Table(("#", item.capitalize(), where_title, "Time", "Share of run", *titles, "Root cause"), rows,
              align=("right", "left", "left", "right", "right", *("right" for _ in titles), "left"))]
    rest = entries[top:]
    if rest:
        rest_timed = [e.total_time for e in rest if e.total_time is not None]
        rest_time = sum(rest_timed) if rest_timed else None
        blocks.append(Paragraph(f"The other {len(rest)} take {fmt.seconds(rest_time)} "
                                f"({fmt.percent(rest_time / run if run and rest_time is not None else None)} of the "
                                "run); the JSON output lists each."))
    blocks += _amdahl(entries[:top], share, item)
    blocks += _common_causes(entries, timed, run)
    analysed = next((e.name for e in entries if e.analysed), "one")
    blocks.append(Paragraph(f"This report analyses {escape(analysed)} in full (marked above); "
                            f"`{spec.get('pick', '--entry')}` analyses another."))
    return Section(f"{overview_words(analysis)[0]} ({len(entries)})", tuple(blocks), "entries")


def _amdahl(top: list[ProfileOverview], share: Callable[[ProfileOverview], float | None],
            item: str) -> list[Paragraph | Table]:
    """What fixing each top profile's largest finding gives the whole run, and the bound if it took no time."""
    amdahl = []
    for e in top:
        s = share(e)
        if s is None:
            continue
        whole = fmt.speedup(1 / (1 - s)) if s < 1 else "unbounded"
        if e.gain is not None:
            saved = s * e.gain
            fix = (f"{code(e.gain_finding)}: up to {fmt.percent(e.gain)} of the {item} → "
                   f"{fmt.percent(saved)} of the run ({fmt.speedup(1 / (1 - saved)) if saved < 1 else 'unbounded'})")
        else:
            fix = "no global estimate"
        amdahl.append((escape(e.name), fmt.percent(s), fix, whole))
    if not amdahl:
        return []
    return [Paragraph(f"Amdahl across the {item}s: what fixing each one's largest finding (global estimate) "
                      f"gives the whole run, and the bound if the {item} took no time at all."),
            Table((item.capitalize(), "Share of run", "Fixing its top finding", "Run speedup if it took 0 s"),
                  tuple(amdahl), align=("left", "right", "left", "right"))]


def _common_causes(entries: list[ProfileOverview], timed: list[ProfileOverview],
                   run: float | None) -> list[Paragraph | Bullets]:
    """The root causes of the profiles, by the share of the run their profiles cover."""
    # root causes only: a symptom's time is its cause's, and listing it first would put it before the cause
    common = sorted({f for e in entries for f in e.root_causes},
                    key=lambda f: (-sum(e.total_time or 0.0 for e in entries if f in e.root_causes), f))
    if not common:
        return []

    def covered(finding: str) -> float | None:
        if not run:
            return None
        return sum(e.total_time for e in timed if finding in e.root_causes and e.total_time is not None) / run

    def run_share(finding: str) -> str:  # no "(unavailable of the run)": without a run time, no share
        part = covered(finding)
        return f" ({fmt.percent(part)} of the run)" if part is not None else ""

    items = tuple(f"{code(f)} on {sum(f in e.root_causes for e in entries)} of {len(entries)}{run_share(f)}"
                  for f in common[:8])
    return [Paragraph("Root causes by the share of the run they cover:"), Bullets(items)]
