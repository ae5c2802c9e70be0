"""`advisor report` (analyse an input, write the report, the --fail-on gate) and `advisor metrics`
(every metric as a table or JSON)."""

from __future__ import annotations

import argparse
import sys

from advisor.cli import options
from advisor.cli.output import emit, output_format


def analysis(args: argparse.Namespace, analyze_options):
    """The input analysed with `analyze_options` (the command line over the settings), or a saved analysis
    JSON as it was analysed; progress on a terminal."""
    from advisor.api import load_analysis
    from advisor.core.errors import AdvisorError

    if args.jobs is not None and args.jobs < 1:
        raise AdvisorError("--jobs", "must be at least 1")
    progress = options.progress(args)
    try:
        return load_analysis(args.input, analyze_options, jobs=args.jobs, progress=progress,
                             refused_when_saved=options.analysis_flags_given(args))
    finally:
        if progress:
            print(file=sys.stderr)


def report(args: argparse.Namespace) -> int:
    from advisor.api import paths_read
    from advisor.gates import severity_gate
    from advisor.report.ci_formats import REPORT_EXTENSIONS, REPORT_FORMATS, implied_format, report_ci
    from advisor.report.render import render

    found = options.settings(args)
    analyze_options = options.analyze_options(args, found)
    args.format = implied_format(args.output, args.format, REPORT_EXTENSIONS)  # -o findings.sarif: SARIF
    fmt = output_format(args, paths_read([args.input], analyze_options), "report.pdf")
    fail_on = args.fail_on or found.fail_on
    with options.chart_drawer(args, fmt) as drawer:  # started first: it loads matplotlib during the analysis
        result = analysis(args, analyze_options)
        interrupted = getattr(args, "interrupted", None)
        if interrupted:  # a Ctrl-C whose exception Python dropped during the analysis ends it before rendering
            interrupted()
        rendered = (report_ci(result, fmt, str(args.input), fail_on) if fmt in REPORT_FORMATS  # CI: docs/ci.md
                    else render(result, fmt, args.output, args.page_size, drawer))
        emit(args, rendered, result)
    failures = severity_gate(result.findings, fail_on)
    for failure in failures:  # the report is written first: the gate explains it
        print(f"advisor: gate: {failure}", file=sys.stderr)
    return 1 if failures else 0


def metrics_table(result) -> str:
    """One line per metric: name, value with its unit, unit, and where it came from."""
    from advisor.core import units

    rows = [(m.name, units.value(m.value, m.unit), m.unit or "-",
             m.source + (f" ({m.formula})" if m.source == "derived" and m.formula else ""))
            for m in result.metrics.values()]
    if not rows:
        return ""
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    return "\n".join(f"{r[0]:<{widths[0]}}  {r[1]:>{widths[1]}}  {r[2]:<{widths[2]}}  {r[3]}" for r in rows)


def metrics(args: argparse.Namespace) -> int:
    import json

    from advisor.core.serialize import to_dict

    result = analysis(args, options.analyze_options(args, options.settings(args)))
    if args.json:
        print(json.dumps(to_dict(result)["metrics"], indent=2, ensure_ascii=False))
    else:
        table = metrics_table(result)
        if table:
            print(table)
    return 0
