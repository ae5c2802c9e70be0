"""From the command line and the settings file to `AnalyzeOptions`: rule selection and parameters,
sizes, each profile kind's own options (declared in the kind's `data/options.yaml`), and the progress
printer. Imports nothing heavy at module level: `advisor --help` builds the kind options too."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from advisor.kinds.option_specs import OPTIONS_FILE, KindOption, kind_option_specs

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    from advisor.api import AnalyzeOptions
    from advisor.cli.settings import Settings
    from advisor.kinds import ProfileKind
    from advisor.report.drawing import Drawer

_NAMESPACE = "kind_option:"  # kind options live apart from the command's own dests in the Namespace


# --- rule selection, parameters, sizes ---------------------------------------------------------------

def split(values: Iterable[str]) -> tuple[str, ...]:
    """`--select a,b --select c` → (a, b, c)."""
    return tuple(v.strip() for value in values for v in value.split(",") if v.strip())


def set_params(values: Iterable[str]) -> dict[str, float]:
    """`--set RULE.PARAM=NUMBER` (repeatable) → {"RULE.PARAM": number}."""
    from advisor.cli.settings import rule_param
    from advisor.core.errors import AdvisorError

    out = {}
    for item in values:
        key, sep, raw = item.partition("=")
        param = rule_param(key, raw) if sep else None
        if param is None:
            raise AdvisorError("--set", f"'{item}' must be RULE.PARAM=NUMBER, e.g. weight-reload.min_ratio=4")
        out[param[0]] = param[1]
    return out


def max_memory(text: str | None) -> int:
    """`--max-memory 2GiB` in bytes (inputs.limits.budget); not given, the machine's
    (inputs.limits.default_max_memory)."""
    from advisor.inputs.limits import budget, default_max_memory

    return default_max_memory() if text is None else budget(text)


def memory_default_text() -> str:
    """--max-memory's default in words, with what it comes to on this machine (for argparse: % doubled)."""
    from advisor.core.units import bytes_
    from advisor.inputs.limits import MEMORY_CEILING, MEMORY_FLOOR, MEMORY_SHARE, default_max_memory

    return (f"{MEMORY_SHARE:.0%} of the memory available at the start, between {bytes_(MEMORY_FLOOR)} and "
            f"{bytes_(MEMORY_CEILING)}, and of what the cgroup and `ulimit -v` leave: "
            f"{bytes_(default_max_memory())} here").replace("%", "%%")


# --- each kind's own options -------------------------------------------------------------------------

def add_kind_options(parser: argparse.ArgumentParser, kinds: Sequence[ProfileKind]) -> None:
    """Each kind's options in an argument group titled after it ("AWS Neuron options"). Two kinds may
    share a flag when they declare it alike (same dest and action): it is added once."""
    from advisor.core.errors import AdvisorError

    added: dict[str, KindOption] = {}
    for kind in kinds:
        specs = [s for s in kind_option_specs(kind) if not _shared(s, added, kind)]
        if not specs:
            continue
        group = parser.add_argument_group(f"{kind.title} options")
        for spec in specs:
            extra: dict[str, Any] = {} if spec.action == "store_true" else {"metavar": spec.metavar or
                                                                           spec.dest.upper()}
            try:
                group.add_argument(spec.flag, dest=_NAMESPACE + spec.dest, action=spec.action,
                                   help=spec.help.replace("%", "%%"), **extra)
            except argparse.ArgumentError:
                raise AdvisorError(str(kind.folder / OPTIONS_FILE),
                                   f"{spec.flag} is already an option of `advisor {parser.prog.split()[-1]}`"
                                   ) from None
            added[spec.flag] = spec


def _shared(spec: KindOption, added: dict[str, KindOption], kind: ProfileKind) -> bool:
    from advisor.core.errors import AdvisorError

    earlier = added.get(spec.flag)
    if earlier is None:
        return False
    if (earlier.dest, earlier.action) != (spec.dest, spec.action):
        raise AdvisorError(str(kind.folder / OPTIONS_FILE),
                           f"{spec.flag} is declared differently by {earlier.kind} (dest {earlier.dest}, "
                           f"action {earlier.action})")
    return True


def kind_options(args: argparse.Namespace) -> dict[str, Any]:
    """The kind options given on the command line, by dest (unset ones left out)."""
    values = vars(args)
    return {name[len(_NAMESPACE):]: value for name, value in sorted(values.items())
            if name.startswith(_NAMESPACE) and value is not None and value is not False}


