"""Event-derived analysis of a full trace: interval unions per engine, hotspots, the DMA size
histogram, utilisation over time, idle gaps, time in which only DMA runs, tensors loaded more than
once, and the metrics rules read from them. Hotspots and tensor loads are breakdowns, titled by
data/report.yaml. numpy throughout: a trace has millions of events."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Any

from advisor.core.events import NS, Codes, EventTable, EventTrace
from advisor.core.trace import Breakdown, BreakdownLayout, TraceSummary, kind_breakdown
from advisor.metrics.intervals import Intervals, concat, segments, union, usable
from advisor.metrics.trace_summary import Group, Measured, Span, build_summary
from advisor.profilers.neuron import KIND
from advisor.profilers.neuron.tables import DMA, INSTRUCTION, TensorDecl

TOP = 10
UNNAMED = {"", "unknown"}  # DMA `variable` values that name no tensor (dynamic DMA without DGE notifications)
# The breakdowns this module fills: name -> (columns, text columns, figures), in the order of their values
HOTSPOT_COLUMNS = (("time", "share", "count"), (), ())
BREAKDOWNS = {"hotspots_hlo": HOTSPOT_COLUMNS, "hotspots_nki": HOTSPOT_COLUMNS,
              "tensor_loads": (("size", "loaded_bytes", "loads", "repeat"), ("kind", "source"),
                               ("declared", "unnamed_fraction"))}


@dataclass(frozen=True)
class EngineRule:
    engine: str
    title: str
    compute: bool
    pattern: re.Pattern[str]


@dataclass(frozen=True)
class TraceRules:
    """The kind's data/trace.yaml: which timeline rows belong to which engine, which tensors are loads."""

    engines: tuple[EngineRule, ...]
    loaded_kinds: frozenset[str]
    reload_warning_repeat: float
    dma_size_cutoffs: tuple[float, float]  # bytes: AWS's "at least" and "ideally" DMA transfer sizes

    def engine_of(self, row: str) -> EngineRule | None:
        return next((r for r in self.engines if r.pattern.fullmatch(row.strip())), None)


@cache
def trace_rules() -> TraceRules:
    data = KIND.data("trace.yaml")
    engines = tuple(EngineRule(e["engine"], e["title"], bool(e["compute"]),
                               re.compile("|".join(f"(?:{p})" for p in e["patterns"]), re.IGNORECASE))
                    for e in data["engines"])
    small, ideal = data["dma_size_cutoffs"]
    return TraceRules(engines, frozenset(k.upper() for k in data["loaded_tensor_kinds"]),
                      float(data["reload_warning_repeat"]), (float(small), float(ideal)))


@cache
def layout(name: str) -> BreakdownLayout:
    """Breakdown `name` as data/report.yaml titles it (a missing or misspelt column is an error)."""
    return kind_breakdown(KIND, name, *BREAKDOWNS[name])


def _hotspots(name: str, codes: Codes, duration, keep) -> Breakdown | None:
    """The names (HLO ops, NKI source lines) with the most instruction time, None when no event names one."""
    import numpy as np

    c = codes.codes[keep]
    totals = np.bincount(c, weights=duration, minlength=len(codes.names))
    counts = np.bincount(c, minlength=len(codes.names))
    grand = float(totals.sum()) or 1.0
    order = np.argsort(-totals, kind="stable")
    named = [i for i in order if codes.names[i] and totals[i] > 0]
    if not named:
        return None
    return layout(name).make([(codes.names[i], (float(totals[i]) * NS, float(totals[i]) / grand, float(counts[i])))
                              for i in named[:TOP]], total_rows=len(named))


def _engines(instructions: EventTable, start: Any, duration: Any, keep: Any, rules: TraceRules) -> list[Group]:
    """Each engine with the intervals of all its timeline rows; an unrecognised row stands alone. In the order
    ties of busy time keep: the engines as trace.yaml lists them, then the unrecognised rows by name."""
    rows = instructions.track
    codes = rows.codes[keep]
    found: dict[str, tuple[EngineRule | None, list[str], list[Intervals]]] = {}
    for code, name in enumerate(rows.names):
        mask = codes == code
        if not mask.any():
            continue
        label = name or "unlabelled"
        rule = rules.engine_of(label)
        key = rule.engine if rule else f"row:{label}"
        group = found.setdefault(key, (rule, [], []))
        group[1].append(label)
        group[2].append((start[mask], duration[mask]))
    groups = [Group(rule.engine if rule else "", rule.title if rule else labels[0], tuple(labels),
                    bool(rule and rule.compute), intervals=concat(parts)) for rule, labels, parts in found.values()]
    order = {r.engine: i for i, r in enumerate(rules.engines)}
    return sorted(groups, key=lambda g: (order.get(g.key, 0), g.title))


