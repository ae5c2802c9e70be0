"""The event model every full-trace kind produces: tables of events (numpy columns, times in ns from
the trace start, sizes in bytes), one table per category (Neuron: instruction, dma; a Perfetto trace:
one per track category), repeated strings stored once as integer codes. Kind-specific columns ride
along in `extra`; what a kind knows about the file beyond its events rides in `EventTrace.extra`."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

NS = 1e-9  # seconds per nanosecond: the unit of every event table's times
CHUNK = 1 << 16  # names read at a time when a table is walked
ROWS_AT_A_TIME = 1 << 20  # rows an array helper's temporaries cover at once


def chunks(names: Sequence[str], n: int = CHUNK) -> Iterator[Sequence[str]]:
    """Any sequence of strings in slices of up to n (a compressed table decodes one slice at a time)."""
    for a in range(0, len(names), n):
        yield names[a:a + n]


def int32_if_fits(values: Any) -> Any:
    """int64 values as int32 when they all fit (users widen before arithmetic), else as they are."""
    import numpy as np

    if len(values) and int(values.min()) >= -2**31 and int(values.max()) < 2**31:
        return values.astype(np.int32)
    return values


def code_type(count: int) -> Any:
    """The smallest signed integer type for codes 0..count-1 (users widen before arithmetic)."""
    import numpy as np

    return np.int8 if count < 2**7 else np.int16 if count < 2**15 else np.int32 if count < 2**31 else np.int64


def narrowest(values: Any) -> Any:
    """Integers in the smallest signed type that holds them (users widen before arithmetic that could
    overflow); empty values as they are."""
    import numpy as np

    if not len(values):
        return values
    low, high = int(values.min()), int(values.max())
    for kind in (np.int8, np.int16, np.int32):
        if np.iinfo(kind).min <= low and high <= np.iinfo(kind).max:
            return values.astype(kind, copy=False)
    return values


def first_rows(values: Any, size: int) -> Any:
    """For each integer 0..size-1, the first row of `values` that holds it, and len(values) where none does.
    np.minimum.at, not `first[values[::-1]] = rows[::-1]`: NumPy does not say which of repeated indices'
    assignments wins, and ufunc.at is as fast. A block at a time: ufunc.at copies its indices as intp, 8 bytes
    a row, where the assignment did not."""
    import numpy as np

    n = len(values)
    dtype = np.int32 if n < 2**31 - 1 else np.int64
    first = np.full(size, n, dtype=dtype)
    for start in range(0, n, ROWS_AT_A_TIME):
        block = values[start:start + ROWS_AT_A_TIME]
        np.minimum.at(first, block, np.arange(start, start + len(block), dtype=dtype))
    return first


@dataclass(frozen=True)
class Kept:
    """A per-event column of a trace's tables (RBLN: bytes, cycles) kept only from the first to the last table
    that carries it: `values` over table-order positions [start, start + len(values))."""

    values: Any
    start: int

    def covers(self, a: int, b: int) -> bool:
        return self.start <= a and b <= self.start + len(self.values)

    def of_table(self, a: int, b: int) -> Any:
        """The values of table positions [a, b), or None when the table lies outside the kept part."""
        return self.values[a - self.start:b - self.start] if self.covers(a, b) else None


@dataclass(frozen=True)
class Codes:
    """A column of repeated strings as integer codes into `names`."""

    codes: Any  # numpy int32 array
    names: Sequence[str]  # a tuple, or inputs/perfetto/names.Names when there are millions of distinct strings

    def value(self, i: int) -> str:
        return self.names[int(self.codes[i])]


class Interner(dict):
    """Repeated strings as integer codes. A dict whose missing keys number themselves, so
    `map(interner.__getitem__, values)` codes a column without a Python-level loop."""

    def __missing__(self, value: str) -> int:
        code = self[value] = len(self)
        return code

    def codes(self, column: Any) -> Codes:
        return Codes(codes=column, names=tuple(self))


@dataclass(frozen=True)
class EventTable:
    """Events of one category: when, how long, on which timeline track, what, and how many bytes."""

    start: Any  # float64 ns from the trace start; negative or NaN = unusable
    duration: Any  # float64 ns
    track: Codes  # the timeline row (an engine, a DMA queue, a Perfetto track)
    name: Codes  # what ran (an HLO op, a tensor a transfer carried, a command name)
    bytes: Any = None  # float64 bytes moved, for transfers; None when the category moves none
    extra: Mapping[str, Any] = field(default_factory=dict)  # the kind's own columns (Codes or arrays)

    def __len__(self) -> int:
        return len(self.start)


@dataclass(frozen=True)
class EventTrace:
    """A full trace: its event tables by category, and what the file says about itself."""

    tables: Mapping[str, EventTable]
    summary: dict[str, Any]  # the profiler's own summary fields, read by the kind's conventions
    metadata: dict[str, Any]  # facts about the machine and capture
    warnings: tuple[str, ...] = ()  # the profiler's own caveats
    extra: Mapping[str, Any] = field(default_factory=dict)  # e.g. Neuron: the NEFF's tensor declarations

    def table(self, category: str) -> EventTable | None:
        return self.tables.get(category)
