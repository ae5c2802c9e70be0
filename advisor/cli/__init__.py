"""Command line: argument parsing and exit codes only. Each command is its own module (report.py:
report and metrics; compare.py; rules.py), options.py turns arguments and settings into the api's
options, and the work is in advisor.api.

Exit codes: 0 ok; 1 a gate failed (--fail-on, --fail-on-regression, --fail-on-new); 2 bad input or
usage, with one line `advisor: error: <file>: <problem>` on stderr per problem and no traceback
(--debug shows it).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from advisor.cli.usage import Parser, add_global_options
from advisor.core.model import SEVERITIES as SEVERITY_CHOICES
from advisor.core.numbers import COMPARE_NOISE
from advisor.core.version import __version__

if TYPE_CHECKING:
    from advisor.kinds import ProfileKind

EXAMPLES = """\
examples:
  advisor report profile.ntff -o findings.md        run neuron-profile on the NTFF (NEFF beside it)
  advisor report summary.json -o findings.md        from `neuron-profile view --output-format summary-json`
  advisor report summary.txt                        summary-text; Markdown on stdout
  advisor report summary.json -o analysis.json      the analysis, for compare and re-rendering
  advisor report analysis.json -o findings.pdf      re-render a saved analysis (no raw profile needed)
  advisor report summary.json --fail-on high        exit 1 when a finding of severity high or above fires
  advisor report summary.json --rules org-rules/ --set weight-reload.min_ratio=4
  advisor metrics summary.json                      every metric with value, unit and source
  advisor rules list --kind neuron                  the rules of one profile kind, with ids, names, kinds
  advisor rules show weight-reload                  one rule: condition, params, examples
  advisor rules validate org-rules/                 check a pack (exit 2 listing every problem)
  advisor rules test org-rules/                     run a pack's own examples
