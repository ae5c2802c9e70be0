"""What the CLI and notebooks call: analyse an input of any profile kind, re-read a saved analysis,
compare attempts. Several profiles of one input (the ranks of a capture folder) fan out through a
`concurrent.futures.Executor`: a process pool by default, or one the caller brings (a
dask.distributed `Client.get_executor()` runs them on a cluster)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from advisor.comparing.diff import DEFAULT_NOISE, compare, compare_series, entry_key
from advisor.core import serialize
from advisor.core.comparison import Comparison, Series
from advisor.core.errors import AdvisorError
from advisor.core.model import Analysis, AnalysisSettings, Finding, Hardware, HiddenFinding, Profile
from advisor.core.trace import text_fields
from advisor.core.version import __version__
from advisor.engine.evaluate import Selection, evaluate
from advisor.inputs.limits import saved_analysis_limit
from advisor.investigation.context import judge, load_context
from advisor.kinds import LoadOptions, detect
from advisor.kinds import get as get_kind
from advisor.kinds.base import DEFAULT_MAX_RANKS, Progress
from advisor.kinds.check import check_saved_tables
from advisor.kinds.contract import summarize_events
from advisor.kinds.entries import choose
from advisor.metrics.derive import derive, hardware_env
from advisor.metrics.hardware import resolve
from advisor.overview import with_overview
from advisor.packs.load import PackCache, load_packs
from advisor.packs.model import RuleSet

if TYPE_CHECKING:  # the process pool is imported where a folder's profiles are analysed on it
    from concurrent.futures import Executor, Future


@dataclass(frozen=True)
class AnalyzeOptions:
    load: LoadOptions = field(default_factory=LoadOptions)
    hardware: str | None = None  # --hardware NAME|FILE
    rule_paths: Sequence[Path] = ()
    selection: Selection = field(default_factory=Selection)
    context: Path | None = None  # --context FILE: the investigation context
    config: Path | None = None  # the settings file the selection came from, recorded in the analysis
    max_ranks: int = DEFAULT_MAX_RANKS  # --max-ranks: the most profiles of a folder analysed
    kind: str | None = None  # --kind NAME: read the input as this profile kind instead of detecting it


def paths_read(inputs: Sequence[Path], options: AnalyzeOptions) -> list[Path]:
    """Every file or folder a run with these options reads: the inputs, the investigation context, the rule
    packs and the settings file. An output is none of them and lies inside none (report.output.check_output),
    whether the CLI or the notebook API writes it."""
    return [*inputs, *((options.context,) if options.context else ()), *options.rule_paths,
            *((options.config,) if options.config else ())]


def check_compare_inputs(paths: object, labels: Sequence[str] | None) -> None:
    """Two or more inputs, given as a list (a lone path is not iterated letter by letter), and a label for
    each when labels are given."""
    if isinstance(paths, (str, bytes, os.PathLike)) or not isinstance(paths, Sequence):
        raise AdvisorError("compare", f"give a list of two or more inputs, not {type(paths).__name__} "
                                      f"{str(paths)[:80]!r}")
    if len(paths) < 2:
        raise AdvisorError("compare", "give at least two inputs: BEFORE AFTER [MORE ...]")
    if labels and len(labels) != len(paths):
        raise AdvisorError("--label", f"{len(labels)} labels for {len(paths)} inputs; give one per input")


def _notes(profile: Profile, analysis_hw: object, metrics: dict, chosen_by: str) -> list[str]:
    notes = list(profile.notes)
    if analysis_hw is None:
        notes.append("Hardware unknown (the profile does not say which device it ran on and no --hardware was "
                     "given): metrics that need peak FLOP/s or bandwidth are unavailable.")
    if len(profile.source.entries) > 1:
        others = [e for e in profile.source.entries if e != profile.source.entry]
        notes.append(f"The file holds {len(profile.source.entries)} profiles; this report analyses "
                     f"{profile.source.entry} ({chosen_by}). Others: {', '.join(others)}. "
                     "Choose one with --entry.")
    for metric in metrics.values():
        if metric.check and metric.check.agrees is False:
            notes.append(
                f"{metric.name}: reported {metric.value:.6g} but {metric.formula} gives "
                f"{metric.check.derived_value:.6g} ({metric.check.relative_difference:.1%} apart, more than "
                f"{metric.check.tolerance:.0%})."
            )
    return notes


def _hidden(ruleset: RuleSet, metrics: dict, hw: Hardware | None, selection: Selection,
            findings: Sequence[Finding], info: Mapping[str, str] | None = None) -> tuple[HiddenFinding, ...]:
    """What --ignore hid beyond the ignored rules' own findings: rules that require an ignored rule (they
    were skipped) and rules an ignored one explains (now shown as root causes). Found by evaluating again
    without the ignore list, only when there is one."""
    if not selection.ignore:
        return ()
    ignored = {r.name for r in ruleset.rules} - Selection(ignore=selection.ignore).resolve(ruleset)
    full = {f.name: f for f in evaluate(ruleset, metrics, hw, replace(selection, ignore=()), info).findings}
    shown = {f.name: f for f in findings}
    hidden = []
    for f in full.values():
        if f.name in ignored:
            continue
        required = [r for r in f.because if r in ignored]
        explaining = [x.name for x in full.values() if x.name in ignored and f.name in x.explains]
        if f.name not in shown and required:
            hidden.append(HiddenFinding(f.name, f.title, f"requires ignored rule {', '.join(required)}"))
        elif f.name in shown and shown[f.name].root_cause and not f.root_cause and explaining:
            hidden.append(HiddenFinding(f.name, f.title, f"shown as a root cause: ignored rule "
                                                         f"{', '.join(explaining)} explains it"))
    return tuple(hidden)


def _settings(selection: Selection, hardware: str | None, config: Path | None,
              hidden: tuple[HiddenFinding, ...]) -> AnalysisSettings:
    return AnalysisSettings(select=selection.select, ignore=selection.ignore, params=dict(selection.params),
                            hardware=hardware, config=str(config) if config else None, hidden=hidden)


def analyze_profile(profile: Profile, ruleset: RuleSet, hardware_override: str | None = None,
                    selection: Selection | None = None, context: Path | None = None,
                    chosen_by: str = "the longest total_time", config: Path | None = None) -> Analysis:
    kind = get_kind(profile.kind)
    ruleset = ruleset.for_kind(kind.name) or ruleset  # every kind's rules (load_packs()): this profile's kind's
    metadata = profile.trace.metadata if profile.trace is not None else None
    hw = resolve(kind, {**profile.values, **profile.info}, hardware_override, metadata)
    events = kind.events() if profile.trace is not None else None
    trace, from_events = (summarize_events(events, profile.trace, profile.values.get("total_time"), hw)
                          if events and profile.trace is not None else (None, None))
    metrics = derive(profile, hw, ruleset, from_events)
    selection = selection or Selection()
    texts = text_fields(profile.info, trace)
    result = evaluate(ruleset, metrics, hw, selection, texts)
    settings = _settings(selection, hardware_override, config,
                         _hidden(ruleset, metrics, hw, selection, result.findings, texts))
    investigation = None
    if context is not None:
        known = {*metrics, *ruleset.inputs, *(m.name for m in ruleset.metrics), *ruleset.hardware_names}
        env = {**hardware_env(hw), **{n: m.value for n, m in metrics.items()}}
        units = {**{i.name: i.unit for i in ruleset.inputs.values()}, **{m.name: m.unit for m in ruleset.metrics},
                 **{n: m.unit for n, m in metrics.items()}}
        investigation = judge(load_context(context, known, units), env, metrics)
    return Analysis(
        advisor_version=__version__, source=profile.source, info=dict(profile.info), hardware=hw,
        metrics=metrics, findings=result.findings, not_applicable=result.not_applicable,
        outcomes=result.outcomes, packs={p.name: p.version for p in ruleset.packs},
        notes=tuple(_notes(profile, hw, metrics, chosen_by)), investigation=investigation, trace=trace,
        vendor_findings=profile.vendor_findings, settings=settings, bounds=result.bounds, kind=profile.kind,
    )


def analyze(path: Path, options: AnalyzeOptions | None = None, jobs: int | None = None,
            progress: Progress | None = None, executor: Executor | None = None,
            packs: PackCache | None = None) -> Analysis:
    """One input of any kind, or a saved analysis JSON (read back as it was analysed). A file holding several
    profiles, or a folder of separately captured ones (per-rank files), gives the analysis of the chosen one
    (default: the slowest) with an overview of all of them; the members of a folder run on `executor`, or on a
    pool of `jobs` processes. `packs` keeps the rule sets loaded across calls (many profiles in one process)."""
    options = options or AnalyzeOptions()
    saved = serialize.read_if_analysis(path, *saved_analysis_limit(options.load.max_memory))
    if saved is not None:  # a saved analysis, as it was analysed (as load_analysis reads it)
        return _as_saved(path, saved, options, (), packs)
    return _analyze_input(path, options, jobs, progress, executor, packs)


def _analyze_input(path: Path, options: AnalyzeOptions, jobs: int | None = None, progress: Progress | None = None,
                   executor: Executor | None = None, packs: PackCache | None = None) -> Analysis:
    """A profile input, once it is known not to be a saved analysis (its head is read once, not again here)."""
    if jobs is not None and jobs < 1:
        raise AdvisorError("--jobs", f"must be at least 1, got {jobs}")
    kind = get_kind(options.kind) if options.kind else detect(path)
    foreign = [f"--{name.replace('_', '-')}" for name in sorted(set(options.load.kind_options) - kind.option_dests())]
    if foreign:
        raise AdvisorError(str(path), f"{', '.join(foreign)}: not an option of {kind.title} inputs, which this is")
    adapters = kind.adapters()
    members = (adapters.members(path, options.max_ranks) if path.is_dir() else None) or []
    if members:
        # a folder's members are its kind's files: read as that kind, not detected one by one
        return _analyze_members(path, members, replace(options, kind=kind.name), jobs, progress, executor, packs)
    ruleset = packs.get(kind.name) if packs is not None else load_packs(options.rule_paths, kind=kind.name)
    profiles = adapters.load(path, replace(options.load, progress=progress))
    entry, flag = options.load.entry, "--entry"
    for dest in kind.entry_option_dests():  # a kind's own way to pick one (ncu: --kernel NAME|ID)
        if entry is None and options.load.option(dest) is not None:
            entry, flag = str(options.load.option(dest)), f"--{dest.replace('_', '-')}"
    profile = choose(profiles, entry, str(path), flag)
    chosen_by = f"chosen with {flag}" if entry is not None else "the longest total_time"
    if len(profiles) == 1:
        if profile.trace is not None and progress:
            progress("analysing the events")
        return analyze_profile(profile, ruleset, options.hardware, options.selection, options.context,
                               config=options.config)
    analyses = [analyze_profile(p, ruleset, options.hardware, options.selection,
                                options.context if p is profile else None, chosen_by, options.config)
                for p in profiles]
    return with_overview(analyses, [p.source.entry or "profile" for p in profiles], profiles.index(profile),
                         ruleset, options.selection, _hidden)


def _analyze_members(folder: Path, members: Sequence[tuple[str, Path]], options: AnalyzeOptions,
                     jobs: int | None, progress: Progress | None, executor: Executor | None,
                     packs: PackCache | None) -> Analysis:
    """Each member on its own (no --entry or --context inside it), the chosen one re-analysed with the
    investigation context."""
    plain = replace(options, context=None, load=replace(options.load, entry=None, progress=None))
    workers = max(1, min(jobs or os.cpu_count() or 1, len(members)))  # never more processes than ranks
    names = [name for name, _ in members]
    if executor is None and workers == 1:
        analyses = []
        for i, (_, path) in enumerate(members):
            if progress:
                progress(f"analysing {i + 1}/{len(members)}")
            try:
                analyses.append(_analyze_input(path, plain, packs=packs))
            except AdvisorError as exc:
                raise _rank_failure(exc, 1, [p for _, p in members]) from None
    else:
        from concurrent.futures import ProcessPoolExecutor

        pool = executor or ProcessPoolExecutor(max_workers=workers)
        try:
            analyses = _pooled(pool, [path for _, path in members], plain, progress, window=2 * workers)
        finally:
            if executor is None:
                pool.shutdown(cancel_futures=True)
    entry = options.load.entry
    if entry is not None:
        wanted = [i for i, name in enumerate(names) if entry in (name, name.rpartition(" ")[2])]
        if not wanted:
            raise AdvisorError(str(folder), f"--entry {entry}: no such entry; the folder holds {', '.join(names)}")
        chosen = wanted[0]
    else:
        chosen = max(range(len(analyses)), key=lambda i: (analyses[i].value("total_time") or 0.0, -i))
    if options.context is not None:  # the investigation context belongs to the profile reported in full
        analyses[chosen] = _analyze_input(members[chosen][1], replace(plain, context=options.context), packs=packs)
    kind = analyses[chosen].kind  # the members' rules, for the cross-member findings
    ruleset = packs.get(kind) if packs is not None else load_packs(options.rule_paths, kind=kind)
    return with_overview(analyses, names, chosen, ruleset, options.selection, _hidden)


def _pooled(pool: Executor, paths: Sequence[Path], options: AnalyzeOptions, progress: Progress | None,
            window: int) -> list[Analysis]:
    """Every path analysed on the pool, in order, with at most `window` submitted and not done. At the first
    failure nothing more is submitted and what waits is cancelled: a folder of thousands of broken files
    fails after reading a few."""
    from concurrent.futures import FIRST_EXCEPTION, wait

    results: list[Analysis | None] = [None] * len(paths)
    index: dict[Future, int] = {}
    failed: list[tuple[int, BaseException]] = []
    pending: set[Future] = set()
    submitted = 0
    while pending or (submitted < len(paths) and not failed):
        while submitted < len(paths) and len(pending) < window and not failed:
            future = pool.submit(_analyze_input, paths[submitted], options)
            index[future], submitted = submitted, submitted + 1
            pending.add(future)
        done, pending = wait(pending, return_when=FIRST_EXCEPTION)
        for future in done:
            if future.cancelled():
                continue
            if future.exception() is not None:
                failed.append((index[future], future.exception()))  # type: ignore[arg-type]
            else:
                results[index[future]] = future.result()
        if failed:
            for future in pending:
                future.cancel()  # those already running finish; their errors count too
        elif progress:
            progress(f"analysed {submitted - len(pending)}/{len(paths)}")
    if failed:
        first = min(failed, key=lambda item: item[0])[1]  # in rank order, among those that had run
        if not isinstance(first, AdvisorError):
            raise first
        raise _rank_failure(first, len(failed), paths)
    return [r for r in results if r is not None]


def _rank_failure(exc: AdvisorError, failed: int, paths: Sequence[Path]) -> AdvisorError:
    """The first bad rank file's own error, with how many had failed when the run stopped; an error that
    is not about one rank file (a bad --set, several problems at once) as it is."""
    if type(exc) is not AdvisorError or exc.where not in {str(p) for p in paths}:
        return exc
    return AdvisorError(exc.where, f"{exc.problem}; {failed} of {len(paths)} rank files failed before the run "
                                   "stopped")


def load_analysis(path: Path, options: AnalyzeOptions | None = None, jobs: int | None = None,
                  progress: Progress | None = None, refused_when_saved: Sequence[str] = (),
                  executor: Executor | None = None, packs: PackCache | None = None) -> Analysis:
    """A saved analysis JSON (`advisor report … -o x.json`) as it was analysed, or an input analysed
    now. A saved analysis takes a new investigation context (judged on its metrics); the options
    named in `refused_when_saved` (given, but only a new analysis could apply them) are an error."""
    options = options or AnalyzeOptions()
    saved = serialize.read_if_analysis(path, *saved_analysis_limit(options.load.max_memory))
    if saved is None:
        return _analyze_input(path, options, jobs, progress, executor, packs)
    return _as_saved(path, saved, options, refused_when_saved, packs)


def _as_saved(path: Path, saved: Analysis, options: AnalyzeOptions, refused_when_saved: Sequence[str],
              packs: PackCache | None = None) -> Analysis:
    """A saved analysis under today's rule names, with a new investigation context judged on it."""
    kind = get_kind(saved.kind, f"{path}: the analysis of a profile of this kind")  # installed?
    check_saved_tables(kind, saved, str(path))
    if refused_when_saved:
        given = ", ".join(refused_when_saved)
        raise AdvisorError(str(path), f"a saved analysis is used as it was analysed; {given} only apply when "
                                      "analysing the profile itself")
    ruleset = packs.get(saved.kind) if packs is not None else load_packs(options.rule_paths, kind=saved.kind)
    saved = serialize.with_current_rule_names(saved, ruleset.canonical)
    if options.context is None:
        return saved
    metrics = saved.metrics
    hw_units = saved.hardware.env_units() if saved.hardware else {}
    env = {**hardware_env(saved.hardware), **{n: m.value for n, m in metrics.items()}}
    context = load_context(options.context, {*metrics, *hw_units}, {**hw_units, **{n: m.unit for n, m in
                                                                                  metrics.items()}})
    return replace(saved, investigation=judge(context, env, metrics))


