"""JSON arrays of event objects into compact columns, for every kind whose profiler writes large JSON
traces (a Neuron full JSON trace's `instruction` and `dma` lists; a Chrome trace's `traceEvents`).

A kind declares the fields it reads as a `msgspec.Struct` with defaults: text fields default to ""
and become integer codes into a table of their distinct values (`core.events.Interner`: a repeated
engine or kernel name is stored once), every other field is a number and becomes a float64 column
(its default, such as -1, marks it absent). Unknown members of an event are skipped unread.

Two ways in, the same columns out:
- `array_columns`: a JSON array held as one raw slice of the input (`msgspec.Raw`, zero-copy), split
  into per-event slices and decoded a batch at a time by msgspec's C decoder straight into columns
  (peak memory ≈ the input plus the columns plus one array's slices);
- `stream_columns`: an array of a file too large to hold, read forward by inputs/json_stream.py in runs
  of whole events, each decoded by the same C decoder (peak ≈ the columns plus one run).
An event whose fields have the wrong types keeps those of the right type and takes the defaults for the
others (`lenient`), so one odd event never makes the file unreadable.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from functools import cache
from itertools import islice
from operator import attrgetter
from types import GenericAlias
from typing import Any

import msgspec

from advisor.core.errors import AdvisorError
from advisor.core.events import Interner
from advisor.inputs.json_stream import Reader, value_type, values
from advisor.inputs.limits import MAX_STRING_CHARS

Progress = Callable[[str], None]  # a sentence at a time (kinds.base.Progress; inputs may not import kinds)
BATCH = 8192  # events decoded together: the C decoder does the loop, memory stays one batch wide


class Percent:
    """Progress as whole percents of one step, printed only when the percent changes."""

    def __init__(self, progress: Progress | None, what: str) -> None:
        self.progress, self.what, self.shown = progress, what, -1

    def __call__(self, done: float, total: float) -> None:
        percent = int(100 * done / total) if total else 100
        if self.progress and percent != self.shown:
            self.shown = percent
            self.progress(f"{self.what}: {percent} %")


@cache
def _defaults(kind: type[msgspec.Struct]) -> Any:
    return kind()


def lenient(event: Any, kind: type[msgspec.Struct]) -> Any:
    """An event as a struct whatever its fields hold: fields of the right type are kept, the others
    (null, a string for a number, …) take their defaults; an unknown time makes the event invalid,
    not the file."""
    defaults = _defaults(kind)
    if not isinstance(event, dict):
        return defaults
    kept = {}
    for name in kind.__struct_fields__:
        value = event.get(name)
        if isinstance(value, str) if isinstance(getattr(defaults, name), str) else (
                isinstance(value, (int, float)) and not isinstance(value, bool)):
            kept[name] = value
    return kind(**kept)


def array_decoder(kind: type[msgspec.Struct]) -> Callable[[bytes], list[Any]]:
    """A JSON array of events decoded as a list of `kind`, each odd event taken leniently."""
    # list[kind], spelt as the value it is (`kind` is known at run time only)
    typed, untyped = msgspec.json.Decoder(GenericAlias(list, (kind,))), msgspec.json.Decoder(list[Any])

    def decode(text: bytes) -> list[Any]:
        try:
            return typed.decode(text)
        except msgspec.ValidationError:  # rare: decode these events field by field
            return [lenient(event, kind) for event in untyped.decode(text)]

    return decode


def batches(raws: list[msgspec.Raw], kind: type[msgspec.Struct]) -> Iterator[list[Any]]:
    """The events (raw slices) decoded as `kind`, BATCH at a time."""
    decode = array_decoder(kind)
    for i in range(0, len(raws), BATCH):
        yield decode(b"[" + b",".join(raws[i:i + BATCH]) + b"]")  # Raw is a buffer: no copies


def columns(batches: Iterable[list[Any]], kind: type[msgspec.Struct], count: int | None = None,
            done: Callable[[int], None] = lambda _: None) -> dict[str, Any]:
    """The struct's numeric fields as float64 columns and its text fields as integer codes, filled
    batch by batch without a Python-level loop over events: into arrays of `count` events when the
    count is known (no second copy), else from per-batch pieces."""
    import numpy as np

    texts = {f for f in kind.__struct_fields__ if isinstance(getattr(_defaults(kind), f), str)}
    dtypes = {f: np.int32 if f in texts else np.float64 for f in kind.__struct_fields__}
    whole = {f: np.empty(count, dtype=d) for f, d in dtypes.items()} if count is not None else None
    parts: dict[str, list[Any]] = {f: [] for f in dtypes}
    interners = {f: Interner() for f in texts}
    at = 0
    for batch in batches:
        for f, dtype in dtypes.items():
            values = map(attrgetter(f), batch)
            column = np.fromiter(map(interners[f].__getitem__, values) if f in texts else values, dtype=dtype,
                                 count=len(batch))
            if whole is not None:
                whole[f][at:at + len(batch)] = column
            else:
                parts[f].append(column)
        at += len(batch)
        done(at)
    out = whole or {f: np.concatenate(p) if p else np.empty(0, dtype=dtypes[f]) for f, p in parts.items()}
    return {f: interners[f].codes(c) if f in texts else c for f, c in out.items()}


def chunks(items: Iterable[Any], size: int) -> Iterator[list[Any]]:
    iterator = iter(items)
    while chunk := list(islice(iterator, size)):
        yield chunk


def array_columns(raw: msgspec.Raw, name: str, kind: type[msgspec.Struct], what: str,
                  progress: Progress | None) -> dict[str, Any]:
    """One event array's columns, from its raw slice of the input; `name` is where it is (for the error
    naming `$.name`), `what` what its events are, for progress (`reading 1,000 instructions: 40 %`)."""
    try:
        events = msgspec.json.decode(raw, type=list[msgspec.Raw])
    except msgspec.ValidationError as exc:
        raise msgspec.ValidationError(f"{exc} - at `$.{name}`") from None
    percent = Percent(progress, f"reading {len(events):,} {what}")
    percent(0, len(events))
    return columns(batches(events, kind), kind, len(events), lambda done: percent(done, len(events)))


def stream_columns(reader: Reader, name: str, kind: type[msgspec.Struct]) -> dict[str, Any]:
    """The columns of the event array at `reader` (inputs/json_stream.py), run by run; `name` is where it
    is, for the error when it is not an array."""
    found = value_type(reader)
    if found != "array":
        raise msgspec.ValidationError(f"Expected `array`, got `{found}` - at `$.{name}`")
    return columns(values(reader, array_decoder(kind)), kind)


def check_strings(where: str, *tables: dict[str, Any]) -> None:
    """Refuse an event text (engine, HLO name, tensor) past the string-length limit: each distinct text
    is kept once, so the check is over the distinct ones."""
    for table in tables:
        for field, column in table.items():
            names = getattr(column, "names", ())
            longest = max(map(len, names), default=0)
            if longest > MAX_STRING_CHARS:
                raise AdvisorError(where, f"an event's {field} of {longest:,} characters, over the string-length "
                                          f"limit of {MAX_STRING_CHARS:,} (no profile field is that long)")


class CountingReader:
    """A binary file that reports how far it has been read: progress for the streaming passes."""

    def __init__(self, handle: Any, on_read: Any) -> None:
        self.handle, self.on_read, self.position = handle, on_read, 0

    def read(self, size: int = -1) -> bytes:
        chunk = self.handle.read(size)
        self.position += len(chunk)
        self.on_read(self.position)
        return chunk