# --- settings, AnalyzeOptions, progress --------------------------------------------------------------

def settings(args: argparse.Namespace) -> Settings:
    """--config FILE, else advisor.toml or [tool.advisor] found from the working directory upwards."""
    from advisor.cli.settings import load_settings

    return load_settings(args.config, Path.cwd())


def analysis_flags_given(args: argparse.Namespace) -> tuple[str, ...]:
    """The command-line options that change what an analysis finds (not how it is shown)."""
    flags = {"--hardware": args.hardware, "--rules": args.rules, "--select": args.select, "--ignore": args.ignore,
             "--set": args.set_params, "--entry": args.entry, "--kind": getattr(args, "kind", None)}
    flags.update({f"--{dest.replace('_', '-')}": value for dest, value in kind_options(args).items()})
    return tuple(flag for flag, value in flags.items() if value)


def _bare_rule(key: str) -> bool:
    return "/" not in key and not any(c in key for c in "*?[")


def settings_names(found: Settings, rule_paths: Sequence[Path]) -> None:
    """A settings file applies to every profile a project analyses, whatever its kind: a bare rule name in it
    that rules of several kinds answer to (`memory-bound`) is refused, naming each as KIND/NAME. On the command
    line the analysed profile's kind decides (the bare name is that kind's rule)."""
    from advisor.core.errors import AdvisorError
    from advisor.packs.model import AmbiguousRule

    named = [("select", k) for k in found.select] + [("ignore", k) for k in found.ignore]
    named += [("set", k.rpartition(".")[0]) for k in found.params]
    named = [(what, key) for what, key in named if _bare_rule(key)]
    if not named:
        return
    from advisor.packs.load import load_packs

    try:
        every_kind = load_packs(rule_paths)
    except AdvisorError:  # packs missing or failing for some kind: analysing a profile says so, with the reason
        return
    for what, key in named:
        try:
            every_kind.rule(key)
        except AmbiguousRule as exc:
            raise AdvisorError(str(found.path), f"{what}: '{key}' is {exc.problem}") from None


def analyze_options(args: argparse.Namespace, found: Settings) -> AnalyzeOptions:
    """The command line over the settings file: --select replaces the file's, --ignore and --set add
    to it, --rules come after the file's packs."""
    from advisor.api import AnalyzeOptions
    from advisor.engine.evaluate import Selection
    from advisor.kinds import LoadOptions

    rule_paths = (*found.rules, *args.rules)
    settings_names(found, rule_paths)
    selection = Selection(
        select=split(args.select) or found.select,
        ignore=found.ignore + split(args.ignore),
        params={**found.params, **set_params(args.set_params)},
    )
    load = LoadOptions(entry=args.entry, max_memory=max_memory(args.max_memory), kind_options=kind_options(args))
    limits = {"max_ranks": args.max_ranks} if getattr(args, "max_ranks", None) is not None else {}
    return AnalyzeOptions(load=load, hardware=args.hardware or found.hardware,
                          rule_paths=rule_paths, selection=selection,
                          context=getattr(args, "context", None), config=found.path,
                          kind=getattr(args, "kind", None), **limits)


def noise(args: argparse.Namespace) -> float:
    """--noise as a fraction, checked: changes within it are "unchanged"."""
    from advisor.core.errors import AdvisorError

    if not 0 <= args.noise < 100:
        raise AdvisorError("--noise", "must be a percentage from 0 to 100")
    return args.noise / 100


def chart_drawer(args: argparse.Namespace, fmt: str) -> AbstractContextManager[Drawer | None]:
    """Who draws the output's charts: a second process where there are charts to draw (a Markdown file, HTML,
    PDF) and `--jobs` is not 1."""
    charted = fmt in ("html", "pdf") or (fmt == "md" and args.output is not None)
    if not charted:  # JSON, or Markdown on stdout: no charts, and no drawing machinery to import
        from contextlib import nullcontext

        return nullcontext(None)
    from advisor.report.drawing import drawing_process

    return drawing_process(args.jobs != 1)


def progress(args: argparse.Namespace) -> Callable[[str], None] | None:
    """Progress lines on stderr, only for a person watching a terminal (never in CI logs or pipes)."""
    if getattr(args, "quiet", False) or not sys.stderr.isatty():
        return None
    return lambda message: print(f"\r\033[Kadvisor: {message}", end="", file=sys.stderr, flush=True)
