"""A store -> the bytes of the fleet overview: JSON (the FleetSummary), or Markdown, HTML and PDF
through the shared renderers. Markdown and HTML carry the top offenders' own reports in the chart
folder (`<stem>_files/reports/`), linked from the overview; the PDF names their stored analyses instead,
so it stays one fast file. Nothing is written here."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from advisor.core.errors import AdvisorError
from advisor.fleet.summary import FleetSummary, limits, summarize
from advisor.report.output import charts_folder
from advisor.report.render import Rendered, render, render_document

if TYPE_CHECKING:
    from advisor.fleet.store import Store

JSON_FORMAT = "advisor-fleet-overview"


def summary_json(summary: FleetSummary) -> str:
    """Deterministic: fields in dataclass order, lists in the summary's sorted order, no clock."""
    data: dict[str, Any] = {"format": JSON_FORMAT, "version": 1, **asdict(summary)}
    data["trends"] = [{**t, "regression": s.regression} for t, s in zip(data["trends"], summary.trends, strict=True)]
    return json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def report_stem(name: str, content_hash: str) -> str:
    """A file name for a profile's report: its name made safe for any file system, and its hash."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._")[:60] or "profile"
    return f"{safe}-{content_hash[:8]}"


def offender_reports(store: Store, summary: FleetSummary, fmt: str, output: Path,
                     page_size: str) -> tuple[dict[str, str], dict[str, bytes]]:
    """Each top offender's report rendered from its stored analysis: hash -> link relative to the
    overview, and the files (a Markdown report's own charts beside it, under reports/)."""
    reports = f"{charts_folder(output)}/reports"
    links: dict[str, str] = {}
    files: dict[str, bytes] = {}
    for offender in summary.offenders:
        if offender.hash in links:
            continue
        try:
            analysis = store.analysis(offender.hash)
        except AdvisorError:  # a missing analysis leaves the row unlinked, not the overview unwritten
            continue
        relative = f"{reports}/{report_stem(offender.name, offender.hash)}.{fmt}"
        rendered = render(analysis, fmt, output.parent / relative, page_size)
        files[relative] = rendered.main
        files.update({f"{reports}/{inner}": data for inner, data in rendered.files.items()})
        links[offender.hash] = relative
    return links, files


def current_rule_name() -> Callable[[str, str], str]:
    """(kind, rule) -> the rule's current name in the built-in packs of that kind (stored rows keep the name
    a rule had when the profile was analysed); a name no pack knows, or an unknown kind, stays as stored."""
    from advisor.packs.load import load_packs

    packs: dict[str, Any] = {}

    def name(kind: str, rule: str) -> str:
        if kind not in packs:
            try:
                packs[kind] = load_packs(kind=kind)
            except AdvisorError:
                packs[kind] = None
        return (packs[kind].canonical(rule) if packs[kind] is not None else None) or rule

    return name


def fleet_summary(store: Store, noise: float = 0.02, top: int = 10) -> FleetSummary:
    """The overview of the store as it is: what the overview renders and the CLI's closing line words."""
    profiles = store.profiles()
    return summarize(profiles, store.findings(profiles), store.units(), str(store.folder), store.analysis_path,
                     noise=noise, top=top, config=limits(), renamed=current_rule_name())


def render_fleet(store: Store, fmt: str, output: Path | None, page_size: str = "a4", noise: float = 0.02,
                 top: int = 10, summary: FleetSummary | None = None) -> Rendered:
    """`summary`: the store's overview when the caller has it already (`fleet_summary`)."""
    from advisor.fleet.overview_report import fleet_document

    config = limits()
    summary = summary or fleet_summary(store, noise, top)
    if fmt == "json":
        return Rendered(summary_json(summary).encode("utf-8"))
    if fmt == "pdf" or output is None:  # no place for report files: the stored analyses are named instead
        return render_document(fleet_document(summary, config, analyses=True), fmt, output, page_size)
    links, reports = offender_reports(store, summary, fmt, output, page_size)
    rendered = render_document(fleet_document(summary, config, links), fmt, output, page_size)
    return Rendered(rendered.main, {**rendered.files, **reports}, charts_folder(output))
