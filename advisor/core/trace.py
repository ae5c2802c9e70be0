"""What an event trace adds to an analysis: busy time per engine (or command category), hotspots, DMA
sizes, tensor loads, utilisation over time and idle gaps (the shape Neuron traces fill), and a kind's
own tables as breakdowns (RBLN: per layer, per sequence, per device, the critical path)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

# Bin edges (bytes) of every kind's DMA transfer-size histogram: powers of two from 512 B to 1 MiB.
DMA_SIZE_EDGES = (0, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072, 262144, 524288, 1048576,
                  float("inf"))


@dataclass(frozen=True)
class Hotspot:
    name: str
    time: float  # seconds of instruction time (summed durations)
    share: float  # of all instruction time
    count: int


@dataclass(frozen=True)
class Gap:
    start: float  # seconds from the profile start
    duration: float


@dataclass(frozen=True)
class EngineBusy:
    """One engine's busy time in the trace: the union of the intervals of every timeline row it owns."""

    engine: str  # tensor | vector | scalar | gpsimd | sync; "" for a row no pattern recognised
    title: str  # "Tensor Engine", or the row's own name when unrecognised
    rows: tuple[str, ...]  # the timeline rows counted for it (TensorMatrix and TensorE for the Tensor Engine)
    busy: float  # seconds
    compute: bool  # counted as compute when measuring the time in which only DMA runs


@dataclass(frozen=True)
class TensorLoad:
    """How often an input or weight tensor was loaded: bytes DMA moved for it over its size."""

    name: str
    kind: str  # IN, WEIGHT, … as the NEFF declares it
    size: float  # bytes
    loaded_bytes: float
    loads: int | None  # DMA transfers that carried it
    repeat: float  # loaded_bytes / size; the number of full copies loaded
    source: str  # measured (from DMA events) | reported (Explorer's load_to_sbuf_repeat_factor)


@dataclass(frozen=True)
class BreakdownColumn:
    name: str  # stable key, e.g. ne_time
    title: str  # column heading, e.g. "Neural Engine time"
    unit: str  # a core.units unit: s, bytes, bytes/s, fraction, ratio, count


@dataclass(frozen=True)
class Breakdown:
    """A kind's table of figures by key (layer, sequence, device, category), in machine units; rows in
    the order the kind ranks them. Compare matches rows across analyses by key."""

    name: str  # stable id: layers, sequences, devices, categories, critical_path
    title: str
    key_title: str  # heading of the key column: "Layer", "Sequence"
    columns: tuple[BreakdownColumn, ...]
    rows: tuple[tuple[str, tuple[float | None, ...]], ...]  # (key, one value per column; None = unavailable)
    note: str = ""  # how the figures were measured, for the reader
    total_rows: int | None = None  # rows before the table was cut to its top entries (None = not cut)

    def column(self, name: str) -> int:
        return next(i for i, c in enumerate(self.columns) if c.name == name)

    def value(self, key: str, column: str) -> float | None:
        i = self.column(column)
        return next((values[i] for k, values in self.rows if k == key), None)


@dataclass(frozen=True)
class TraceSummary:
    """What the event trace adds to the summary: where the time goes and how DMA really looks."""

    instructions: int
    dma_transfers: int
    span: float  # seconds of the run: the summary's total_time, or up to the last event's end if later
    engines: tuple[EngineBusy, ...]  # busiest first; unrecognised rows last
    busy_union: float | None  # seconds with any instruction or DMA active; None without events
    hotspots_hlo: tuple[Hotspot, ...]
    hotspots_nki: tuple[Hotspot, ...]
    dma_size_edges: tuple[float, ...]  # histogram bin edges, bytes
    dma_size_counts: tuple[int, ...]
    timeline_edges: tuple[float, ...]  # seconds
    timeline: Mapping[str, tuple[float, ...]]  # engine title (or DMA) -> busy fraction per bin
    gaps: tuple[Gap, ...]  # the longest idle gaps, the warm-up gap first when there is one
    warnings: tuple[str, ...]  # the profiler's own caveats
    dma_busy: float | None = None  # seconds with any DMA transfer active (union)
    compute_busy: float | None = None  # seconds with any compute engine active (union)
    dma_exposed: float | None = None  # seconds with DMA active and no compute engine
    tensor_loads: tuple[TensorLoad, ...] = ()  # the most-reloaded input and weight tensors
    tensors_declared: int = 0  # tensors the file declares with a size
    dma_unnamed_fraction: float | None = None  # share of DMA bytes that name no declared tensor
    tensor_note: str | None = None  # why tensor loads are unavailable
    skipped_instructions: int = 0  # events without a usable time (not an object, null, negative): left out
    skipped_dma: int = 0
    last_event_end: float | None = None  # seconds from the profile start
    breakdowns: tuple[Breakdown, ...] = ()  # the kind's own tables

    def breakdown(self, name: str) -> Breakdown | None:
        return next((b for b in self.breakdowns if b.name == name), None)
