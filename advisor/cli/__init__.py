"""Command line: argument parsing and exit codes only; the work is in advisor.api.

Exit codes: 0 ok; 1 a gate failed (--fail-on); 2 bad input or usage, with one line
`advisor: error: <file>: <problem>` on stderr per problem and no traceback (--debug shows it).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from advisor import __version__
from advisor.core.model import SEVERITIES as SEVERITY_CHOICES

EXAMPLES = """\
examples:
  advisor report profile.ntff -o findings.md        run neuron-profile on the NTFF (NEFF beside it)
  advisor report summary.json -o findings.md        from `neuron-profile view --output-format summary-json`
  advisor report summary.txt                        summary-text; Markdown on stdout
  advisor report summary.json -o analysis.json      the analysis, for compare and re-rendering
  advisor report summary.json --fail-on high        exit 1 when a finding of severity high or above fires
  advisor report summary.json --rules org-rules/ --set weight-reload.min_ratio=4
  advisor metrics summary.json                      every metric with value, unit and source
  advisor rules list                                the rules, with ids, names and severities
  advisor rules show weight-reload                  one rule: condition, params, examples
  advisor rules validate org-rules/                 check a pack (exit 2 listing every problem)
  advisor rules test org-rules/                     run a pack's own examples
"""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2 (argparse's own format adds usage)
        self.exit(2, f"advisor: error: usage: {message} (see `advisor {self.prog.split()[-1]} --help`)\n"
                  if " " in self.prog else f"advisor: error: usage: {message} (see `advisor --help`)\n")


def _input_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("input", type=Path, help="summary-json, summary-text, full JSON trace or .ntff profile, or a "
                                            "folder of profile_rank_<i> files")
    _analysis_options(p)


def _analysis_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--hardware", metavar="NAME|FILE",
                   help="hardware figures: trn1, trn1n, inf2, trn2, trn3, or a YAML file (default: from the "
                        "profile's instance_type)")
    p.add_argument("--entry", help="which profile of a multi-entry summary-json (key or index; default: the "
                                   "longest total_time)")
    p.add_argument("--neuron-profile", metavar="PATH", help="neuron-profile or neuron-explorer executable for .ntff")
    p.add_argument("--neff", metavar="PATH", help="the NEFF the .ntff was captured from (default: the only *.neff "
                                                  "beside it)")
    p.add_argument("--trace", action="store_true",
                   help="for an .ntff: convert the full event trace (neuron-profile --output-format json, or "
                        "neuron-explorer's Parquet) instead of the summary: adds per-engine busy times, hotspots, "
                        "DMA sizes, tensor loads and the event rules; slower, and needs temporary disk for it")
    _rules_option(p)
    p.add_argument("--select", metavar="RULES", action="append", default=[],
                   help="run only these rules: names, ids, categories or globs, comma-separated (repeatable)")
    p.add_argument("--ignore", metavar="RULES", action="append", default=[],
                   help="do not run these rules (same forms as --select)")
    p.add_argument("--set", metavar="RULE.PARAM=VALUE", action="append", default=[], dest="set_params",
                   help="override a rule's threshold, e.g. weight-reload.min_ratio=4 (repeatable)")
    p.add_argument("--max-memory", metavar="SIZE", default="2GiB",
                   help="memory budget for full traces (default 2GiB): a trace larger than half of it is "
                        "streamed instead of loaded whole (slower, flat memory)")
    p.add_argument("--jobs", type=int, metavar="N", help="ranks analysed in parallel for a folder of "
                                                          "profile_rank_<i> files (default: the core count)")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    p.add_argument("--config", metavar="FILE", type=Path,
                   help="settings file (default: advisor.toml or [tool.advisor] in pyproject.toml, searched "
                        "from the working directory upwards)")


def _progress(args: argparse.Namespace):
    """Progress lines on stderr, only for a person watching a terminal (never in CI logs or pipes)."""
    if getattr(args, "quiet", False) or not sys.stderr.isatty():
        return None
    return lambda message: print(f"\r\033[Kadvisor: {message}", end="", file=sys.stderr, flush=True)


def _rules_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--rules", metavar="PATH", type=Path, action="append", default=[],
                   help="extra rule pack file or folder (repeatable)")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="advisor", description="Rules-based performance advisor for AWS Neuron profiles.",
                     epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"advisor {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    report = sub.add_parser("report", help="analyse a profile and write the report",
                            description="Analyse a profile and write the investigation report.",
                            epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    _input_options(report)
    report.add_argument("-o", "--output", type=Path,
                        help="output file; the format follows the extension: .md (charts in <name>_files/), .html, "
                             ".pdf, .json (default: Markdown on stdout)")
    report.add_argument("--format", choices=("md", "json", "html", "pdf"), help="override the output format")
    report.add_argument("--context", metavar="FILE", type=Path,
                        help="investigation context (YAML): title, tracker, notes, workload timings for Amdahl, "
                             "expectations, hypotheses (see docs/context.md)")
    report.add_argument("--page-size", choices=("a4", "letter"), default="a4", help="PDF page size (default a4)")
    report.add_argument("--fail-on", metavar="SEVERITY", choices=SEVERITY_CHOICES,
                        help="exit 1 when a finding at or above this severity fires (the CI gate): "
                             + ", ".join(SEVERITY_CHOICES))

    comparing = sub.add_parser(
        "compare", help="compare attempts: before/after, or a series; CI regression gate",
        description="Compare two attempts (before, after) or a series of them. Each input is a profile in any "
                    "supported format or an analysis JSON saved with `advisor report … -o x.json`.",
        epilog=COMPARE_EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    comparing.add_argument("inputs", type=Path, nargs="+", metavar="INPUT", help="two or more, oldest first")
    comparing.add_argument("-o", "--output", type=Path, help="output file: .md, .html, .pdf or .json "
                                                             "(default: Markdown on stdout)")
    comparing.add_argument("--format", choices=("md", "json", "html", "pdf"), help="override the output format")
    comparing.add_argument("--page-size", choices=("a4", "letter"), default="a4", help="PDF page size (default a4)")
    comparing.add_argument("--label", action="append", default=[], help="a name per input, in order (repeat)")
    comparing.add_argument("--noise", type=float, default=2.0, metavar="PCT",
                           help="relative changes within PCT %% count as unchanged (default 2)")
    comparing.add_argument("--fail-on-regression", type=float, metavar="PCT",
                           help="exit 1 when total time got worse by more than PCT %% (first to last input)")
    comparing.add_argument("--fail-on-new", metavar="SEVERITY", choices=SEVERITY_CHOICES,
                           help="exit 1 when a new finding at or above SEVERITY appears (first to last input)")
    _analysis_options(comparing)

    metrics = sub.add_parser("metrics", help="list every metric with value, unit and source",
                             description="List every metric: value, unit, and whether reported or derived.")
    _input_options(metrics)
    metrics.add_argument("--json", action="store_true", help="print JSON instead of a table")

    rules = sub.add_parser("rules", help="list, show, validate and test rule packs",
                           description="Rule packs: the built-in ones plus any given with --rules.")
    rules_sub = rules.add_subparsers(dest="rules_command", metavar="ACTION", parser_class=_Parser, required=True)
    listing = rules_sub.add_parser("list", help="every rule with id, name, severity, category and title")
    _rules_option(listing)
    show = rules_sub.add_parser("show", help="one rule: condition, params, root cause, recommendation, examples")
    show.add_argument("rule", metavar="NAME|ID")
    _rules_option(show)
    validate = rules_sub.add_parser("validate", help="check packs; exit 2 listing every problem")
    validate.add_argument("paths", metavar="PATH", type=Path, nargs="+")
    test = rules_sub.add_parser("test", help="run the packs' examples (default: the built-in packs); "
                                             "exit 1 on a failure")
    test.add_argument("paths", metavar="PATH", type=Path, nargs="*")
    docs = rules_sub.add_parser("docs", help="write the rule reference (Markdown) into a folder")
    docs.add_argument("folder", type=Path)
    return parser


COMPARE_EXAMPLES = """\
examples:
  advisor compare before.json after.json -o diff.md
  advisor compare baseline-analysis.json new-profile.ntff --fail-on-regression 5 --fail-on-new high
  advisor compare a1.json a2.json a3.json --label "attempt 1" --label "attempt 2" --label "attempt 3" -o series.md
