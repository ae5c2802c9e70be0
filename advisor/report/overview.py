"""The cross-profile overview section: several cores, ranks or kernels side by side, with the columns
the kind's report.yaml names (`overview:`)."""

from __future__ import annotations

import statistics
from typing import Any

from advisor.core import units as fmt
from advisor.core.model import Analysis
from advisor.core.numbers import OUTLIER_BAND
from advisor.kinds import get as get_kind
from advisor.report.document import Bullets, Paragraph, Section, Table, code, escape


def overview_section(analysis: Analysis) -> Section | None:
    """Several profiles side by side: the analysed one marked, the skew, outliers against the median
    in the columns the kind marks, and findings that fire on some of them only."""
    entries = analysis.entries
    if not entries:
        return None
    spec = get_kind(analysis.kind).data("report.yaml").get("overview") or {}
    where_title = (spec.get("where") or {}).get("title", "Where")
    titles = [c["title"] for c in spec.get("columns", ())] or [c.title for c in entries[0].columns]
    units = {c.title: c.unit for e in entries for c in e.columns}
    rows = tuple((f"**{escape(e.name)}** (analysed)" if e.analysed else escape(e.name), escape(e.where or "—"),
                  fmt.seconds(e.total_time), *(fmt.value(e.column(t), units.get(t, "")) for t in titles),
                  ", ".join(code(r) for r in e.root_causes[:2]) or "—") for e in entries)
    blocks: list[Any] = [Table(("Profile", where_title, "Total time", *titles, "Root cause"), rows,
                               align=("left", "left", "right", *("right" for _ in titles), "left"))]
    timed = [e for e in entries if e.total_time is not None]
    if timed:
        median = statistics.median(e.total_time for e in timed)
        slowest = max(timed, key=lambda e: e.total_time or 0)
        blocks.append(Paragraph(
            f"The slowest is {escape(slowest.name)} ({escape(slowest.where or where_title.lower() + ' unknown')}): "
            f"{fmt.seconds(slowest.total_time)}, {fmt.speedup((slowest.total_time or 0) / median)} the median "
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


def overview_words(analysis: Analysis) -> tuple[str, str]:
    """(section title, plural noun) for the profiles of the overview, as the kind names them: the
    separately captured members of a folder (ranks), or the entries of one file."""
    spec = get_kind(analysis.kind).data("report.yaml").get("overview") or {}
    words = spec.get("entries" if analysis.source.entries else "members") or {}
    return words.get("title", "Profiles"), words.get("noun", "profiles")


def _outliers(entries: Any, title: str, unit: str) -> list[Paragraph]:
    """Profiles whose figure lies outside the outlier band around the median (needs two or more)."""
    measured = [(e, e.column(title)) for e in entries if e.column(title)]
    if len(measured) < 2:
        return []
    middle = statistics.median(v for _, v in measured)
    low, high = OUTLIER_BAND
    outliers = [(e, v) for e, v in measured if not low <= v / middle <= high]
    return [Paragraph(
        f"{title} outliers (outside {low:g}–{high:g}× the median " + fmt.value(middle, unit) + "): "
        + (", ".join(f"{escape(e.name)} {fmt.value(v, unit)}" for e, v in outliers) or "none") + ".")]