def compare_inputs(paths: Sequence[Path], labels: Sequence[str], options: AnalyzeOptions | None = None,
                   noise: float = DEFAULT_NOISE, shaping: Sequence[str] = ()) -> Comparison | Series:
    """Two inputs: a before/after comparison; more: a series of attempts. `shaping` names the options
    given that change what an analysis finds: they reach the profiles analysed now, not saved analyses,
    and the comparison warns when both kinds of input meet."""
    options = options or AnalyzeOptions()
    read = [serialize.read_if_analysis(p, *saved_analysis_limit(options.load.max_memory)) for p in paths]
    analyses = [analyze(p, options) if r is None else _as_saved(p, r, options, ())
                for p, r in zip(paths, read, strict=True)]
    analyses = [analyses[0], *(_same_entry(analyses[0], a, p, options) if r is None else a
                               for a, p, r in zip(analyses[1:], paths[1:], read[1:], strict=True))]
    saved = [label for label, r in zip(labels, read, strict=True) if r is not None]
    warning = (f"{', '.join(shaping)} applied to the profiles analysed now, not to {', '.join(saved)} (saved "
               "analyses are used as they were analysed): findings may differ because the rules did."
               ) if shaping and saved else None
    if len(analyses) == 2:
        return _warned(compare(analyses[0], analyses[1], (labels[0], labels[1]), noise), warning)
    series = compare_series(analyses, labels, noise)
    return replace(series, steps=tuple(_warned(s, warning) for s in series.steps),
                   overall=_warned(series.overall, warning))


