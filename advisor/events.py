"""Event-derived analysis of a full trace: interval unions, hotspots, the DMA size histogram,
utilisation over time and idle gaps, and the metrics rules read from them. numpy throughout: a
trace has millions of events."""

from __future__ import annotations

import itertools
from collections.abc import Mapping

from advisor.adapters.legacy_json import Codes, Trace
from advisor.model import Gap, Hotspot, TraceSummary

NS = 1e-9
TOP = 10
TIMELINE_BINS = 60
SIZE_EDGES = (0, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072, 262144, 1048576, float("inf"))


def _valid(start, duration):
    import numpy as np

    keep = (start >= 0) & (duration >= 0) & np.isfinite(start) & np.isfinite(duration)
    return start[keep], duration[keep], keep


def segments(start, duration):
    """The merged, disjoint segments (starts, ends) covered by [start, start + duration) intervals."""
    import numpy as np

    if len(start) == 0:
        return np.empty(0), np.empty(0)
    order = np.argsort(start, kind="stable")
    s, e = start[order], (start + duration)[order]
    running_end = np.maximum.accumulate(e)
    new = np.empty(len(s), dtype=bool)
    new[0] = True
    new[1:] = s[1:] > running_end[:-1]
    seg_start = s[new]
    seg_end = np.append(running_end[np.flatnonzero(new)[1:] - 1], running_end[-1])
    return seg_start, seg_end


def union(start, duration) -> tuple[float, list[tuple[float, float]]]:
    """Total covered length of [start, start + duration) intervals, and the merged segments."""
    seg_start, seg_end = segments(start, duration)
    return float((seg_end - seg_start).sum()), list(zip(seg_start.tolist(), seg_end.tolist(), strict=True))


def _hotspots(codes: Codes, duration, keep) -> tuple[Hotspot, ...]:
    import numpy as np

    c = codes.codes[keep]
    totals = np.bincount(c, weights=duration, minlength=len(codes.names))
    counts = np.bincount(c, minlength=len(codes.names))
    grand = float(totals.sum()) or 1.0
    order = np.argsort(-totals, kind="stable")
    return tuple(Hotspot(codes.names[i], float(totals[i]) * NS, float(totals[i]) / grand, int(counts[i]))
                 for i in order[:TOP + 1] if codes.names[i] and totals[i] > 0)[:TOP]


def _timeline(rows: Mapping[str, tuple], span_ns: float) -> tuple[tuple[float, ...], dict[str, tuple[float, ...]]]:
    """Busy fraction per time bin and row, exact: the covered length of the row's merged segments
    inside each bin (overlapping DMA queues or instructions count once)."""
    import numpy as np

    edges = np.linspace(0, span_ns, TIMELINE_BINS + 1)
    width = span_ns / TIMELINE_BINS
    out = {}
    for name, (start, duration) in rows.items():
        seg_start, seg_end = segments(start, duration)
        if len(seg_start) == 0:
            out[name] = (0.0,) * TIMELINE_BINS
            continue
        # covered length up to t: piecewise linear through the segment boundaries
        lengths = seg_end - seg_start
        before = np.concatenate([[0.0], np.cumsum(lengths)[:-1]])
        xs = np.column_stack([seg_start, seg_end]).ravel()
        ys = np.column_stack([before, before + lengths]).ravel()
        covered = np.interp(edges, xs, ys)
        out[name] = tuple(float(v) for v in np.clip(np.diff(covered) / width, 0.0, 1.0))
    return tuple(float(e) * NS for e in edges), out


def summarize(trace: Trace) -> tuple[TraceSummary, dict[str, float | None]]:
    """The trace summary for the report, and event-derived metrics (machine units) for the rules."""
    import numpy as np

    i_start, i_dur, i_keep = _valid(trace.instr_start, trace.instr_duration)
    d_start, d_dur, d_keep = _valid(trace.dma_start, trace.dma_duration)
    engines = trace.instr_engine
    rows = {}
    for code, name in enumerate(engines.names):
        mask = engines.codes[i_keep] == code
        if mask.any():
            rows[name or "unlabelled"] = (i_start[mask], i_dur[mask])
    engine_busy = {name: union(s, d)[0] * NS for name, (s, d) in rows.items()}
    all_start = np.concatenate([i_start, d_start])
    all_dur = np.concatenate([i_dur, d_dur])
    busy, segments = union(all_start, all_dur)
    span_ns = float((all_start + all_dur).max()) if len(all_start) else 0.0
    gaps = []
    if segments and segments[0][0] > 0:
        gaps.append(Gap(0.0, segments[0][0] * NS))
    inner = sorted(((b[0] - a[1], a[1]) for a, b in itertools.pairwise(segments)), reverse=True)[:5]
    gaps += [Gap(start * NS, length * NS) for length, start in inner if length > 0]
    sizes = trace.dma_size[d_keep]
    sizes = sizes[sizes >= 0]
    counts, _ = np.histogram(sizes, bins=np.array(SIZE_EDGES, dtype=float))
    timeline_rows = dict(rows)
    timeline_rows["DMA"] = (d_start, d_dur)
    edges, timeline = _timeline(timeline_rows, span_ns) if span_ns > 0 else ((), {})
    summary = TraceSummary(
        instructions=len(i_start), dma_transfers=len(d_start), span=span_ns * NS,
        engine_busy=dict(sorted(engine_busy.items(), key=lambda kv: -kv[1])), busy_union=busy * NS,
        hotspots_hlo=_hotspots(trace.instr_hlo, i_dur, i_keep), hotspots_nki=_hotspots(trace.instr_nki, i_dur, i_keep),
        dma_size_edges=SIZE_EDGES, dma_size_counts=tuple(int(c) for c in counts), timeline_edges=edges,
        timeline=timeline, gaps=tuple(gaps), warnings=trace.warnings, dma_busy=union(d_start, d_dur)[0] * NS,
    )
    n = len(sizes)
    metrics: dict[str, float | None] = {
        "dma_small_transfer_fraction": float((sizes < 4096).sum()) / n if n else None,
        "dma_transfer_under_32k_fraction": float((sizes < 32768).sum()) / n if n else None,
        "warmup_idle_fraction": (segments[0][0] / span_ns) if segments and span_ns > 0 else None,
        "trace_busy_fraction": busy / span_ns if span_ns > 0 else None,
    }
    return summary, metrics
