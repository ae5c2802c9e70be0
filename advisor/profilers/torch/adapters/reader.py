"""Kineto's `traceEvents` into compact columns per table.

Each event is decoded into a msgspec Struct holding only the fields advisor reads (the args too: a nested
Struct, so the dozens of other args — input shapes, strides — are skipped unread), a batch at a time, and its
fields go straight into numpy columns; no Python object per event outlives its batch. The events come as
per-event raw slices of the file, a run at a time (stream.py).

Every field is typed loosely (`Any`): vendors write the same arg as a number or a string (`"stream": "0x0"` on
ROCm, `"stream_id": "108"` on MTIA), and one odd value must cost that value, not the event or its batch.
Numbers in strings are read as numbers ("0x1f" and "stream 7" too, for ids); anything else is unavailable
(NaN, -1 for ids, "" for text). An event that is not an object, or whose ph/cat/name is not text, is counted as
malformed and left out.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any

import msgspec

from advisor.core.events import Interner
from advisor.profilers.torch import tables as t
from advisor.profilers.torch.adapters.knowledge import kineto
from advisor.profilers.torch.adapters.values import dims_text, id_value, json_text, number

BATCH = 8192  # events decoded together (json_events.BATCH)
MAX_CATEGORIES = 64  # distinct categories counted by name; the rest as one (a hostile file may have millions)
MORE = ("(more categories)", "")
MAX_RESPELLED = 1024  # older categories remembered (lower-cased once each)
MAX_COUNTERS = 256  # counter names kept from CUPTI ranges


class Args(msgspec.Struct, gc=False):
    """The args advisor reads; every other member of an event's args is skipped unread."""

    device: Any = None
    stream: Any = None
    stream_id: Any = None  # MTIA runtime calls
    correlation: Any = None
    external_id: Any = msgspec.field(default=None, name="External id")
    external_id_old: Any = msgspec.field(default=None, name="external id")  # older Kineto's device and runtime events
    ev_idx: Any = msgspec.field(default=None, name="Ev Idx")
    grid: Any = None
    block: Any = None
    registers: Any = msgspec.field(default=None, name="registers per thread")
    occupancy: Any = msgspec.field(default=None, name="est. achieved occupancy %")
    bytes: Any = None
    size: Any = None  # ROCm copy calls: the bytes, as text
    kind: Any = None  # ROCm copies: HtoD, DtoH, …
    collective: Any = msgspec.field(default=None, name="Collective name")
    nelems: Any = msgspec.field(default=None, name="In msg nelems")
    dtype: Any = None
    group_size: Any = msgspec.field(default=None, name="Group size")
    # record_shapes=True: an operator's inputs (issue 35: the work from shapes, operators.py)
    input_dims: Any = msgspec.field(default=None, name="Input Dims")
    input_types: Any = msgspec.field(default=None, name="Input type")
    concrete: Any = msgspec.field(default=None, name="Concrete Inputs")


NO_ARGS = Args()


class Counters(msgspec.Struct, gc=False):
    """A CUPTI counter range's args, as the reader keeps them: the counters' names (their values are not read)."""

    names: tuple[str, ...] = ()


class Event(msgspec.Struct, gc=False):
    ph: str = ""
    cat: str = ""
    name: str = ""
    pid: Any = None
    tid: Any = None
    ts: Any = None
    dur: Any = None
    args: Args | list | str | float | bool | None = None


Item = Event | list | str | float | bool | None  # an entry of traceEvents: anything but an object is malformed

