"""The compact rows phase 1 writes and phase 2 reads: row kinds and flags, shared limits, and `Records`."""

from __future__ import annotations

from array import array
from typing import Any

from advisor.inputs.perfetto.names import NameTable
from advisor.inputs.perfetto.packets import FramingProblem

# row kinds (a STATE row precedes the event row of the same packet)
STATE, BEGIN, END, INSTANT, COMPLETE = 0, 1, 2, 3, 4
# row flags
HAS_TRACK, NEEDS_STATE, INTERNED_NAME, INLINE_NAME, SAME_PACKET, DEFERRED_ARGS = 1, 2, 4, 8, 16, 32
WIDTH = 7  # kind, sequence, flags, timestamp, clock, track, name
# pseudo clock ids for legacy TrackEvent microsecond timestamps
LEGACY_ABSOLUTE_US, LEGACY_DELTA_US = 0xFFFF_FFF0, 0xFFFF_FFF1
U64 = 1 << 64
OPEN = -(1 << 63)  # end of a slice never closed
MAX_TIME = 1 << 62  # ns (146 years): a timestamp or duration past it is garbage, not a trace
TRACE_CLOCK = 6  # BOOTTIME, Perfetto's default trace clock
SEQUENCE_CLOCKS = range(64, 128)  # clock ids scoped to one sequence
DENSE_GAP = 1 << 16  # an interned id this far past the last keeps the table a dict, not an array
MAX_INFLATED = 1 << 30  # one compressed_packets container; larger is a bomb, not a trace
CHUNK_BYTES = 1 << 20  # packets decoded together with one Trace.FromString


def _text(value: Any) -> str:
    """upb hands a proto2 string that is not UTF-8 back as bytes."""
    return value if isinstance(value, str) else bytes(value).decode("utf-8", "replace")


class Records:
    """Phase 1's output for one byte range: rows of WIDTH unsigned ints, and side columns keyed by row."""

    def __init__(self) -> None:
        self.rows = array("Q")
        self.durations = array("q")  # COMPLETE rows, in order: ns
        self.arg_rows = array("Q")
        self.arg_bytes = array("d")  # NaN where the slice names no bytes
        self.arg_cycles = array("d")
        self.flow_rows = array("Q")
        self.flow_ids = array("Q")
        self.flow_ends = array("B")  # 1: a terminating flow id
        self.states: list[tuple[Any, ...]] = []  # one per STATE row
        self.deferred: list[tuple[int, tuple[bytes, ...]]] = []  # (row, serialized annotations)
        self.strings: list[str] = []  # event names (inline and interned), by index, while extracting
        self.names = NameTable()  # then: the names compressed (compact to send and keep)
        self.packets = self.skipped = self.compressed = 0
        self.problem: FramingProblem | None = None
        self.budget = MAX_INFLATED  # bytes compressed_packets containers may inflate to in this range
        self.inflated = 0  # bytes they did inflate to
        self.over = False  # a container passed the budget: the range stopped there
        self._codes: dict[str, int] = {}  # name -> index while extracting

    @property
    def count(self) -> int:
        return len(self.rows) // WIDTH

    def local(self, text: Any) -> int:
        """The index of an event name in this range's table."""
        text = text if isinstance(text, str) else _text(text)
        codes = self._codes
        code = codes.get(text)
        if code is None:
            code = codes[text] = len(self.strings)
            self.strings.append(text)
        return code

    def close(self) -> None:
        """The names table compressed into `names` (a str costs ~80 bytes, its UTF-8 ~30, compressed ~3)."""
        self.names.add(self.strings)
        self.strings = []
        self._codes = {}