"""


def finite_percent(text: str) -> float:
    """A percentage option (--noise, --fail-on-regression): a finite number ≥ 0. NaN would trip a gate on
    every comparison and infinity never: both would quietly change what a CI gate does."""
    import math

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"'{text}' must be a finite number of percent, 0 or more")
    return value


def positive_count(text: str) -> int:
    """A count option (--jobs, --workers, --top): a whole number from 1 to 100,000."""
    try:
        value = int(text.strip(), 10) if len(text) <= 12 else None
    except ValueError:
        value = None
    if value is None or not 1 <= value <= 100_000:
        raise argparse.ArgumentTypeError(f"'{text[:20]}' must be a whole number from 1 to 100000")
    return value


def severity(text: str) -> str:
    """A severity, in any case (`--fail-on HIGH`)."""
    return text.strip().lower()


def _input_options(p: argparse.ArgumentParser, kinds: Sequence[ProfileKind]) -> None:
    formats = "; ".join(f"{k.title}: {k.formats}" for k in kinds)
    p.add_argument("input", type=Path, help=f"the profile ({formats})".replace("%", "%%"))
    _analysis_options(p, kinds)


def _analysis_options(p: argparse.ArgumentParser, kinds: Sequence[ProfileKind]) -> None:
    from advisor.cli.options import add_kind_options, memory_default_text

    targets = "; ".join(f"{k.title}: {', '.join(k.data('hardware.yaml').get('targets') or {})}" for k in kinds)
    p.add_argument("--hardware", metavar="NAME|FILE",
                   help=f"hardware figures: a target of the profile kind's table ({targets}) or a YAML file "
                        "(default: the target the profile names)")
    p.add_argument("--entry", help="which profile of an input that holds several: an entry key or index, or a "
                                   "rank (default: the longest total_time)")
    _rules_option(p)
    p.add_argument("--select", metavar="RULES", action="append", default=[],
                   help="run only these rules: names, ids, categories or globs, comma-separated (repeatable)")
    p.add_argument("--ignore", metavar="RULES", action="append", default=[],
                   help="do not run these rules (same forms as --select)")
    p.add_argument("--set", metavar="RULE.PARAM=VALUE", action="append", default=[], dest="set_params",
                   help="override a rule's threshold, e.g. weight-reload.min_ratio=4 (repeatable)")
    p.add_argument("--max-memory", metavar="SIZE",
                   help=f"memory budget (default: {memory_default_text()}): a full trace larger than half of it is "
                        "streamed instead of loaded whole (flat memory); text exports, saved analyses and inflated "
                        "traces are limited by it too (docs/security.md)")
    p.add_argument("--jobs", type=positive_count, metavar="N",
                   help="processes to use: profiles of a folder analysed in parallel (the ranks of a multi-worker "
                        "capture), a report's charts drawn during the analysis (default: the core count; 1: no "
                        "process besides this one)")
    p.add_argument("--max-ranks", type=positive_count, metavar="N",
                   help="most per-rank profiles one folder may hold (default 4096)")
    p.add_argument("--kind", metavar="NAME", choices=[k.name for k in kinds],
                   help="read every input as this profile kind instead of detecting it "
                        f"({', '.join(k.name for k in kinds)})")
    p.add_argument("--config", metavar="FILE", type=Path,
                   help="settings file (default: advisor.toml or [tool.advisor] in pyproject.toml, searched "
                        "from the working directory upwards)")
    add_kind_options(p, kinds)  # --neff, --trace, … from each kind's data/options.yaml


def _rules_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--rules", metavar="PATH", type=Path, action="append", default=[],
                   help="extra rule pack file or folder (repeatable)")


def _document_options(p: argparse.ArgumentParser, what: str, default: str = "Markdown on stdout",
                      ci: tuple[str, ...] = ()) -> None:
    p.add_argument("-o", "--output", type=Path, help=f"output file for {what}: .md, .html, .pdf or .json "
                                                      f"(default: {default})")
    p.add_argument("--format", choices=("md", "json", "html", "pdf", *ci),
                   help="override the output format" + ("; for CI (docs/ci.md): github (workflow annotations, stdout "
                                                        "by default), junit (also from -o x.xml)" if ci else ""))
    p.add_argument("--page-size", choices=("a4", "letter"), default="a4", help="PDF page size (default a4)")


def build_parser() -> argparse.ArgumentParser:
    """The whole command line; each profile kind adds its own options (its data/options.yaml) to the
    commands that read inputs."""
    from advisor.kinds import available

    kinds = available()
    titles = ", ".join(k.title for k in kinds)
    parser = Parser(prog="advisor", description=f"Rules-based performance advisor for ML-accelerator profiles "
                                                 f"(kinds: {titles}).",
                     epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"advisor {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    _report_command(sub, kinds)
    _compare_command(sub, kinds)
    _fleet_command(sub, kinds)
    _history_command(sub)
    _metrics_command(sub, kinds)
    _rules_command(sub)
    add_global_options(parser)  # --debug, --quiet: before or after the command
    return parser


def _report_command(sub: argparse._SubParsersAction[Parser], kinds: Sequence[ProfileKind]) -> None:
    """`advisor report`: analyse a profile and write the report."""
    report = sub.add_parser("report", help="analyse a profile and write the report",
                            description="Analyse a profile and write the investigation report.",
                            epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    _input_options(report, kinds)
    report.add_argument("-o", "--output", type=Path,
                        help="output file; the format follows the extension: .md (charts in <name>_files/), .html, "
                             ".pdf, .json (default: Markdown on stdout)")
    report.add_argument("--format", choices=("md", "json", "html", "pdf", "sarif", "github"),
                        help="override the output format; for CI (docs/ci.md): sarif (SARIF 2.1.0, also from -o "
                             "x.sarif), github (workflow annotations of the findings at or above --fail-on, stdout by "
                             "default)")
    report.add_argument("--context", metavar="FILE", type=Path,
                        help="investigation context (YAML): title, tracker, notes, workload timings for Amdahl, "
                             "expectations, hypotheses (see docs/context.md)")
    report.add_argument("--page-size", choices=("a4", "letter"), default="a4", help="PDF page size (default a4)")
    report.add_argument("--fail-on", metavar="SEVERITY", type=severity, choices=SEVERITY_CHOICES,
                        help="exit 1 when a finding at or above this severity fires (the CI gate): "
                             + ", ".join(SEVERITY_CHOICES))


def _compare_command(sub: argparse._SubParsersAction[Parser], kinds: Sequence[ProfileKind]) -> None:
    """`advisor compare`: attempts before/after or in a series, and the CI regression gates."""
    comparing = sub.add_parser(
        "compare", help="compare attempts: before/after, or a series; CI regression gate",
        description="Compare two attempts (before, after) or a series of them. Each input is a profile in any "
                    "supported format or an analysis JSON saved with `advisor report … -o x.json`.",
        epilog=COMPARE_EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    comparing.add_argument("inputs", type=Path, nargs="+", metavar="INPUT", help="two or more, oldest first")
    comparing.add_argument("-o", "--output", type=Path, help="output file: .md, .html, .pdf or .json "
                                                             "(default: Markdown on stdout)")
    comparing.add_argument("--format", choices=("md", "json", "html", "pdf", "github", "junit"),
                           help="override the output format; for CI (docs/ci.md): github (the gates, new and fixed "
                                "findings as workflow annotations, stdout by default), junit (a test case per gate, "
                                "also from -o x.xml)")
    comparing.add_argument("--page-size", choices=("a4", "letter"), default="a4", help="PDF page size (default a4)")
    comparing.add_argument("--label", action="append", default=[], help="a name per input, in order (repeat)")
    comparing.add_argument("--noise", type=finite_percent, default=100 * COMPARE_NOISE, metavar="PCT",
                           help="relative changes within PCT %% count as unchanged (default 2)")
    comparing.add_argument("--fail-on-regression", type=finite_percent, metavar="PCT",
                           help="exit 1 when total time got worse by more than PCT %% (first to last input)")
    comparing.add_argument("--fail-on-new", metavar="SEVERITY", type=severity, choices=SEVERITY_CHOICES,
                           help="exit 1 when a new finding at or above SEVERITY appears (first to last input)")
    comparing.add_argument("--store", metavar="DIR", type=Path,
                           help="a fleet store: inputs may then be store:NAME@LABEL (a profile stored by "
                                "`advisor fleet`)")
    _analysis_options(comparing, kinds)


def _fleet_command(sub: argparse._SubParsersAction[Parser], kinds: Sequence[ProfileKind]) -> None:
    """`advisor fleet`: many profiles analysed into a store, and the fleet overview."""
    fleet = sub.add_parser(
        "fleet", help="analyse many profiles on dask.distributed into a store, and write the fleet overview",
        description="Find every profile under the paths (folders recursively, globs), analyse each on a dask "
                    "local cluster (or --scheduler ADDRESS), store rows and analyses in a Parquet store, and write "
                    "the fleet overview. Without paths, the overview is written from the store alone.",
        epilog=FLEET_EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    fleet.add_argument("paths", nargs="*", metavar="PATH", help="profiles, folders (searched recursively) or globs")
    fleet.add_argument("--store", metavar="DIR", type=Path, required=True,
                       help="the store folder (created when missing); re-runs skip profiles already stored")
    _document_options(fleet, "the fleet overview", "with PATHs none, the run fills the store; without, Markdown on "
                                                   "stdout", ci=("github", "junit"))
    fleet.add_argument("--label", help="a label for this run's profiles (e.g. a date or commit), ordering the "
                                       "trends when profiles carry no capture time")
    fleet.add_argument("--force", action="store_true", help="re-analyse profiles already in the store")
    fleet.add_argument("--workers", type=positive_count, metavar="N",
                       help="worker processes of the local cluster (default: the core count); 1 runs serially "
                            "without dask")
    fleet.add_argument("--scheduler", metavar="ADDRESS",
                       help="an existing dask.distributed scheduler (tcp://host:8786); its workers must see the "
                            "profiles and the store at the same paths")
    fleet.add_argument("--noise", type=finite_percent, default=100 * COMPARE_NOISE, metavar="PCT",
                       help="trend changes within PCT %% count as unchanged (default 2)")
    fleet.add_argument("--top", type=positive_count, default=10, metavar="N", help="top offenders listed (default 10)")
    fleet.add_argument("--context", metavar="FILE", type=Path,
                       help="investigation context (YAML) judged on every profile")
    _analysis_options(fleet, kinds)


def _history_command(sub: argparse._SubParsersAction[Parser]) -> None:
    """`advisor history`: one kernel's attempts in a fleet store."""
    history = sub.add_parser("history", help="one kernel's attempts in a fleet store: time, speedup, findings",
                             description="Every stored attempt of one kernel or model, in order (capture time, "
                                         "else run): time, speedup against the first and the previous, findings "
                                         "fixed and new, with a chart.")
    history.add_argument("name", metavar="NAME", help="the kernel or model name as the store has it")
    history.add_argument("--store", metavar="DIR", type=Path, required=True, help="the fleet store")
    _document_options(history, "the history")
    history.add_argument("--noise", type=finite_percent, default=100 * COMPARE_NOISE, metavar="PCT",
                         help="changes within PCT %% count as unchanged (default 2)")


