"""What an event trace adds to an analysis, in one vocabulary for every kind: the run's span, busy time
per engine (or command category) and their unions, a transfer-size histogram, utilisation over time,
idle gaps and the profiler's warnings; everything else a kind measures is a breakdown (a table of
figures by key, each column with its unit): Neuron's hotspots and tensor reloads, RBLN's layers,
sequences, devices and critical path."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from advisor.core.errors import AdvisorError, suggest
from advisor.core.units import UNITS

# Bin edges (bytes) of every kind's DMA transfer-size histogram: powers of two from 512 B to 1 MiB.
DMA_SIZE_EDGES = (0, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072, 262144, 524288, 1048576,
                  float("inf"))
TEXT = "text"  # the unit of a breakdown column of words (a tensor's kind), not figures


@dataclass(frozen=True)
class Gap:
    start: float  # seconds from the profile start
    duration: float


@dataclass(frozen=True)
class EngineBusy:
    """One engine's busy time in the trace: the union of the intervals of every timeline row it owns."""

    engine: str  # the kind's engine or category key (tensor, neural_engine); "" for a row no pattern recognised
    title: str  # "Tensor Engine", or the row's own name when unrecognised
    rows: tuple[str, ...]  # the timeline rows counted for it (TensorMatrix and TensorE for the Tensor Engine)
    busy: float  # seconds
    compute: bool  # counted as compute when measuring the time in which only DMA runs


@dataclass(frozen=True)
class BreakdownColumn:
    name: str  # stable key, e.g. ne_time
    title: str  # column heading, e.g. "Neural Engine time"
    unit: str  # a core.units unit: s, bytes, bytes/s, fraction, ratio, count (TEXT for a text column)


@dataclass(frozen=True)
class BreakdownFigure:
    """A figure about a breakdown as a whole, with its unit: the tensors a file declares."""

    name: str
    title: str
    unit: str
    value: float | None  # None = unavailable


@dataclass(frozen=True)
class Breakdown:
    """A kind's table of figures by key (layer, sequence, device, category, HLO op, tensor), in machine
    units; rows in the order the kind ranks them. Compare matches rows across analyses by key."""

    name: str  # stable id: layers, sequences, devices, categories, critical_path, hotspots_hlo, tensor_loads
    title: str
    key_title: str  # heading of the key column: "Layer", "Sequence"
    columns: tuple[BreakdownColumn, ...]
    rows: tuple[tuple[str, tuple[float | None, ...]], ...]  # (key, one value per column; None = unavailable)
    note: str = ""  # how the figures were measured, or why the table has no rows, for the reader
    total_rows: int | None = None  # rows before the table was cut to its top entries (None = not cut)
    text_columns: tuple[BreakdownColumn, ...] = ()  # columns of words (unit TEXT): a tensor's kind
    texts: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # key -> one text per text column
    figures: tuple[BreakdownFigure, ...] = ()  # about the table as a whole

    def column(self, name: str) -> int:
        return next(i for i, c in enumerate(self.columns) if c.name == name)

    def value(self, key: str, column: str) -> float | None:
        i = self.column(column)
        return next((values[i] for k, values in self.rows if k == key), None)

    def text(self, key: str, column: str) -> str:
        """A row's word in a text column; "" when the row or the column has none."""
        i = next((i for i, c in enumerate(self.text_columns) if c.name == column), None)
        texts = self.texts.get(key)
        return texts[i] if texts and i is not None else ""

    def layout_problem(self, data: Mapping[str, Any]) -> str | None:
        """Why this table (read from a saved analysis) is not the one its kind draws: its column, text and figure
        names against the kind's report.yaml `breakdowns:` entry (the report looks columns up by name), and each
        column's and figure's unit against the one declared there (a byte column relabelled `s` would print
        bytes as seconds). None when it matches, or when the kind declares no such table."""
        spec = (data.get("breakdowns") or {}).get(self.name)
        if not isinstance(spec, Mapping):
            return None
        parts: tuple[tuple[str, Sequence[BreakdownColumn | BreakdownFigure]], ...] = (
            ("columns", self.columns), ("texts", self.text_columns), ("figures", self.figures))
        for key, have in parts:
            entries = [e for e in spec.get(key) or () if isinstance(e, list) and e]
            declared = [e[0] for e in entries]
            if sorted(c.name for c in have) != sorted(declared):
                return (f"trace breakdown '{self.name}': {key} {', '.join(c.name for c in have) or 'none'}, where its "
                        f"kind has {', '.join(declared) or 'none'}")
            units = {e[0]: e[2] for e in entries if len(e) == 3}
            wrong = next((c for c in have if c.name in units and c.unit != units[c.name]), None)
            if wrong is not None:
                return (f"trace breakdown '{self.name}': {key[:-1]} '{wrong.name}' in '{wrong.unit}', where its kind's "
                        f"is in '{units[wrong.name]}'")
        return None

    def figure(self, name: str) -> float | None:
        return next((f.value for f in self.figures if f.name == name), None)


