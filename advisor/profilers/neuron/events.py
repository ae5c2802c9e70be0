"""Event-derived analysis of a full trace: interval unions per engine, hotspots, the DMA size
histogram, utilisation over time, idle gaps, time in which only DMA runs, tensors loaded more than
once, and the metrics rules read from them. Hotspots and tensor loads are breakdowns, titled by
data/report.yaml. numpy throughout: a trace has millions of events."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from advisor.core.events import Codes, EventTable, EventTrace
from advisor.core.trace import DMA_SIZE_EDGES, Breakdown, BreakdownLayout, EngineBusy, Gap, TraceSummary, kind_breakdown
from advisor.metrics.intervals import concat, gaps, segments, timeline, union, usable
from advisor.profilers.neuron import KIND
from advisor.profilers.neuron.tables import DMA, INSTRUCTION, TensorDecl

NS = 1e-9
TOP = 10
TIMELINE_BINS = 60
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


def _engines(instructions: EventTable, start, duration, keep, rules: TraceRules) -> list[tuple[EngineBusy, tuple]]:
    """Each engine with the intervals of all its timeline rows; an unrecognised row stands alone."""
    rows = instructions.track
    codes = rows.codes[keep]
    groups: dict[str, tuple[EngineRule | None, list[str], list[tuple]]] = {}
    for code, name in enumerate(rows.names):
        mask = codes == code
        if not mask.any():
            continue
        label = name or "unlabelled"
        rule = rules.engine_of(label)
        key = rule.engine if rule else f"row:{label}"
        group = groups.setdefault(key, (rule, [], []))
        group[1].append(label)
        group[2].append((start[mask], duration[mask]))
    out = []
    for rule, labels, parts in groups.values():
        intervals = concat(parts)
        busy = union(*intervals) * NS
        out.append((EngineBusy(engine=rule.engine if rule else "", title=rule.title if rule else labels[0],
                               rows=tuple(labels), busy=busy, compute=bool(rule and rule.compute)), intervals))
    order = {r.engine: i for i, r in enumerate(rules.engines)}
    return sorted(out, key=lambda item: (item[0].engine == "", -item[0].busy, order.get(item[0].engine, 0),
                                         item[0].title))


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

    none = {"tensors_loaded_over_twice": None, "tensor_max_load_repeat": None, "tensor_reload_excess_bytes": None}
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
    metrics = {
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
    engines = _engines(instructions, i_start, i_dur, i_keep, rules)
    compute_start, compute_dur = concat([iv for e, iv in engines if e.compute])
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
    counts, _ = np.histogram(known_sizes, bins=np.array(DMA_SIZE_EDGES, dtype=float))
    timeline_rows = {e.title: iv for e, iv in engines}
    timeline_rows["DMA transfers" if "DMA" in timeline_rows else "DMA"] = (d_start, d_dur)
    edges, shares = timeline(timeline_rows, span_ns, TIMELINE_BINS) if span_ns > 0 else ((), {})
    tensors = _tensor_loads(trace.extra.get("tensors", ()), dmas.name, sizes, d_keep, rules)
    has_compute, has_dma = any(e.compute for e, _ in engines), len(d_start) > 0
    dma_exposed = (compute_or_dma - compute_busy) * NS if has_compute and has_dma else None
    hotspots = (_hotspots("hotspots_hlo", instructions.name, i_dur, i_keep),
                _hotspots("hotspots_nki", instructions.extra["nki"], i_dur, i_keep))
    summary = TraceSummary(
        events={INSTRUCTION: len(i_start), DMA: len(d_start)}, span=span_ns * NS,
        engines=tuple(e for e, _ in engines), busy_union=busy * NS if len(all_start) else None,
        dma_size_edges=DMA_SIZE_EDGES, dma_size_counts=tuple(int(c) for c in counts),
        timeline_edges=tuple(e * NS for e in edges), timeline=shares,
        gaps=tuple(Gap(start * NS, length * NS) for start, length in gaps(seg_start, seg_end, span_ns)),
        warnings=trace.warnings,
        dma_busy=union(d_start, d_dur) * NS if has_dma else None,
        compute_busy=compute_busy * NS if has_compute else None, dma_exposed=dma_exposed,
        skipped={INSTRUCTION: len(instructions) - len(i_start), DMA: len(dmas) - len(d_start)},
        last_event_end=last_end * NS,
        breakdowns=(*(b for b in hotspots if b is not None), tensors.breakdown),
    )
    n = len(known_sizes)
    small, medium = rules.dma_size_cutoffs
    # a fix for small payloads shortens the time they take, not their count: their share of DMA time
    sized_dur = d_dur[sizes >= 0]
    sized_time = float(sized_dur.sum())
    metrics: dict[str, float | None] = {
        "dma_small_transfer_fraction": float((known_sizes < small).sum()) / n if n else None,
        "dma_transfer_under_32k_fraction": float((known_sizes < medium).sum()) / n if n else None,
        "dma_small_transfer_time_fraction": (float(sized_dur[known_sizes < small].sum()) / sized_time
                                             if sized_time > 0 else None),
        "warmup_idle_fraction": float(seg_start[0]) / span_ns if len(seg_start) and span_ns > 0 else None,
        "trace_busy_fraction": busy / span_ns if len(seg_start) and span_ns > 0 else None,
        "dma_exposed_time": dma_exposed,
        **tensors.metrics,
    }
    return summary, metrics
