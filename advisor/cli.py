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

EXAMPLES = """\
examples:
  advisor report profile.ntff -o findings.md        run neuron-profile on the NTFF (NEFF beside it)
  advisor report summary.json -o findings.md        from `neuron-profile view --output-format summary-json`
  advisor report summary.txt                        summary-text; Markdown on stdout
  advisor report summary.json -o analysis.json      the analysis, for compare and re-rendering
  advisor metrics summary.json                      every metric with value, unit and source
"""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2 (argparse's own format adds usage)
        self.exit(2, f"advisor: error: usage: {message} (see `advisor {self.prog.split()[-1]} --help`)\n"
                  if " " in self.prog else f"advisor: error: usage: {message} (see `advisor --help`)\n")


def _input_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("input", type=Path, help="summary-json, summary-text or .ntff profile")
    p.add_argument("--hardware", metavar="NAME|FILE",
                   help="hardware figures: trn1, trn1n, inf2, trn2, trn3, or a YAML file (default: from the "
                        "profile's instance_type)")
    p.add_argument("--entry", help="which profile of a multi-entry summary-json (key or index; default: the "
                                   "longest total_time)")
    p.add_argument("--neuron-profile", metavar="PATH", help="neuron-profile or neuron-explorer executable for .ntff")
    p.add_argument("--neff", metavar="PATH", help="the NEFF the .ntff was captured from (default: the only *.neff "
                                                  "beside it)")
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
                        help="output file; the format follows the extension: .md, .json (default: Markdown on stdout)")
    report.add_argument("--format", choices=("md", "json", "html", "pdf"), help="override the output format")

    metrics = sub.add_parser("metrics", help="list every metric with value, unit and source",
                             description="List every metric: value, unit, and whether reported or derived.")
    _input_options(metrics)
    metrics.add_argument("--json", action="store_true", help="print JSON instead of a table")
    return parser


def _analysis(args: argparse.Namespace):
    from advisor.adapters import LoadOptions
    from advisor.api import AnalyzeOptions, analyze

    options = AnalyzeOptions(
        load=LoadOptions(neuron_profile=args.neuron_profile, neff=args.neff, entry=args.entry),
        hardware=args.hardware, rule_paths=tuple(args.rules),
    )
    return analyze(args.input, options)


def _cmd_report(args: argparse.Namespace) -> int:
    from advisor.output import format_for, refuse_overwriting_inputs, write_atomic
    from advisor.render import render

    fmt = format_for(args.output, args.format)
    if args.output is not None:
        refuse_overwriting_inputs(args.output, [args.input])
    analysis = _analysis(args)
    data = render(analysis, fmt, args.output)
    if args.output is None:
        sys.stdout.buffer.write(data)
    else:
        write_atomic(args.output, data)
    return 0


def _cmd_metrics(args: argparse.Namespace) -> int:
    import json

    from advisor.report import format as fmt
    from advisor.serialize import to_dict

    analysis = _analysis(args)
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


COMMANDS = {"report": _cmd_report, "metrics": _cmd_metrics}


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    from advisor.errors import AdvisorError
    from advisor.rulepack import PackError

    try:
        return COMMANDS[args.command](args)
    except PackError as exc:
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
        where = getattr(args, "input", None) or args.command
        print(f"advisor: error: {where}: internal error ({type(exc).__name__}: {exc}); "
              "rerun with --debug and report it", file=sys.stderr)
        return 2