"""


def _split(values: list[str]) -> tuple[str, ...]:
    return tuple(v.strip() for value in values for v in value.split(",") if v.strip())


def _params(values: list[str]) -> dict[str, float]:
    from advisor.core.errors import AdvisorError
    from advisor.core.numbers import as_number

    out = {}
    for item in values:
        key, sep, raw = item.partition("=")
        number = as_number(raw)
        if not sep or "." not in key or number is None:
            raise AdvisorError("--set", f"'{item}' must be RULE.PARAM=NUMBER, e.g. weight-reload.min_ratio=4")
        out[key.strip()] = number
    return out


def _size(text: str) -> int:
    import re

    from advisor.core.errors import AdvisorError

    units = {"": 1, "b": 1, "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40, "kb": 10**3, "mb": 10**6,
             "gb": 10**9, "tb": 10**12, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}  # 2G as ulimit and sort read it
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*", text)
    if not match or match.group(2).lower() not in units or float(match.group(1)) <= 0:
        raise AdvisorError("--max-memory", f"'{text}' is not a size such as 512MiB or 4GiB")
    return int(float(match.group(1)) * units[match.group(2).lower()])


def _settings(args: argparse.Namespace):
    from advisor.cli.settings import load_settings

    return load_settings(args.config, Path.cwd())


def _options(args: argparse.Namespace, settings):
    from advisor.api import AnalyzeOptions
    from advisor.engine.evaluate import Selection
    from advisor.kinds.neuron.adapters import LoadOptions

    selection = Selection(
        select=_split(args.select) or settings.select,
        ignore=settings.ignore + _split(args.ignore),
        params={**settings.params, **_params(args.set_params)},
    )
    return AnalyzeOptions(
        load=LoadOptions(neuron_profile=args.neuron_profile, neff=args.neff, entry=args.entry,
                         max_memory=_size(args.max_memory), trace=args.trace),
        hardware=args.hardware or settings.hardware, rule_paths=(*settings.rules, *args.rules), selection=selection,
        context=getattr(args, "context", None),
    )


def _analysis(args: argparse.Namespace, settings):
    from advisor.api import analyze
    from advisor.core.errors import AdvisorError

    if args.jobs is not None and args.jobs < 1:
        raise AdvisorError("--jobs", "must be at least 1")
    progress = _progress(args)
    try:
        return analyze(args.input, _options(args, settings), jobs=args.jobs, progress=progress)
    finally:
        if progress:
            print(file=sys.stderr)


def _emit(args: argparse.Namespace, rendered) -> None:
    from advisor.core.errors import AdvisorError
    from advisor.report.output import write_report

    if args.output is None:
        if rendered.folder is None and args.format == "pdf":
            raise AdvisorError("-o", "a PDF needs an output file: -o report.pdf")
        sys.stdout.buffer.write(rendered.main)
        sys.stdout.flush()
    else:
        write_report(args.output, rendered.main, rendered.files, rendered.folder)


def _cmd_report(args: argparse.Namespace) -> int:
    from advisor.core.errors import AdvisorError
    from advisor.report.output import check_output, format_for
    from advisor.report.render import render

    fmt = format_for(args.output, args.format)
    if args.output is not None:
        check_output(args.output, [args.input, *([args.context] if args.context else [])])
    settings = _settings(args)
    analysis = _analysis(args, settings)
    if fmt == "pdf" and args.output is None:
        raise AdvisorError("-o", "a PDF needs an output file: -o report.pdf")
    _emit(args, render(analysis, fmt, args.output, args.page_size))
    fail_on = args.fail_on or settings.fail_on
    if fail_on:
        gate = SEVERITY_CHOICES.index(fail_on)
        hits = [f for f in analysis.findings if SEVERITY_CHOICES.index(f.severity) >= gate]
        if hits:
            names = ", ".join(f"{f.name} ({f.severity})" for f in hits)
            print(f"advisor: gate: {len(hits)} finding(s) at or above {fail_on}: {names}", file=sys.stderr)
            return 1
    return 0


def _cmd_metrics(args: argparse.Namespace) -> int:
    import json

    from advisor.core import units as fmt
    from advisor.core.serialize import to_dict

    analysis = _analysis(args, _settings(args))
    if args.json:
        print(json.dumps(to_dict(analysis)["metrics"], indent=2, ensure_ascii=False))
        return 0
    rows = [(m.name, fmt.value(m.value, m.unit), m.unit or "-",
             m.source + (f" ({m.formula})" if m.source == "derived" and m.formula else ""))
            for m in analysis.metrics.values()]
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    for r in rows:
        print(f"{r[0]:<{widths[0]}}  {r[1]:>{widths[1]}}  {r[2]:<{widths[2]}}  {r[3]}")
    return 0


def _cmd_compare(args: argparse.Namespace) -> int:
    from advisor.api import compare_inputs, default_labels
    from advisor.core.errors import AdvisorError
    from advisor.core.model import Series
    from advisor.report.output import check_output, format_for
    from advisor.report.render import render_comparison

    if len(args.inputs) < 2:
        raise AdvisorError("compare", "give at least two inputs: BEFORE AFTER [MORE ...]")
    if args.label and len(args.label) != len(args.inputs):
        raise AdvisorError("--label", f"{len(args.label)} labels for {len(args.inputs)} inputs; give one per input")
    if not 0 <= args.noise < 100:
        raise AdvisorError("--noise", "must be a percentage from 0 to 100")
    fmt = format_for(args.output, args.format)
    if fmt == "pdf" and args.output is None:
        raise AdvisorError("-o", "a PDF needs an output file: -o compare.pdf")
    if args.output is not None:
        check_output(args.output, args.inputs)
    settings = _settings(args)
    labels = args.label or default_labels(args.inputs)
    result = compare_inputs(args.inputs, labels, _options(args, settings), noise=args.noise / 100)
    overall = result.overall if isinstance(result, Series) else result
    if args.fail_on_regression is not None and overall.speedup is None:  # a gate that cannot judge must not pass
        raise AdvisorError("--fail-on-regression", f"total time is unavailable for {overall.before.label} or "
                                                   f"{overall.after.label}, so a regression cannot be judged")
    _emit(args, render_comparison(result, fmt, args.output, args.page_size))
    failures = []
    if args.fail_on_regression is not None:
        slower = 1 / overall.speedup - 1
        if slower * 100 > args.fail_on_regression:
            failures.append(f"total time {slower * 100:+.1f} % ({overall.before.label} → {overall.after.label}), "
                            f"more than {args.fail_on_regression:g} %")
    if args.fail_on_new:
        gate = SEVERITY_CHOICES.index(args.fail_on_new)
        new = [f for f in overall.findings if f.status == "new" and SEVERITY_CHOICES.index(f.severity) >= gate]
        if new:
            failures.append("new finding(s) at or above " + args.fail_on_new + ": "
                            + ", ".join(f"{f.name} ({f.severity})" for f in new))
    for failure in failures:
        print(f"advisor: gate: {failure}", file=sys.stderr)
    return 1 if failures else 0


def _cmd_rules(args: argparse.Namespace) -> int:
    from advisor.cli import rules as rules_cli

    return rules_cli.run(args)


COMMANDS = {"report": _cmd_report, "compare": _cmd_compare, "metrics": _cmd_metrics, "rules": _cmd_rules}


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    from advisor.core.errors import AdvisorError, Problems

    try:
        return COMMANDS[args.command](args)
    except Problems as exc:
        if args.debug:
            raise
        for problem in exc.problems:
            first, _, rest = problem.partition("\n")
            print(f"advisor: error: {first}", file=sys.stderr)
            if rest:
                print(rest, file=sys.stderr)
        return 2
    except AdvisorError as exc:
        if args.debug:
            raise
        print(f"advisor: error: {exc.where}: {exc.problem}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("advisor: error: interrupted", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
    except Exception as exc:  # a bug: still one line and exit 2, never a traceback unless asked
        if args.debug:
            raise
        where = getattr(args, "input", None) or " ".join(map(str, getattr(args, "inputs", []))) or args.command
        said = " ".join(str(exc).split())
        print(f"advisor: error: {where}: internal error ({type(exc).__name__}: {said}); "
              "rerun with --debug and report it", file=sys.stderr)
        return 2