def _metrics_command(sub: argparse._SubParsersAction[Parser], kinds: Sequence[ProfileKind]) -> None:
    """`advisor metrics`: every metric with value, unit and source."""
    metrics = sub.add_parser("metrics", help="list every metric with value, unit and source",
                             description="List every metric: value, unit, and whether reported or derived.")
    _input_options(metrics, kinds)
    metrics.add_argument("--json", action="store_true", help="print JSON instead of a table")


def _rules_command(sub: argparse._SubParsersAction[Parser]) -> None:
    """`advisor rules list|show|validate|test|docs`: the rule packs."""
    rules = sub.add_parser("rules", help="list, show, validate and test rule packs",
                           description="Rule packs: the built-in ones plus any given with --rules.")
    rules_sub = rules.add_subparsers(dest="rules_command", metavar="ACTION", parser_class=Parser, required=True)
    listing = rules_sub.add_parser("list", help="every rule with id, name, severity, category and title")
    listing.add_argument("--kind", metavar="NAME", help="only the rules of packs that apply to this profile kind")
    _rules_option(listing)
    show = rules_sub.add_parser("show", help="one rule: condition, params, root cause, recommendation, examples")
    show.add_argument("rule", metavar="[KIND/]NAME|ID")
    show.add_argument("--kind", metavar="NAME", help="the profile kind whose rule a bare NAME is")
    show.add_argument("--json", action="store_true", help="print the explanation as JSON")
    _rules_option(show)
    validate = rules_sub.add_parser("validate", help="check packs; exit 2 listing every problem")
    validate.add_argument("paths", metavar="PATH", type=Path, nargs="+")
    test = rules_sub.add_parser("test", help="run the packs' examples (default: the built-in packs); "
                                             "exit 1 on a failure")
    test.add_argument("paths", metavar="PATH", type=Path, nargs="*")
    docs = rules_sub.add_parser("docs", help="write the rule reference (Markdown) into a folder")
    docs.add_argument("folder", type=Path)