def _same_entry(first: Analysis, other: Analysis, path: Path, options: AnalyzeOptions) -> Analysis:
    """`other` analysed on the profile that matches the one `first` analysed (the same kernel by name
    and launch shape), when both inputs hold several and no entry was named."""
    chosen = next((e for e in first.entries if e.analysed), None)
    if chosen is None or not other.entries or options.load.entry is not None:
        return other
    matches = [e for e in other.entries if entry_key(e) == entry_key(chosen)]
    if not matches or any(e.analysed for e in matches):
        return other
    slowest = max(matches, key=lambda e: e.total_time or 0.0)
    return analyze(path, replace(options, load=replace(options.load, entry=slowest.name)))


def _warned(comparison: Comparison, warning: str | None) -> Comparison:
    return replace(comparison, warnings=(warning, *comparison.warnings)) if warning else comparison


def default_labels(paths: Sequence[Path]) -> list[str]:
    """File stems, with the parent folder when stems repeat (weight_reload/summary)."""
    stems = [p.stem for p in paths]
    if len(set(stems)) == len(stems):
        return stems
    return [f"{p.parent.name}/{p.stem}" if stems.count(p.stem) > 1 else p.stem for p in paths]


__all__ = ["AnalyzeOptions", "analyze", "analyze_profile", "check_compare_inputs", "compare_inputs",
           "default_labels", "load_analysis", "paths_read"]