@dataclass(frozen=True)
class _Load:
    """How often an input or weight tensor was loaded: bytes DMA moved for it over its size."""

    name: str
    kind: str  # IN, WEIGHT, … as the NEFF declares it
    size: float  # bytes
    loaded_bytes: float
    loads: int | None  # DMA transfers that carried it
    repeat: float  # loaded_bytes / size; the number of full copies loaded
    source: str  # measured (from DMA events) | reported (Explorer's load_to_sbuf_repeat_factor)


@dataclass(frozen=True)
class _TensorResult:
    breakdown: Breakdown
    metrics: dict[str, float | None]


def _tensor_table(loads: list[_Load], declared: int, unnamed_fraction: float | None, note: str = "") -> Breakdown:
    """The most-reloaded tensors (none, with `note` saying why, when unavailable)."""
    return layout("tensor_loads").make(
        [(t.name, (t.size, t.loaded_bytes, None if t.loads is None else float(t.loads), t.repeat))
         for t in loads[:TOP]], note, len(loads) if loads else None,
        texts={t.name: (t.kind, t.source) for t in loads[:TOP]},
        figures={"declared": float(declared), "unnamed_fraction": unnamed_fraction})


def _merged_decls(tensors: tuple[TensorDecl, ...]) -> list[TensorDecl]:
    """One declaration per tensor name: Explorer lists a tensor once per physical core of a logical
    core (`pcore_idx`), and `neff_node` can repeat names. The size counts once; the loads each core
    reports add up."""
    by_name: dict[str, list[TensorDecl]] = {}
    for t in tensors:
        by_name.setdefault(t.name, []).append(t)

    def total(values: list[float | None]) -> float | None:
        return None if any(v is None for v in values) else float(sum(v for v in values if v is not None))

    merged = []
    for name, decls in by_name.items():
        if len(decls) == 1:
            merged.append(decls[0])
            continue
        size = max((d.size for d in decls if d.size), default=None)
        loaded = total([d.reported_loaded_bytes for d in decls])
        merged.append(TensorDecl(name, decls[0].kind, size, loaded / size if loaded is not None and size else None,
                                 loaded, total([d.reported_loads for d in decls])))
    return merged


def _tensor_loads(tensors: tuple[TensorDecl, ...], variables: Codes, sizes, keep, rules: TraceRules) -> _TensorResult:
    """Input and weight tensors by how many full copies DMA loaded (bytes moved for the tensor over
    its size, as AWS's TensorInfo load_to_sbuf_repeat_factor counts them)."""
    import numpy as np

    none: dict[str, float | None] = dict.fromkeys(("tensors_loaded_over_twice", "tensor_max_load_repeat",
                                                   "tensor_reload_excess_bytes"))
    declared = [t for t in _merged_decls(tensors) if t.size]
    loadable = [t for t in declared if not t.kind or t.kind in rules.loaded_kinds]
    codes = variables.codes[keep]
    valid = sizes >= 0
    moved = np.bincount(codes[valid], weights=sizes[valid], minlength=len(variables.names))
    counts = np.bincount(codes[valid], minlength=len(variables.names))
    by_name = {name: (float(moved[i]), int(counts[i])) for i, name in enumerate(variables.names) if counts[i]}
    known = {t.name for t in declared}
    total = float(moved.sum())
    unnamed = sum(b for name, (b, _) in by_name.items() if name.strip().lower() in UNNAMED or name not in known)
    unnamed_fraction = unnamed / total if total > 0 and declared else None
    if not loadable:
        note = ("the file declares no tensor sizes (legacy `neff_node`, Explorer `TensorInfo`)" if not declared
                else "the file declares no input or weight tensors")
        return _TensorResult(_tensor_table([], len(declared), unnamed_fraction, note), none)
    loads = []
    for t in loadable:
        assert t.size is not None
        if t.reported_repeat is not None:
            loaded = t.reported_loaded_bytes if t.reported_loaded_bytes is not None else t.reported_repeat * t.size
            count = None if t.reported_loads is None else int(t.reported_loads)
            loads.append(_Load(t.name, t.kind, t.size, loaded, count, t.reported_repeat, "reported"))
        elif t.name in by_name:  # only tensors some transfer with a known size names
            loaded, count = by_name[t.name]
            loads.append(_Load(t.name, t.kind, t.size, loaded, count, loaded / t.size, "measured"))
    if not loads:
        return _TensorResult(_tensor_table([], len(declared), unnamed_fraction,
                                           "no DMA transfer names a declared input or weight tensor (dynamic DMA "
                                           "records `variable` = unknown unless the profile is captured with "
                                           "--enable-dge-notifs)"), none)
    ranked = sorted(loads, key=lambda t: (-t.repeat, -(t.loaded_bytes - t.size), t.name))
    metrics: dict[str, float | None] = {
        "tensors_loaded_over_twice": float(sum(t.repeat > rules.reload_warning_repeat for t in loads)),
        "tensor_max_load_repeat": ranked[0].repeat,
        "tensor_reload_excess_bytes": float(sum(max(t.loaded_bytes - t.size, 0.0) for t in loads)),
    }
    return _TensorResult(_tensor_table(ranked, len(declared), unnamed_fraction), metrics)


