"""Neuron's full JSON (`neuron-profile view --output-format json`): the summary plus every
instruction and DMA event, often hundreds of MB on one line.

Only the fields the analysis needs are decoded, with typed msgspec structs (reference:
libraries.md, ≈450 MB/s), into numpy columns; strings that repeat (engine rows, HLO names, NKI
source lines, tensor names) are stored once and referenced by code.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from functools import cache
from itertools import islice
from operator import attrgetter
from pathlib import Path
from typing import Any

import msgspec

from advisor.core.collector import collector_paused
from advisor.core.errors import AdvisorError
from advisor.core.events import EventTrace, Interner
from advisor.inputs.limits import MAX_STRING_CHARS, check_json_value, depth_refusal
from advisor.inputs.text import open_regular
from advisor.kinds.base import Progress
from advisor.kinds.neuron.adapters.columns import Percent, neuron_trace, tensor_decls
from advisor.kinds.neuron.tables import TensorDecl

NAME = "neuron-json-trace"
SNIFF_BYTES = 1 << 20


class _Instruction(msgspec.Struct, gc=False):
    timestamp: float = -1
    duration: float = -1
    label: str = ""
    hlo_name: str = ""
    nki_source_location: str = ""


class _Dma(msgspec.Struct, gc=False):
    timestamp: float = -1
    duration: float = -1
    transfer_size: float = -1
    variable: str = ""


EMPTY = msgspec.Raw(b"[]")


class _Trace(msgspec.Struct):
    """The top level, with each event list kept as one raw slice of the input (zero-copy). A list is
    then split into per-event slices and decoded one batch at a time straight into columns, one list
    after the other, so no list of millions of objects is ever alive (peak memory ≈ the file plus the
    columns plus one list's slices)."""

    summary: Any = []
    metadata: Any = []
    instruction: msgspec.Raw = EMPTY
    dma: msgspec.Raw = EMPTY
    # supplementary members: whatever shape they have, they never make the trace unreadable
    warnings: Any = []
    neff_node: Any = []  # the NEFF's tensors: {"variable_name": "input3", "size": "65536", "type": "IN", …}


def sniff(head: bytes) -> bool:
    """A JSON object with event lists: the first MiB names "instruction" or "dma" as a member."""
    start = head.lstrip()[:1]
    return start == b"{" and (b'"instruction"' in head[:SNIFF_BYTES] or b'"dma"' in head[:SNIFF_BYTES])


def _first(member: Any) -> dict[str, Any]:
    """`summary` and `metadata`: one object, or a list holding it; anything else holds nothing."""
    if isinstance(member, dict):
        return member
    return member[0] if isinstance(member, list) and member and isinstance(member[0], dict) else {}


def _objects(member: Any) -> list[dict[str, Any]]:
    return [item for item in member if isinstance(item, dict)] if isinstance(member, list) else []


def _warning(item: dict[str, Any]) -> tuple[str, str]:
    return str(item.get("category") or ""), str(item.get("message") or "")


BATCH = 8192  # events decoded together: the C decoder does the loop, memory stays one batch wide


@cache
def _defaults(kind: type) -> Any:
    return kind()


def _lenient(event: Any, kind: type) -> Any:
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


def _batches(raws: list[msgspec.Raw], kind: type) -> Iterator[list[Any]]:
    typed, untyped = msgspec.json.Decoder(list[kind]), msgspec.json.Decoder(list[Any])
    for i in range(0, len(raws), BATCH):
        text = b"[" + b",".join(raws[i:i + BATCH]) + b"]"  # Raw is a buffer: no copies
        try:
            yield typed.decode(text)
        except msgspec.ValidationError:  # rare: decode this batch field by field
            yield [_lenient(event, kind) for event in untyped.decode(text)]


def _columns(batches: Iterable[list[Any]], kind: type, count: int | None = None,
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
    columns = whole or {f: np.concatenate(p) if p else np.empty(0, dtype=dtypes[f]) for f, p in parts.items()}
    return {f: interners[f].codes(c) if f in texts else c for f, c in columns.items()}


def _chunks(items: Iterable[Any], size: int) -> Iterator[list[Any]]:
    iterator = iter(items)
    while chunk := list(islice(iterator, size)):
        yield chunk


def _trace(instr: dict[str, Any], dma: dict[str, Any], summary: dict[str, Any], metadata: dict[str, Any],
           warnings: Iterable[tuple[str, str]], tensors: tuple[TensorDecl, ...]) -> EventTrace:
    return neuron_trace(
        {"start": instr["timestamp"], "duration": instr["duration"], "engine": instr["label"],
         "hlo": instr["hlo_name"], "nki": instr["nki_source_location"]},
        {"start": dma["timestamp"], "duration": dma["duration"], "size": dma["transfer_size"],
         "variable": dma["variable"]}, summary, metadata,
        tuple(f"{category}: {message}".strip(": ") for category, message in warnings), tensors)


def _member(raw: msgspec.Raw, name: str, kind: type, what: str, progress: Progress | None) -> dict[str, Any]:
    """One event list's columns, from its raw slice."""
    try:
        events = msgspec.json.decode(raw, type=list[msgspec.Raw])
    except msgspec.ValidationError as exc:
        raise msgspec.ValidationError(f"{exc} - at `$.{name}`") from None
    percent = Percent(progress, f"reading {len(events):,} {what}")
    percent(0, len(events))
    return _columns(_batches(events, kind), kind, len(events), lambda done: percent(done, len(events)))


def decode(data: bytes, where: str, progress: Progress | None = None) -> EventTrace:
    try:
        with collector_paused():  # millions of small objects: the collector would rescan them all (3-7× slower)
            trace = msgspec.json.decode(data, type=_Trace)
            instr = _member(trace.instruction, "instruction", _Instruction, "instructions", progress)
            dma = _member(trace.dma, "dma", _Dma, "DMA transfers", progress)
    except msgspec.ValidationError as exc:
        raise AdvisorError(where, f"not a Neuron full JSON trace: {exc}") from None
    except msgspec.DecodeError as exc:
        raise AdvisorError(where, f"invalid JSON: {exc}") from None
    except RecursionError:  # msgspec's own depth guard, on a member decoded as Any
        raise AdvisorError(where, depth_refusal()) from None
    _check_strings(where, instr, dma)
    check_json_value([trace.summary, trace.metadata], where)  # decoded as Any: the depth and string limits
    return _trace(instr, dma, _first(trace.summary), _first(trace.metadata),
                  [_warning(w) for w in _objects(trace.warnings)], tensor_decls(_objects(trace.neff_node)))


def _check_strings(where: str, *columns: dict[str, Any]) -> None:
    """Refuse an event text (engine, HLO name, tensor) past the string-length limit: each distinct text
    is kept once, so the check is over the distinct ones."""
    for table in columns:
        for field, column in table.items():
            names = getattr(column, "names", ())
            longest = max(map(len, names), default=0)
            if longest > MAX_STRING_CHARS:
                raise AdvisorError(where, f"an event's {field} of {longest:,} characters, over the string-length "
                                          f"limit of {MAX_STRING_CHARS:,} (no profile field is that long)")


class _CountingReader:
    """A binary file that reports how far it has been read: progress for the streaming passes."""

    def __init__(self, handle: Any, on_read: Any) -> None:
        self.handle, self.on_read, self.position = handle, on_read, 0

    def read(self, size: int = -1) -> bytes:
        chunk = self.handle.read(size)
        self.position += len(chunk)
        self.on_read(self.position)
        return chunk


def stream(path: Path, progress: Progress | None = None) -> EventTrace:
    """A trace too large to hold in memory: streamed with ijson's C parser (yajl), one pass per
    member, events filled into the same compact columns batch by batch. Slower than `decode` but flat in
    memory: peak RSS is the columns, not the file."""
    import ijson

    where = str(path)
    size = path.stat().st_size
    passes = ("instruction", "dma", "neff_node", "warnings")  # whole-file passes; summary and metadata stop early

    def items(prefix: str):
        member = prefix.split(".")[0]
        shown = progress if member in passes else None
        percent = Percent(shown, f"streaming {size / 2**20:,.0f} MiB, pass {passes.index(member) + 1} of "
                                 f"{len(passes)} ({member})" if shown else "")
        with open_regular(path) as handle:
            yield from ijson.items(_CountingReader(handle, lambda at: percent(at, size)), prefix, use_float=True)

    def first(prefix: str) -> dict[str, Any]:
        for item in items(prefix):
            return item if isinstance(item, dict) else {}
        return {}

    def columns(prefix: str, kind: type) -> dict[str, Any]:
        return _columns(_chunks((_lenient(event, kind) for event in items(prefix)), BATCH), kind)

    try:
        instr = columns("instruction.item", _Instruction)
        dma = columns("dma.item", _Dma)
        _check_strings(where, instr, dma)
        tensors = tensor_decls(items("neff_node.item"))
        warnings = [_warning(w) for w in items("warnings.item") if isinstance(w, dict)]
        return _trace(instr, dma, first("summary.item") or first("summary"),
                      first("metadata.item") or first("metadata"), warnings, tensors)
    except ijson.JSONError as exc:
        raise AdvisorError(where, f"invalid JSON: {str(exc).splitlines()[0][:120]}") from None
