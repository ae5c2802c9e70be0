"""`advisor compare`: two attempts (before, after) or a series, and the CI gates on the first against
the last (--fail-on-regression, --fail-on-new)."""

from __future__ import annotations

import argparse
import sys

from advisor.cli import options
from advisor.cli.output import emit, output_format


def compare(args: argparse.Namespace) -> int:
    from advisor.api import compare_inputs, default_labels
    from advisor.core.errors import AdvisorError
    from advisor.gates import compare_gates
    from advisor.report.render import render_comparison

    if len(args.inputs) < 2:
        raise AdvisorError("compare", "give at least two inputs: BEFORE AFTER [MORE ...]")
    if args.label and len(args.label) != len(args.inputs):
        raise AdvisorError("--label", f"{len(args.label)} labels for {len(args.inputs)} inputs; give one per input")
    if not 0 <= args.noise < 100:
        raise AdvisorError("--noise", "must be a percentage from 0 to 100")
    fmt = output_format(args, args.inputs, "compare.pdf")
    labels = args.label or default_labels(args.inputs)
    result = compare_inputs(args.inputs, labels, options.analyze_options(args, options.settings(args)),
                            noise=args.noise / 100, shaping=options.analysis_flags_given(args))
    failures = compare_gates(result, args.fail_on_regression, args.fail_on_new)  # may refuse: before writing
    emit(args, render_comparison(result, fmt, args.output, args.page_size))
    for failure in failures:
        print(f"advisor: gate: {failure}", file=sys.stderr)
    return 1 if failures else 0
