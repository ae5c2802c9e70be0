"""What the CLI and notebooks call: analyze a profile, run a pack's examples."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from advisor import __version__
from advisor.compare.diff import DEFAULT_NOISE, compare, compare_series
from advisor.core.model import Analysis, Comparison, Entry, Profile, Series
from advisor.engine.evaluate import Selection, evaluate
from advisor.investigation.context import judge, load_context
from advisor.kinds.neuron.adapters import LoadOptions, choose, load_profiles
from advisor.kinds.neuron.adapters.parquet import is_explorer_dir
from advisor.kinds.neuron.events import summarize
from advisor.metrics import hardware
from advisor.metrics.derive import derive, hardware_env
from advisor.packs.load import RuleSet, load_packs


@dataclass(frozen=True)
class AnalyzeOptions:
    load: LoadOptions = field(default_factory=LoadOptions)
    hardware: str | None = None  # --hardware NAME|FILE
    rule_paths: Sequence[Path] = ()
    selection: Selection = field(default_factory=Selection)
    context: Path | None = None  # --context FILE: the investigation context


def _notes(profile: Profile, analysis_hw: object, metrics: dict) -> list[str]:
    notes = list(profile.notes)
    if analysis_hw is None:
        notes.append("Hardware unknown (no instance_type in the profile and no --hardware): metrics that need "
                     "peak FLOP/s or bandwidth are unavailable.")
    if len(profile.source.entries) > 1:
        others = [e for e in profile.source.entries if e != profile.source.entry]
        notes.append(f"The file holds {len(profile.source.entries)} profiles; this report analyses "
                     f"{profile.source.entry} (the longest total_time). Others: {', '.join(others)}. "
                     "Choose one with --entry.")
    for metric in metrics.values():
        if metric.check and metric.check.agrees is False:
            notes.append(
                f"{metric.name}: reported {metric.value:.6g} but {metric.formula} gives "
                f"{metric.check.derived_value:.6g} ({metric.check.relative_difference:.1%} apart, more than "
                f"{metric.check.tolerance:.0%})."
            )
    return notes


def analyze_profile(profile: Profile, ruleset: RuleSet, hardware_override: str | None = None,
                    selection: Selection | None = None, context: Path | None = None) -> Analysis:
    hw = hardware.resolve(profile.info.get("instance_type"), hardware_override,
                          profile.trace.metadata if profile.trace is not None else None)
    trace, from_events = (summarize(profile.trace, profile.values.get("total_time")) if profile.trace is not None
                          else (None, None))
    metrics = derive(profile, hw, ruleset, from_events)
    result = evaluate(ruleset, metrics, hw, selection or Selection())
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
        notes=tuple(_notes(profile, hw, metrics)), investigation=investigation, trace=trace,
    )


def entry_of(analysis: Analysis, name: str, analysed: bool) -> Entry:
    core = ", ".join(f"{k} {analysis.info.get(k) or _int(analysis.value(k))}" for k in ("nd_idx", "nc_idx")
                     if analysis.info.get(k) or analysis.value(k) is not None) or None
    collective = analysis.value("cc_op_active_time")
    return Entry(name=name, total_time=analysis.value("total_time"), core=core,
                 dma_active_time_percent=analysis.value("dma_active_time_percent"),
                 tensor_engine_active_time_percent=analysis.value("tensor_engine_active_time_percent"),
                 analysed=analysed, collective_time=collective if collective is not None else analysis.value(
                     "cc_op_time"), findings=tuple(f.name for f in analysis.findings),
                 root_causes=tuple(f.name for f in analysis.findings if f.root_cause))


def _int(value: float | None) -> str:
    return "" if value is None else f"{value:g}"


def with_entries(analyses: Sequence[Analysis], names: Sequence[str], chosen: int) -> Analysis:
    """The chosen analysis, carrying an overview of all of them (cores of a file, or ranks)."""
    entries = tuple(entry_of(a, n, i == chosen) for i, (a, n) in enumerate(zip(analyses, names, strict=True)))
    return replace(analyses[chosen], entries=entries)


def analyze(path: Path, options: AnalyzeOptions | None = None, jobs: int | None = None,
            progress: Callable[[str], None] | None = None) -> Analysis:
    """One profile; a multi-profile file or a folder of per-rank profiles gives the analysis of the
    chosen entry (default: the slowest) with an overview of all of them."""
    options = options or AnalyzeOptions()
    if path.is_dir() and not is_explorer_dir(path):
        from advisor.inputs.ranks import analyze_ranks

        return analyze_ranks(path, options, jobs, progress)
    ruleset = load_packs(options.rule_paths)
    profiles = load_profiles(path, replace(options.load, progress=progress))
    profile = choose(profiles, options.load.entry, str(path))
    if len(profiles) == 1:
        if profile.trace is not None and progress:
            progress("analysing the events")
        return analyze_profile(profile, ruleset, options.hardware, options.selection, options.context)
    analyses = [analyze_profile(p, ruleset, options.hardware, options.selection,
                                options.context if p is profile else None) for p in profiles]
    return with_entries(analyses, [p.source.entry or "profile" for p in profiles], profiles.index(profile))


def load_analysis(path: Path, options: AnalyzeOptions | None = None) -> Analysis:
    """A saved analysis JSON (`advisor report … -o x.json`) as it is, or a profile analysed now."""
    from advisor.core import serialize

    saved = serialize.read_if_analysis(path)
    return saved if saved is not None else analyze(path, options)


def compare_inputs(paths: Sequence[Path], labels: Sequence[str], options: AnalyzeOptions | None = None,
                   noise: float = DEFAULT_NOISE) -> Comparison | Series:
    """Two inputs: a before/after comparison; more: a series of attempts."""
    analyses = [load_analysis(p, options) for p in paths]
    if len(analyses) == 2:
        return compare(analyses[0], analyses[1], (labels[0], labels[1]), noise)
    return compare_series(analyses, labels, noise)


def default_labels(paths: Sequence[Path]) -> list[str]:
    """File stems, with the parent folder when stems repeat (weight_reload/summary)."""
    stems = [p.stem for p in paths]
    if len(set(stems)) == len(stems):
        return stems
    return [f"{p.parent.name}/{p.stem}" if stems.count(p.stem) > 1 else p.stem for p in paths]