# Column kinds: NUM float64 (NaN unknown), ID int-valued float64 (NaN unknown; "0x1f", "stream 7" read),
# TEXT codes ("" unknown), DIMS codes of "x,y,z" ("" unknown), JSON codes of the value as compact JSON text ("" for
# none, or one longer than MAX_JSON: an operator's recorded shapes, never a page of them).
NUM, ID, TEXT, DIMS, JSON = "num", "id", "text", "dims", "json"
FIELDS: dict[str, tuple[Callable[[Any], Any], str]] = {
    "ts": (attrgetter("ts"), NUM), "dur": (attrgetter("dur"), NUM), "name": (attrgetter("name"), TEXT),
    "pid": (attrgetter("pid"), ID), "tid": (attrgetter("tid"), ID),
    **{f: (attrgetter(f"args.{f}"), ID) for f in ("device", "stream", "stream_id", "correlation", "external_id",
                                                    "external_id_old")},
    **{f: (attrgetter(f"args.{f}"), NUM) for f in ("ev_idx", "registers", "occupancy", "bytes", "size", "nelems",
                                                     "group_size")},
    **{f: (attrgetter(f"args.{f}"), TEXT) for f in ("kind", "collective", "dtype")},
    "grid": (attrgetter("args.grid"), DIMS), "block": (attrgetter("args.block"), DIMS),
    **{f: (attrgetter(f"args.{f}"), JSON) for f in ("input_dims", "input_types", "concrete")},
}
_COMMON = ("ts", "dur", "name", "tid")
_DEVICE = ("pid", "device", "stream", "correlation", "external_id")  # pid, tid: a device activity's device, stream
_COMMS = ("collective", "nelems", "dtype", "group_size")
TABLE_FIELDS: dict[str, tuple[str, ...]] = {
    t.KERNEL: (*_COMMON, *_DEVICE, "grid", "block", "registers", "occupancy", *_COMMS),
    t.MEMCPY: (*_COMMON, *_DEVICE, "bytes", "kind"),
    t.MEMSET: (*_COMMON, *_DEVICE, "bytes"),
    t.RUNTIME: (*_COMMON, "device", "stream", "stream_id", "correlation", "external_id", "size"),
    t.CPU_OP: (*_COMMON, "external_id", "ev_idx", *_COMMS, "input_dims", "input_types", "concrete"),
    t.ANNOTATION: (*_COMMON, "external_id", "ev_idx"),
    t.GPU_ANNOTATION: (*_COMMON, "pid", "device", "stream", "external_id"),
    t.SYNC: (*_COMMON, *_DEVICE),
}
@dataclass
class TableColumns:
    """One table's columns, filled a batch at a time (per-batch arrays, joined once at the end). Text is coded
    as it comes, whatever it is (a null, a number); codes of values that are not text become the code of ""
    when the column is read (`column`)."""

    fields: tuple[str, ...]
    parts: dict[str, list[Any]] = field(default_factory=dict)
    interners: dict[str, Interner] = field(default_factory=dict)
    dims: dict[str, dict[Any, int]] = field(default_factory=dict)  # field -> grid/block value (a tuple) -> code
    count: int = 0

    def _numbers(self, getter: Callable[[Any], Any], events: list[Event], kind: str) -> Any:
        import numpy as np

        try:  # the common case: numbers and nulls, converted in C
            return np.fromiter(map(getter, events), np.float64, len(events))
        except (TypeError, ValueError, OverflowError):
            return np.fromiter(map(number if kind == NUM else id_value, map(getter, events)), np.float64, len(events))

    def _texts(self, getter: Callable[[Any], Any], events: list[Event], interner: Interner) -> Any:
        import numpy as np

        try:
            return np.fromiter(map(interner.__getitem__, map(getter, events)), np.int32, len(events))
        except TypeError:  # an unhashable value (a list where text belongs)
            texts = (v if isinstance(v, str) else "" for v in map(getter, events))
            return np.fromiter(map(interner.__getitem__, texts), np.int32, len(events))

    @staticmethod
    def _dim(value: Any, interner: Interner, seen: dict[Any, int]) -> int:
        try:
            key = tuple(value) if type(value) is list else value
            return seen[key]
        except KeyError:
            code = seen[key] = interner[dims_text(value)]
            return code
        except TypeError:  # nested lists, a mapping: not dims
            return interner[""]

    def add(self, events: list[Event]) -> None:
        import numpy as np

        for name in self.fields:
            getter, kind = FIELDS[name]
            if kind in (NUM, ID):
                column = self._numbers(getter, events, kind)
                if name == "external_id" and np.isnan(column).any():  # older Kineto: `external id`
                    old = self._numbers(FIELDS["external_id_old"][0], events, ID)
                    column = np.where(np.isnan(column), old, column)
            else:
                interner = self.interners.setdefault(name, Interner())
                if kind == DIMS:
                    seen = self.dims.setdefault(name, {})
                    column = np.fromiter((self._dim(v, interner, seen) for v in map(getter, events)), np.int32,
                                         len(events))
                elif kind == JSON:
                    column = np.fromiter((interner[json_text(v)] for v in map(getter, events)), np.int32, len(events))
                else:
                    column = self._texts(getter, events, interner)
            self.parts.setdefault(name, []).append(column)
        self.count += len(events)

    def held_bytes(self) -> int:
        """The bytes its columns hold: 8 a number, 4 a code, per event."""
        return self.count * sum(8 if FIELDS[name][1] in (NUM, ID) else 4 for name in self.fields)

    def column(self, name: str) -> Any:
        import numpy as np

        kind = FIELDS[name][1]
        parts = self.parts.get(name) or [np.empty(0, np.int32 if kind in (TEXT, DIMS) else np.float64)]
        column = np.concatenate(parts) if len(parts) > 1 else parts[0]
        if kind == TEXT:
            column = self._canonical(name)[column] if len(column) else column
        return column

    def _canonical(self, name: str) -> Any:
        """Code -> code among `names(name)`: values that are not text coded as ""."""
        import numpy as np

        texts = [k if isinstance(k, str) else "" for k in self.interners.get(name) or ()]
        index: dict[str, int] = {}
        return np.array([index.setdefault(text, len(index)) for text in texts], dtype=np.int32)

    def names(self, name: str) -> tuple[str, ...]:
        if FIELDS[name][1] in (DIMS, JSON):
            return tuple(self.interners.get(name) or ())
        return tuple(dict.fromkeys(k if isinstance(k, str) else "" for k in self.interners.get(name) or ()))


