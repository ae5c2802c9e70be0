"""Per-sequence figures (reference M9–M11, M15): a sequence is one (instance, sequence index) of the
command names — one run of a module, a decode step; its span runs from its first device command's
start to its last one's end. Span statistics, the first-command barrier (the first Neural Engine
command waits for the External HDMA upload), the output tail, and the warm-up split."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from advisor.core.events import NS, first_rows
from advisor.core.trace import Breakdown, kind_breakdown
from advisor.metrics.grouped import rows_of, segments
from advisor.profilers.rbln import KIND
from advisor.profilers.rbln.naming import ParsedNames
from advisor.profilers.rbln.slices import Slices
from advisor.profilers.rbln.unions import per_unit_groups, unit_view

# the columns in the order of their values (their titles and units: data/report.yaml breakdowns)
COLUMNS = ("span", "ne_busy", "gap_before")
NOTE = ("Sequences are the (instance, sequence) prefixes of the command names, in order of their first device "
        "command; a span runs from it to the last device command's end. Neural Engine busy is the mean per "
        "device or chiplet; the idle time before a sequence runs from the end of every earlier one.")
METRICS = ("sequence_count", "sequence_span_mean", "sequence_span_p50", "sequence_span_p95", "sequence_span_max",
           "sequence_span_cv", "sequence_time_total", "sequence_excess_time", "first_command_barrier_time",
           "output_tail_time", "warmup_span", "external_hdma_after_warmup_time", "after_warmup_span")


@dataclass(frozen=True)
class Sequences:
    metrics: dict[str, float | None]
    breakdown: Breakdown | None
    starts: Any  # ns, per sequence in time order (for the host split)
    ends: Any


def _first(values: Any, group: Any, groups: int, pick: Any) -> Any:
    """Per group, the extreme (np.minimum / np.maximum) of values; NaN for an empty group."""
    import numpy as np

    out = np.full(groups, np.inf if pick is np.minimum else -np.inf)
    pick.at(out, group, values)
    out[~np.isfinite(out)] = np.nan
    return out


def _pairs(inst: Any, seq: Any) -> tuple[Any, Any, Any]:
    """np.unique of the (inst, seq) rows (axis 0, with first indices and inverse), through one int64 key
    in the same order when the ranges allow it (seq is never negative here): far less memory."""
    import numpy as np

    lo, width = int(inst.min()), int(seq.max()) + 1
    if (int(inst.max()) - lo + 1) * width >= 2**62:
        uniq, first_row, inverse = np.unique(np.column_stack([inst, seq]), axis=0, return_index=True,
                                             return_inverse=True)
        return uniq, first_row, inverse.ravel()
    span = (int(inst.max()) - lo + 1) * width
    key = (inst.astype(np.int64) - lo) * width
    key += seq
    del inst, seq
    if span > 2 * len(key) + (1 << 16):
        found, first_row, inverse = np.unique(key, return_index=True, return_inverse=True)
        return np.column_stack([found // width + lo, found % width]), first_row, inverse.ravel()
    # few distinct keys in a small range (sequence numbers): np.unique's result from a table of the range,
    # without sorting millions of rows
    first = first_rows(key, span)
    found = np.flatnonzero(first < len(key))  # the keys present, ascending
    rank = np.zeros(span, dtype=first.dtype)
    rank[found] = np.arange(len(found), dtype=first.dtype)
    return np.column_stack([found // width + lo, found % width]), first[found], rank[key]


@dataclass(frozen=True)
class _Numbered:
    """The sequences numbered in time order (of their first device command)."""

    pairs: Any  # (instance, sequence index) per sequence; instance -1 without one
    starts: Any  # ns: each one's first device command's start
    ends: Any  # ns: its last device command's end
    seq_of: Any  # int32 per slice: its sequence's number, -1 outside any


def _numbered(s: Slices, pn: ParsedNames, rows: Any) -> _Numbered:
    """The sequences of the device commands `rows` (with parsed names), numbered in time order."""
    import numpy as np

    names = s.name[rows]
    uniq, first_row, inverse = _pairs(pn.inst[names], pn.seq[names])
    del names
    by_time = np.argsort(s.start[rows[first_row]], kind="stable")  # chronological sequence numbers
    rank = np.empty(len(uniq), dtype=np.int32)
    rank[by_time] = np.arange(len(uniq), dtype=np.int32)
    seq_of = np.full(len(s), -1, dtype=np.int32)
    seq_of[rows] = rank[inverse]
    del inverse, rank
    ends = _first(s.end(rows), seq_of[rows], len(uniq), np.maximum)
    return _Numbered(uniq[by_time], s.start[rows[first_row]][by_time], ends, seq_of)


def _span_metrics(spans: Any) -> dict[str, float | None]:
    """Count, mean, p50, p95, max, CV (three sequences or more), total and excess over the median of the spans."""
    import numpy as np

    n, mean = len(spans), float(spans.mean())
    return {"sequence_count": float(n), "sequence_span_mean": mean * NS,
            "sequence_span_p50": float(np.median(spans)) * NS,
            "sequence_span_p95": float(np.percentile(spans, 95)) * NS, "sequence_span_max": float(spans.max()) * NS,
            "sequence_span_cv": float(spans.std(ddof=1)) / mean if n >= 3 and mean > 0 else None,
            "sequence_time_total": float(spans.sum()) * NS,
            "sequence_excess_time": float(np.clip(spans - np.median(spans), 0, None).sum()) * NS}


def _barrier_metrics(s: Slices, seq_of: Any, n: int, ne: Any, io: Any) -> dict[str, float | None]:
    """first_command_barrier_time (the first Neural Engine command after the first External HDMA one) and
    output_tail_time (the last External HDMA command after the last Neural Engine one), summed over the
    sequences that have both; empty without."""
    import numpy as np

    in_seq = seq_of >= 0
    ne_rows, io_rows = np.flatnonzero(ne & in_seq), np.flatnonzero(io & in_seq)
    if not (len(ne_rows) and len(io_rows)):
        return {}
    ne_first = _first(s.start[ne_rows], seq_of[ne_rows], n, np.minimum)
    ne_last = _first(s.end(ne_rows), seq_of[ne_rows], n, np.maximum)
    io_first = _first(s.start[io_rows], seq_of[io_rows], n, np.minimum)
    io_last = _first(s.end(io_rows), seq_of[io_rows], n, np.maximum)
    lead, tail = ne_first - io_first, io_last - ne_last  # NaN where a sequence lacks one of them
    return {"first_command_barrier_time": float(np.nansum(np.where(lead > 0, lead, 0.0))) * NS,
            "output_tail_time": float(np.nansum(np.where(tail > 0, tail, 0.0))) * NS}


def _warmup_metrics(s: Slices, seq: _Numbered, io: Any, device_end: float) -> dict[str, float | None]:
    """The first sequence as the warm-up (two sequences or more): its span, the device time after it and the
    External HDMA time after it (per device or chiplet); empty with fewer sequences."""
    import numpy as np

    if len(seq.ends) < 2:
        return {}
    warm_end, units = float(seq.ends[0]), len(s.units)
    out: dict[str, float | None] = {"warmup_span": float(seq.ends[0] - seq.starts[0]) * NS,
                                    "after_warmup_span": max(device_end - warm_end, 0.0) * NS}
    if io.any() and units:
        a, b, _ = segments(s, *unit_view(s, io))
        out["external_hdma_after_warmup_time"] = float(np.clip(b - np.maximum(a, warm_end), 0, None).sum()) \
            / units * NS
    return out


def sequence_figures(s: Slices, pn: ParsedNames, dev: Any, ne: Any, io: Any, device_end: float,
                     max_rows: int) -> Sequences:
    """The per-sequence metrics (METRICS) and table (the first `max_rows` sequences in time order) of the device
    commands `dev` (ne: Neural Engine commands, io: External HDMA ones); `device_end` (ns) ends the last."""
    import numpy as np

    out: dict[str, float | None] = dict.fromkeys(METRICS)
    rows = rows_of(dev & pn.parsed[s.name])
    if len(rows) == 0:
        return Sequences(out, None, np.empty(0), np.empty(0))
    seq = _numbered(s, pn, rows)
    del rows  # a row index per device command: gone before the per-sequence unions
    n, units = len(seq.ends), len(s.units)
    spans = seq.ends - seq.starts
    ne_busy = per_unit_groups(s, ne & (seq.seq_of >= 0), np.maximum(seq.seq_of, 0), n).sum(axis=1) / units \
        if units else np.zeros(n)
    out.update(_span_metrics(spans))
    out.update(_barrier_metrics(s, seq.seq_of, n, ne, io))
    out.update(_warmup_metrics(s, seq, io, device_end))

    latest = np.maximum.accumulate(seq.ends)
    gap = np.concatenate([[np.nan], np.clip(seq.starts[1:] - latest[:-1], 0, None)])
    uniq = seq.pairs

    def label(i: int) -> str:
        return (f"i{uniq[i, 0]} seq {uniq[i, 1]}" if uniq[i, 0] >= 0 else f"seq {uniq[i, 1]}")

    table = tuple((label(i), (float(spans[i]) * NS, float(ne_busy[i]) * NS if ne.any() else None,
                              None if np.isnan(gap[i]) else float(gap[i]) * NS)) for i in range(min(n, max_rows)))
    breakdown = kind_breakdown(KIND, "sequences", COLUMNS).make(table, NOTE, total_rows=n)
    return Sequences(out, breakdown, seq.starts, seq.ends)