def summarize(trace: EventTrace, total_time: float | None = None) -> tuple[TraceSummary, dict[str, float | None]]:
    """The trace summary for the report, and event-derived metrics (machine units) for the rules.
    Shares are of the run: the summary's `total_time` (s) when given, else up to the last event."""
    import numpy as np

    rules = trace_rules()
    instructions, dmas = trace.tables[INSTRUCTION], trace.tables[DMA]
    i_start, i_dur, i_keep = usable(instructions.start, instructions.duration)
    d_start, d_dur, d_keep = usable(dmas.start, dmas.duration)
    groups = _engines(instructions, i_start, i_dur, i_keep, rules)
    compute_start, compute_dur = concat([g.intervals for g in groups if g.compute and g.intervals is not None])
    compute_busy = union(compute_start, compute_dur)
    compute_or_dma = union(np.concatenate([compute_start, d_start]), np.concatenate([compute_dur, d_dur]))
    all_start = np.concatenate([i_start, d_start])
    all_dur = np.concatenate([i_dur, d_dur])
    seg_start, seg_end = segments(all_start, all_dur)
    busy = float((seg_end - seg_start).sum())
    last_end = float((all_start + all_dur).max()) if len(all_start) else 0.0
    span_ns = max(last_end, total_time / NS if total_time else 0.0)
    sizes = dmas.bytes[d_keep]
    known_sizes = sizes[sizes >= 0]
    tensors = _tensor_loads(trace.extra.get("tensors", ()), dmas.name, sizes, d_keep, rules)
    has_compute, has_dma = any(g.compute for g in groups), len(d_start) > 0
    dma_exposed = (compute_or_dma - compute_busy) * NS if has_compute and has_dma else None
    hotspots = (_hotspots("hotspots_hlo", instructions.name, i_dur, i_keep),
                _hotspots("hotspots_nki", instructions.extra["nki"], i_dur, i_keep))
    dma_row = "DMA transfers" if any(g.title == "DMA" for g in groups) else "DMA"  # an engine row named DMA
    summary = build_summary(Measured(
        events={INSTRUCTION: len(i_start), DMA: len(d_start)}, span=Span(span_ns), groups=groups,
        more_rows={dma_row: (d_start, d_dur)}, busy_segments=(seg_start, seg_end), transfer_sizes=known_sizes,
        warnings=trace.warnings, skipped={INSTRUCTION: len(instructions) - len(i_start), DMA: len(dmas) - len(d_start)},
        last_event_end=last_end, breakdowns=(*hotspots, tensors.breakdown),
        busy_union=busy * NS if len(all_start) else None, compute_busy=compute_busy * NS if has_compute else None,
        dma_busy=union(d_start, d_dur) * NS if has_dma else None, dma_exposed=dma_exposed))
    return summary, {**_size_metrics(known_sizes, d_dur[sizes >= 0], rules),
                     "warmup_idle_fraction": float(seg_start[0]) / span_ns if len(seg_start) and span_ns > 0 else None,
                     "trace_busy_fraction": busy / span_ns if len(seg_start) and span_ns > 0 else None,
                     "dma_exposed_time": dma_exposed, **tensors.metrics}


def _size_metrics(known_sizes: Any, sized_dur: Any, rules: TraceRules) -> dict[str, float | None]:
    """The shares of small DMA transfers, by count and by time: a fix for small payloads shortens the time they
    take, not their count."""
    n = len(known_sizes)
    small, medium = rules.dma_size_cutoffs
    sized_time = float(sized_dur.sum())
    return {
        "dma_small_transfer_fraction": float((known_sizes < small).sum()) / n if n else None,
        "dma_transfer_under_32k_fraction": float((known_sizes < medium).sum()) / n if n else None,
        "dma_small_transfer_time_fraction": (float(sized_dur[known_sizes < small].sum()) / sized_time
                                             if sized_time > 0 else None),
    }