@dataclass(frozen=True)
class TraceSummary:
    """What the event trace adds to the summary: where the time goes and how the transfers really look."""

    events: Mapping[str, int]  # usable events counted per category, the kind's keys (Neuron: instruction, dma)
    span: float  # seconds of the run: the summary's total_time, or up to the last event's end if later
    engines: tuple[EngineBusy, ...]  # busiest first; unrecognised rows last
    busy_union: float | None  # seconds with any instruction or DMA active; None without events
    dma_size_edges: tuple[float, ...]  # histogram bin edges, bytes
    dma_size_counts: tuple[int, ...]
    timeline_edges: tuple[float, ...]  # seconds
    timeline: Mapping[str, tuple[float, ...]]  # engine title (or DMA) -> busy fraction per bin
    gaps: tuple[Gap, ...]  # the longest idle gaps, longest first (the head and tail of the run among them)
    warnings: tuple[str, ...]  # the profiler's own caveats
    dma_busy: float | None = None  # seconds with any DMA transfer active (union)
    compute_busy: float | None = None  # seconds with any compute engine active (union)
    dma_exposed: float | None = None  # seconds with DMA active and no compute engine
    # per category of `events`: events without a usable time (not an object, null, negative), left out
    skipped: Mapping[str, int] = field(default_factory=dict)
    last_event_end: float | None = None  # seconds from the profile start
    breakdowns: tuple[Breakdown, ...] = ()  # the kind's own tables
    # what the trace names in words (the operator stack a blocking copy sits in): the packs' terms may quote them
    facts: Mapping[str, str] = field(default_factory=dict)

    def breakdown(self, name: str) -> Breakdown | None:
        return next((b for b in self.breakdowns if b.name == name), None)



def text_fields(info: Mapping[str, str], trace: TraceSummary | None) -> dict[str, str]:
    """A profile's text fields and the facts its trace names, which the packs' terms are chosen by or quote."""
    return {**info, **(trace.facts if trace is not None else {})}


@dataclass(frozen=True)
class BreakdownLayout:
    """How a kind titles one of its breakdowns (its data/report.yaml `breakdowns:`); its code fills the values."""

    name: str
    title: str
    key_title: str
    columns: tuple[BreakdownColumn, ...]
    text_columns: tuple[BreakdownColumn, ...] = ()
    figures: tuple[BreakdownColumn, ...] = ()  # the figures' names, titles and units

    def make(self, rows: Sequence[tuple[str, tuple[float | None, ...]]], note: str = "",
             total_rows: int | None = None, texts: Mapping[str, tuple[str, ...]] | None = None,
             figures: Mapping[str, float | None] | None = None) -> Breakdown:
        values = figures or {}
        if any(len(v) != len(self.columns) for _, v in rows):  # a value under another column's heading: a bug
            raise ValueError(f"breakdown {self.name}: a row without one value per column ({len(self.columns)})")
        return Breakdown(self.name, self.title, self.key_title, self.columns, tuple(rows), note, total_rows,
                         self.text_columns, dict(texts or {}),
                         tuple(BreakdownFigure(f.name, f.title, f.unit, values.get(f.name)) for f in self.figures))


class KindData(Protocol):
    """What the layout loader reads of a profile kind (kinds.base.ProfileKind, which core may not import); read-only,
    as the frozen descriptor's fields are."""

    @property
    def name(self) -> str: ...
    @property
    def folder(self) -> Path: ...

    def data(self, name: str) -> dict[str, Any]: ...


def kind_breakdown(kind: KindData, name: str, columns: Sequence[str], text_columns: Sequence[str] = (),
                   figures: Sequence[str] = (), known_units: Collection[str] = UNITS) -> BreakdownLayout:
    """Breakdown `name` as the kind's data/report.yaml titles it (`breakdown_layout`); an error names the kind
    and the file."""
    where = f"profile kind '{kind.name}' ({kind.folder / 'report.yaml'})"
    return breakdown_layout(kind.data("report.yaml"), name, where, columns, text_columns, figures, known_units)


def breakdown_layout(data: Mapping[str, Any], name: str, where: str, columns: Sequence[str],
                     text_columns: Sequence[str] = (), figures: Sequence[str] = (),
                     known_units: Collection[str] = UNITS) -> BreakdownLayout:
    """Breakdown `name` from a report.yaml mapping: `breakdowns: {name: {title, key, columns: [[name, title,
    unit], …], texts: [[name, title], …], figures: [[name, title, unit], …]}}`. Each part comes back in the
    order the code fills it (`columns`, …), so the file's order is free. A missing or unknown name, or a unit
    not in `known_units`, is an AdvisorError at `where`: a typo must never put a table's figures under the
    wrong heading or unit."""
    spec = (data.get("breakdowns") or {}).get(name)
    at = f"breakdowns.{name}"
    if not isinstance(spec, Mapping) or not isinstance(spec.get("title"), str) or not isinstance(spec.get("key"), str):
        raise AdvisorError(where, f"{at}: missing, or without its title and key (the key column's heading)")

    def part(key: str, wanted: Sequence[str], size: int) -> tuple[BreakdownColumn, ...]:
        listed: dict[str, list[str]] = {}
        for entry in spec.get(key) or ():
            if not (isinstance(entry, list) and len(entry) == size and all(isinstance(e, str) for e in entry)):
                shape = "[name, title, unit]" if size == 3 else "[name, title]"
                raise AdvisorError(where, f"{at}.{key}: expected {shape}, got {entry!r}")
            listed[entry[0]] = entry
        missing = [n for n in wanted if n not in listed]
        extra = [n for n in listed if n not in wanted]
        if missing or extra:
            found = f"no '{missing[0]}'" if missing else f"unknown name '{extra[0]}'{suggest(extra[0], wanted)}"
            raise AdvisorError(where, f"{at}.{key}: {found} (the code fills {', '.join(wanted) or 'none'})")
        out = []
        for n in wanted:
            unit = listed[n][2] if size == 3 else TEXT
            if size == 3 and unit not in known_units:
                raise AdvisorError(where, f"{at}.{key}: '{n}' has unknown unit '{unit}'{suggest(unit, known_units)}")
            out.append(BreakdownColumn(n, listed[n][1], unit))
        return tuple(out)

    return BreakdownLayout(name, spec["title"], spec["key"], part("columns", columns, 3),
                           part("texts", text_columns, 2), part("figures", figures, 3))
