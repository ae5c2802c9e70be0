"""Where a command's document goes: the format from -o / --format, checked before any work, and the
rendered bytes written to the file (with its chart folder) or stdout; then one closing line on stderr naming
what was written and its verdict (`advisor: wrote findings.md: 3 findings, verdict weight-reload`), which
--quiet silences. Nothing but the document ever goes to stdout."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from advisor.core.comparison import Comparison, Series
    from advisor.core.model import Analysis
    from advisor.fleet.history import History
    from advisor.fleet.store import Store
    from advisor.fleet.summary import FleetSummary
    from advisor.report.render import Rendered

FORMAT_NAMES = {"md": "Markdown", "json": "JSON", "html": "HTML", "pdf": "PDF", "sarif": "SARIF",
                "junit": "JUnit XML", "github": "GitHub annotations"}


def output_format(args: argparse.Namespace, inputs: Iterable[Path], example: str,
                  protected: Iterable[Path] = ()) -> str:
    """-o and --format checked before any analysis (report.output.checked_format, which the notebook API's
    `save` makes too): neither the output nor its chart folder is an input, inside a folder read, or inside
    `protected`."""
    from advisor.report.output import checked_format

    return checked_format(args.output, args.format, inputs, example, protected)


def emit(args: argparse.Namespace, rendered: Rendered, about: Any = None) -> None:
    """The rendered document to -o (charts first, all or nothing) or to stdout, then the closing line on
    stderr: what was written and the verdict of `about` (the command's analysis, comparison or store), unless
    --quiet; a note names the files in the chart folder that advisor did not write and so left alone."""
    from advisor.report.output import write_report

    quiet = getattr(args, "quiet", False)
    if args.output is None:
        sys.stdout.buffer.write(rendered.main)
        sys.stdout.flush()
        where = f"{FORMAT_NAMES.get(args.format or 'md', args.format)} to stdout"
        result = None
    else:
        result = write_report(args.output, rendered.main, rendered.files, rendered.folder)
        where = str(args.output)
    if not quiet:
        verdict = closing(args, about)
        print(f"advisor: wrote {where}" + (f": {verdict}" if verdict else ""), file=sys.stderr)
    note = result.note() if result is not None else None
    if note and not quiet:
        print(f"advisor: note: {note}", file=sys.stderr)


def closing(args: argparse.Namespace, about: Any) -> str | None:
    """The verdict of what a command wrote, in a few words (None: the command gave nothing to judge)."""
    command = getattr(args, "command", None)
    if about is None:
        return None
    if command == "report":
        return report_verdict(about)
    if command == "compare":
        return compare_verdict(about)
    if command == "history":
        return history_verdict(about)
    if command == "fleet":
        return fleet_verdict(about, args.noise / 100, args.top)
    return None


def report_verdict(analysis: Analysis) -> str:
    """`3 findings, verdict weight-reload`: the count and the root cause the report's verdict names."""
    from advisor.core.units import plural
    from advisor.report.findings import root_causes

    causes = root_causes(analysis)
    cause = f"verdict {causes[0].name}" if causes else "no cause found"
    return f"{plural(len(analysis.findings), 'finding')}, {cause}"


def compare_verdict(comparison: Comparison | Series) -> str:
    """`1.67× faster, 1 fixed, 0 new` (first against last of a series, after the count of attempts), or why
    no speedup is claimed, as the report's headline says it."""
    from advisor.core.comparison import Series

    if isinstance(comparison, Series):
        return f"{len(comparison.sides)} attempts, first to last {compare_verdict(comparison.overall)}"
    fixed = sum(f.status == "fixed" for f in comparison.findings)
    new = sum(f.status == "new" for f in comparison.findings)
    return f"{_speedup_words(comparison)}, {fixed} fixed, {new} new"


def _speedup_words(c: Comparison) -> str:
    """The report headline's claim (`speedup_status`) in a few words."""
    from advisor.core import units
    from advisor.report.compare_build import OTHER_STEPS, OTHER_WORK, UNAVAILABLE, UNCHANGED, speedup_status

    status = speedup_status(c)
    if status == UNAVAILABLE or c.speedup is None:
        return "no speedup (a time is unavailable on one side)"
    if status == UNCHANGED:
        return f"unchanged within the {units.percent(c.noise)} noise floor"
    factor = units.speedup(max(c.speedup, 1 / c.speedup))
    if status in (OTHER_STEPS, OTHER_WORK):
        return f"not like-for-like (different work), time {factor} {'shorter' if c.speedup > 1 else 'longer'}"
    return f"{factor} {status}{' per step' if c.speedup_of != 'total_time' else ''}"


def history_verdict(history: History) -> str:
    """`4 attempts of weight_reload, last 1.67× faster than the first, 1 regression`."""
    from advisor.core import units

    attempts = history.attempts
    words = [f"{units.plural(len(attempts), 'attempt')} of {history.name}"]
    last = attempts[-1].vs_first if attempts else None
    if last is not None and last > 0:
        words.append(f"last {units.speedup(max(last, 1 / last))} {'faster' if last >= 1 else 'slower'} than the first")
    regressions = sum(a.regression for a in attempts)
    return ", ".join([*words, units.plural(regressions, "regression")])


def fleet_verdict(about: Store | FleetSummary, noise: float, top: int) -> str:
    """`12 profiles, 1 failed, top root cause weight-reload, 0 regressions` as the overview counts them (the
    overview's own summary where the command has it, else the store's)."""
    from advisor.core import units
    from advisor.fleet.render import fleet_summary
    from advisor.fleet.store import Store

    summary = fleet_summary(about, noise, top) if isinstance(about, Store) else about
    cause = f"top root cause {summary.root_causes[0].rule}" if summary.root_causes else "no root cause found"
    return (f"{units.plural(summary.profiles, 'profile')}, {summary.failed} failed, {cause}, "
            f"{units.plural(summary.regressions, 'regression')}")