COMPARE_EXAMPLES = """\
examples:
  advisor compare before.json after.json -o diff.md
  advisor compare baseline-analysis.json new-profile.ntff --fail-on-regression 5 --fail-on-new high
  advisor compare a1.json a2.json a3.json --label "attempt 1" --label "attempt 2" --label "attempt 3" -o series.md
"""


FLEET_EXAMPLES = """\
examples:
  advisor fleet samples --store fleet-store -o fleet.md           a local cluster starts and stops by itself
  advisor fleet /nightly/2026-11-23 --store /shared/store --label 2026-11-23 -o fleet.html
  advisor fleet --store /shared/store -o fleet.pdf                the overview from the store alone
  advisor fleet runs/ --store s --scheduler tcp://head:8786       an existing cluster (shared filesystem)
  advisor history weight_reload --store s -o history.md
  advisor compare store:weight_reload@2026-11-20 store:weight_reload@2026-11-23 --store s
"""


# Each command's module is imported only when it runs, so `advisor --help` stays fast.
COMMANDS = {"report": ("advisor.cli.report", "report"), "metrics": ("advisor.cli.report", "metrics"),
            "compare": ("advisor.cli.compare", "compare"), "rules": ("advisor.cli.rules", "run"),
            "fleet": ("advisor.cli.fleet", "fleet"), "history": ("advisor.cli.history", "history")}


