"""The trace summary every trace kind hands the report (core/trace.py `TraceSummary`), built once from what the
kind measured: its engines or command categories, the rows of utilisation over time, the merged busy segments,
the transfer sizes and its own tables. Here the engines are ranked, the transfer-size histogram binned over
`DMA_SIZE_EDGES`, the timeline's busy shares and the idle gaps computed, and every time turned into seconds.

The kinds differ in a few details, each a parameter (`Span`, `GapRule`), never a copy: where their time starts
(Neuron at 0, RBLN at the first device command, torch at the analysed window), whether a zero-length segment
splits an idle gap, and whether a run with no work at all is one idle gap as long as the span."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from advisor.core.events import NS
from advisor.core.trace import DMA_SIZE_EDGES, Breakdown, EngineBusy, Gap, TraceSummary
from advisor.metrics.intervals import Intervals, gaps, timeline, union

TIMELINE_BINS = 60


@dataclass(frozen=True)
class Group:
    """One engine or command category as a kind measured it. Its busy time is `busy` (seconds) when the kind
    measures it itself (a mean per unit, say), else the union of `intervals` (in the trace's unit)."""

    key: str  # the kind's engine or category key; "" for a row no pattern recognised (ranked last)
    title: str
    rows: tuple[str, ...]  # the trace's rows (tracks, timeline rows) counted for it
    compute: bool
    busy: float | None = None  # seconds
    intervals: Intervals | None = None  # (start, duration) arrays in the trace's unit


@dataclass(frozen=True)
class Span:
    """The analysed run in the trace's unit: `length` from `origin` (the trace's time of the run's start). The
    timeline and the busy segments are measured from `origin`; the summary's times are from the trace's zero."""

    length: float
    origin: float = 0.0
    unit: float = NS  # seconds per unit of the trace's times


@dataclass(frozen=True)
class GapRule:
    """How idle gaps are read from the merged busy segments (metrics/intervals.py `gaps`)."""

    lasting_only: bool = False  # a zero-length segment (an instant) splits no gap
    whole_span_when_idle: bool = False  # no work at all: the whole span is one gap (else none)


@dataclass(frozen=True)
class Measured:
    """What a kind measured of its trace, for `build_summary`. Times in the trace's unit unless said otherwise."""

    events: Mapping[str, int]  # usable events per category, the kind's keys
    span: Span
    groups: Sequence[Group] = ()  # in the kind's own order: ties of busy time keep it
    # utilisation over time: row title -> (start from the span's origin, duration); None: each engine's
    # `intervals`, busiest first, then `more_rows`
    timeline: Mapping[str, Intervals] | None = None
    more_rows: Mapping[str, Intervals] = field(default_factory=dict)
    busy_segments: tuple[Any, Any] | None = None  # merged, sorted (starts, ends) from the origin: the gaps
    gap_rule: GapRule = GapRule()
    gaps: tuple[Gap, ...] | None = None  # `idle_gaps` read early, where the segments are too many to keep
    transfer_sizes: Any = ()  # bytes of each transfer whose size is known
    warnings: tuple[str, ...] = ()
    skipped: Mapping[str, int] = field(default_factory=dict)
    last_event_end: float | None = None  # from the trace's zero
    breakdowns: Sequence[Breakdown | None] = ()  # None: a table the trace cannot fill, left out
    facts: Mapping[str, str] = field(default_factory=dict)
    # seconds, as the kind measures them (core/trace.py says what each is)
    busy_union: float | None = None
    compute_busy: float | None = None
    dma_busy: float | None = None
    dma_exposed: float | None = None


def engines(groups: Sequence[Group], unit: float = NS) -> list[tuple[EngineBusy, Group]]:
    """Each group as an engine with its busy time, busiest first, unrecognised rows last (ties: the given order)."""
    out = []
    for g in groups:
        busy = g.busy if g.busy is not None else union(*g.intervals) * unit if g.intervals is not None else 0.0
        out.append((EngineBusy(g.key, g.title, g.rows, busy, g.compute), g))
    return sorted(out, key=lambda item: (item[0].engine == "", -item[0].busy))


def size_counts(sizes: Any) -> tuple[int, ...]:
    """Transfers per bin of `DMA_SIZE_EDGES` (bytes)."""
    import numpy as np

    counts, _ = np.histogram(sizes, bins=np.array(DMA_SIZE_EDGES, dtype=float))
    return tuple(int(c) for c in counts)


def utilisation(rows: Mapping[str, Intervals], span: Span,
                bins: int = TIMELINE_BINS) -> tuple[tuple[float, ...], Mapping[str, tuple[float, ...]]]:
    """Bin edges (seconds from the trace's zero) and each row's busy share per bin; none for an empty span or
    without rows."""
    if span.length <= 0 or not rows:
        return (), {}
    edges, shares = timeline(rows, span.length, bins)
    return tuple((e + span.origin) * span.unit for e in edges), shares


def idle_gaps(segments: tuple[Any, Any] | None, span: Span, rule: GapRule) -> tuple[Gap, ...]:
    """The longest idle gaps around the merged busy segments, in seconds from the trace's zero."""
    if segments is None:
        return ()
    starts, ends = segments
    if rule.lasting_only:
        lasting = ends > starts
        starts, ends = starts[lasting], ends[lasting]
    if not len(starts):
        whole = rule.whole_span_when_idle and span.length > 0
        return (Gap(span.origin * span.unit, span.length * span.unit),) if whole else ()
    return tuple(Gap((a + span.origin) * span.unit, n * span.unit) for a, n in gaps(starts, ends, span.length))


def build_summary(m: Measured) -> TraceSummary:
    """The trace summary of what a kind measured."""
    span = m.span
    ranked = engines(m.groups, span.unit)
    rows = m.timeline
    if rows is None:
        rows = {e.title: g.intervals for e, g in ranked if g.intervals is not None}
        rows.update(m.more_rows)
    edges, shares = utilisation(rows, span)
    return TraceSummary(
        events=m.events, span=span.length * span.unit, engines=tuple(e for e, _ in ranked),
        busy_union=m.busy_union, dma_size_edges=DMA_SIZE_EDGES, dma_size_counts=size_counts(m.transfer_sizes),
        timeline_edges=edges, timeline=shares,
        gaps=m.gaps if m.gaps is not None else idle_gaps(m.busy_segments, span, m.gap_rule),
        warnings=m.warnings, dma_busy=m.dma_busy, compute_busy=m.compute_busy, dma_exposed=m.dma_exposed,
        skipped=m.skipped, last_event_end=None if m.last_event_end is None else m.last_event_end * span.unit,
        breakdowns=tuple(b for b in m.breakdowns if b is not None), facts=m.facts)
