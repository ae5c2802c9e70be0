"""`advisor compare`: two attempts (before, after) or a series, and the CI gates on the first against
the last (--fail-on-regression, --fail-on-new)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from advisor.cli import options
from advisor.cli.output import emit, output_format


def compare(args: argparse.Namespace) -> int:
    from advisor.api import check_compare_inputs, compare_inputs, default_labels, paths_read
    from advisor.gates import new_findings_gate, regression_gate
    from advisor.report.ci_formats import COMPARE_FORMATS, GATE_EXTENSIONS, implied_format
    from advisor.report.render import render_comparison

    check_compare_inputs(args.inputs, args.label)
    noise = options.noise(args)
    inputs, stored = _store_inputs(args.inputs, args.store)
    analyze_options = options.analyze_options(args, options.settings(args))
    args.format = implied_format(args.output, args.format, GATE_EXTENSIONS)  # -o gates.xml: JUnit
    fmt = output_format(args, paths_read(inputs, analyze_options), "compare.pdf",
                        protected=[args.store] if args.store else [])
    labels = args.label or [stored.get(i) or label for i, label in enumerate(default_labels(args.inputs))]
    with options.chart_drawer(args, fmt) as drawer:
        result = compare_inputs(inputs, labels, analyze_options, noise=noise,
                                shaping=options.analysis_flags_given(args))
        # may refuse (no total time, different work): before writing
        regression = regression_gate(result, args.fail_on_regression)
        new = new_findings_gate(result, args.fail_on_new)
        failures = [*regression, *new]
        rendered = (_ci(args, result, fmt, regression, new) if fmt in COMPARE_FORMATS  # CI: docs/ci.md
                    else render_comparison(result, fmt, args.output, args.page_size, drawer))
        emit(args, rendered, result)
    for failure in failures:
        print(f"advisor: gate: {failure}", file=sys.stderr)
    return 1 if failures else 0


def _ci(args: argparse.Namespace, result, fmt: str, regression: list[str], new: list[str]):
    """The gates as GitHub annotations or JUnit test cases; `file=` is the last input as given."""
    from advisor.report.ci_formats import compare_gates, comparison_ci

    gates = compare_gates(regression, None if args.fail_on_regression is None else
                          f"--fail-on-regression {args.fail_on_regression:g}", new,
                          None if args.fail_on_new is None else f"--fail-on-new {args.fail_on_new}")
    return comparison_ci(result, fmt, str(args.inputs[-1]), gates, args.fail_on_new)


def _store_inputs(inputs: list[Path], folder: Path | None) -> tuple[list[Path], dict[int, str]]:
    """`store:NAME@LABEL` inputs mapped to their stored analyses, and the label each gives (NAME@LABEL)."""
    from advisor.core.errors import AdvisorError
    from advisor.fleet.lookup import PREFIX, is_store_spec

    specs = {i: str(p) for i, p in enumerate(inputs) if is_store_spec(str(p))}
    if not specs:
        return list(inputs), {}
    if folder is None:
        raise AdvisorError(specs[min(specs)], "a store: input needs --store DIR (the fleet store that holds it)")
    from advisor.fleet.lookup import resolve
    from advisor.fleet.store import Store

    store = Store.open(folder)
    return ([resolve(specs[i], store) if i in specs else p for i, p in enumerate(inputs)],
            {i: spec[len(PREFIX):] for i, spec in specs.items()})