def _run(args: argparse.Namespace) -> int:
    import importlib

    module, function = COMMANDS[args.command]
    return getattr(importlib.import_module(module), function)(args)


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else [str(a) for a in argv]
    try:
        parser = build_parser()  # a broken plug-in kind or options.yaml: one line too
        args = parser.parse_args(argv)
    except Exception as exc:  # mapped to an exit code; re-raised with --debug
        return _exit_code(exc, "--debug" in argv, "advisor")
    except KeyboardInterrupt:
        print("advisor: error: interrupted", file=sys.stderr)
        return INTERRUPTED
    if args.command is None:
        parser.print_help()
        return 2
    from advisor.core.interrupts import Interrupts

    try:
        with Interrupts().installed() as interrupts:
            args.interrupted = interrupts.check  # long loops call it: see core/interrupts.py
            code = _run(args)
            interrupts.check()  # a Ctrl-C whose exception Python dropped still ends the command as interrupted
            return code
    except Exception as exc:  # mapped to an exit code; re-raised with --debug
        where = getattr(args, "input", None) or " ".join(map(str, getattr(args, "inputs", []))) or args.command
        return _exit_code(exc, args.debug, str(where), args.command)
    except KeyboardInterrupt:  # every file is staged before it is renamed into place: nothing half-written stays
        print("advisor: error: interrupted", file=sys.stderr)
        return INTERRUPTED


def run() -> int:
    """The console script: `main`, after which the process ends without the cycle collector's passes over
    everything the run made (interpreter shutdown makes several: 0.15 s after a PDF report)."""
    import gc

    code = main()
    gc.freeze()
    return code


INTERRUPTED = 130  # the shell's code for a command ended by Ctrl-C (128 + SIGINT)


def _exit_code(exc: Exception, debug: bool, where: str, command: str = "advisor") -> int:
    """2 for bad input or usage (one `advisor: error:` line per problem), 0 for a closed pipe, 2 with
    one line for an operating-system error (naming its path, not the input) or a bug; --debug re-raises
    instead (the traceback)."""
    from advisor.core.errors import AdvisorError, Problems
    from advisor.core.files import os_problem

    if isinstance(exc, BrokenPipeError):
        return 0
    if debug:
        raise exc
    if isinstance(exc, OSError):  # permission denied, disk full, read-only: what it is, where it happened
        print(f"advisor: error: {exc.filename or command}: {os_problem(exc)}", file=sys.stderr)
        return 2
    if isinstance(exc, MemoryError):
        print(f"advisor: error: {where}: out of memory: the machine had less free memory than --max-memory let "
              "advisor plan for; a smaller --max-memory makes the readers stream or refuse large inputs within it",
              file=sys.stderr)
        return 2
    if isinstance(exc, Problems):
        for problem in exc.problems:
            first, _, rest = problem.partition("\n")
            print(f"advisor: error: {first}", file=sys.stderr)
            if rest:
                print(rest, file=sys.stderr)
    elif isinstance(exc, AdvisorError):
        print(f"advisor: error: {exc.where}: {exc.problem}", file=sys.stderr)
    else:  # a bug: still one line and exit 2, never a traceback unless asked
        said = " ".join(str(exc).split())
        print(f"advisor: error: {where}: internal error ({type(exc).__name__}: {said}); "
              "rerun with --debug and report it", file=sys.stderr)
    return 2