@dataclass
class Collected:
    """Every table's columns, and what was left out: entries that are not events, and events of categories
    (or phases) no table takes, by category."""

    tables: dict[str, TableColumns]
    malformed: int = 0
    left_out: dict[tuple[str, str], int] = field(default_factory=dict)  # (category, phase) -> events
    categories: Counter[str] = field(default_factory=Counter)  # events per category the tables take
    other_ev_idx: list[Any] = field(default_factory=list)  # "Ev Idx" of events no table takes: Kineto numbers them too
    counter_ranges: int = 0  # CUPTI range-profiler events (kineto.yaml counter_ranges): counted, left out
    counters: Counter[str] = field(default_factory=Counter)  # their counters' names -> ranges holding each
    range_devices: Counter[int] = field(default_factory=Counter)  # the device each range measured (its pid)
    respelled: dict[str, str | None] = field(default_factory=dict)  # an older category -> its table (None: none)

    @classmethod
    def empty(cls) -> Collected:
        return cls({name: TableColumns(fields) for name, fields in TABLE_FIELDS.items()})

    def _older(self, category: str) -> str | None:
        """The table of a category not written as today's Kineto writes it (`Kernel`, `Operator`), else None."""
        try:
            return self.respelled[category]
        except KeyError:
            table = kineto().older_categories.get(category.lower())
            if len(self.respelled) < MAX_RESPELLED:  # a hostile file's millions of categories: not all remembered
                self.respelled[category] = table
            return table

    def add(self, batch: list[Any]) -> None:
        know = kineto()
        table_of = know.categories
        groups: dict[Any, list[Event]] = {}  # by table, or (table, category) for an older spelling
        left_out = self.left_out
        for event in batch:
            if type(event) is Event:
                key: str | tuple[str, str] | None = table_of.get(event.cat) if event.ph == "X" else None
                if key is None and event.ph == "X" and (table := self._older(event.cat)) is not None:
                    if table == t.CPU_OP and know.step_operator.match(event.name):  # an older trace's step range
                        table = t.ANNOTATION
                    key = (table, event.cat)
                if key is not None:
                    if type(event.args) is not Args:
                        event.args = NO_ARGS
                    try:
                        groups[key].append(event)
                    except KeyError:
                        groups[key] = [event]
                    continue
                cat_ph = (event.cat, event.ph)
                left_out[cat_ph] = left_out.get(cat_ph, 0) + 1
                if type(event.args) is Args and event.args.ev_idx is not None:  # a memory record (ph i), …
                    self.other_ev_idx.append(event.args.ev_idx)
                elif type(event.args) is Counters and event.ph == "X":
                    self._range(event, event.args)
            else:
                self.malformed += 1
        if len(left_out) > MAX_CATEGORIES:  # a hostile file's millions of categories: the rest counted as one
            ranked = sorted(left_out.items(), key=lambda kv: -kv[1])
            kept = dict(ranked[:MAX_CATEGORIES - 1])
            kept[MORE] = kept.get(MORE, 0) + sum(n for _, n in ranked[MAX_CATEGORIES - 1:])
            self.left_out = kept
        for key, events in groups.items():
            table = key if type(key) is str else key[0]
            if type(key) is str and table in (t.KERNEL, t.RUNTIME):  # tables fed by several categories
                self.categories.update(map(attrgetter("cat"), events))
            else:  # one category: an older spelling is grouped by itself
                self.categories[events[0].cat] += len(events)
            self.tables[table].add(events)

    def _range(self, event: Event, counters: Counters) -> None:
        """A CUPTI counter range (its args, `counters`): counted, its counters named (so many names at most), its
        device noted."""
        self.counter_ranges += 1
        for name in counters.names:
            if name in self.counters or len(self.counters) < MAX_COUNTERS:
                self.counters[name] += 1
        device = id_value(event.pid)
        if device == device and 0 <= device < 1 << 20:
            self.range_devices[int(device)] += 1

    def column_bytes(self) -> int:
        return sum(cols.held_bytes() for cols in self.tables.values())

    @property
    def other(self) -> dict[str, int]:
        """Events no table takes, by category (and phase when not complete)."""
        out: dict[str, int] = {}
        for (cat, ph), n in self.left_out.items():
            label = (cat or "(no category)") + ("" if ph in ("X", "") else f" (ph {ph})")
            out[label] = out.get(label, 0) + n
        return out


_ARGS = msgspec.json.Decoder(dict[str, Any]).decode  # a counter range, decoded whole for its args' names
DROPPED = msgspec.Raw()  # an entry's slice once its batch is taken (empty: the slice is freed)


def _item(value: Any) -> Any:
    """One entry as an Event when it is an object of the right shape, else None (malformed)."""
    try:
        return msgspec.convert(value, Event) if isinstance(value, dict) else None
    except (msgspec.ValidationError, RecursionError):
        return None


def _one(raw: msgspec.Raw, decoder: msgspec.json.Decoder) -> Any:
    try:
        return decoder.decode(raw)
    except (msgspec.ValidationError, RecursionError):
        pass
    try:  # out-of-range numbers (1e400) msgspec refuses, Python's parser reads as inf
        return _item(json.loads(bytes(raw)))
    except (ValueError, RecursionError):
        return None


def decoded(raws: list[msgspec.Raw], done: Callable[[int], None]) -> Iterable[list[Any]]:
    """The entries (raw slices) decoded BATCH at a time; a batch that does not decode as a whole is decoded
    entry by entry, so a bad entry costs itself only. `raws` is consumed: each batch's slices are dropped from
    it (set to DROPPED) as the batch is taken, so the slices (≈70 B an event: 0.3× a Kineto file) are freed while
    the columns grow instead of all being held to the end."""
    batch_decoder = msgspec.json.Decoder(list[Item])
    one_decoder = msgspec.json.Decoder(Item)
    mark = json.dumps(kineto().counter_ranges).encode()
    for start in range(0, len(raws), BATCH):
        chunk = raws[start:start + BATCH]
        raws[start:start + len(chunk)] = [DROPPED] * len(chunk)
        joined = b"[" + b",".join(chunk) + b"]"
        try:
            batch = batch_decoder.decode(joined)
        except (msgspec.ValidationError, RecursionError):
            batch = [_one(raw, one_decoder) for raw in chunk]
        if mark in joined:  # a CUPTI range-profiler trace (rare): its ranges' args are counters, named here
            _name_counters(batch, chunk)
        yield batch
        done(start + len(chunk))


def _name_counters(batch: list[Any], chunk: list[msgspec.Raw]) -> None:
    """The args of each counter range (kineto.yaml counter_ranges) as Counters: the names of its numeric args,
    which the Args struct skips unread."""
    category = kineto().counter_ranges
    for event, raw in zip(batch, chunk, strict=True):
        if type(event) is not Event or event.cat != category:
            continue
        try:
            args = _ARGS(raw).get("args")
        except (msgspec.DecodeError, msgspec.ValidationError, RecursionError, AttributeError):
            args = None
        names = tuple(k for k, v in args.items() if isinstance(v, (int, float)) and not isinstance(v, bool)) \
            if isinstance(args, dict) else ()
        # msgspec decodes no union of two untagged Structs, so `Event.args` cannot declare Counters: set here only
        event.args = Counters(names)  # type: ignore[assignment]


def collect(batches: Iterable[list[Any]]) -> Collected:
    found = Collected.empty()
    for batch in batches:
        found.add(batch)
    return found
