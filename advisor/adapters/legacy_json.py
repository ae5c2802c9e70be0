"""Neuron's full JSON (`neuron-profile view --output-format json`): the summary plus every
instruction and DMA event, often hundreds of MB on one line.

Only the fields the analysis needs are decoded, with typed msgspec structs (reference:
libraries.md, ≈450 MB/s), into numpy columns; strings that repeat (engine rows, HLO names, NKI
source lines, tensor names) are stored once and referenced by code.
"""

from __future__ import annotations

import gc
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from advisor.errors import AdvisorError

NAME = "json"
SNIFF_BYTES = 1 << 20


class _Instruction(msgspec.Struct, gc=False):
    timestamp: float = -1
    duration: float = -1
    label: str = ""
    opcode: str = ""
    hlo_name: str = ""
    nki_source_location: str = ""
    evt_wait_time: float = 0


class _Dma(msgspec.Struct, gc=False):
    timestamp: float = -1
    duration: float = -1
    transfer_size: float = -1
    variable: str = ""
    queue_type: str = ""


class _Warning(msgspec.Struct):
    category: str = ""
    message: str = ""


class _Trace(msgspec.Struct):
    """The top level, with the event lists kept as raw slices of the input (zero-copy): they are
    decoded one event at a time straight into columns, so no list of millions of objects is ever
    alive at once (peak memory ≈ the file plus the columns)."""

    summary: list[dict[str, Any]] | dict[str, Any] = []
    metadata: list[dict[str, Any]] | dict[str, Any] = []
    warnings: list[_Warning] = []
    instruction: list[msgspec.Raw] = []
    dma: list[msgspec.Raw] = []


@dataclass(frozen=True)
class Codes:
    """A column of repeated strings as integer codes into `names`."""

    codes: Any  # numpy int32 array
    names: tuple[str, ...]


@dataclass(frozen=True)
class Trace:
    """Event columns (ns, bytes) plus what the file says about itself."""

    instr_start: Any
    instr_duration: Any
    instr_engine: Codes
    instr_hlo: Codes
    instr_nki: Codes
    instr_wait: Any
    dma_start: Any
    dma_duration: Any
    dma_size: Any
    dma_variable: Codes
    summary: dict[str, Any]
    metadata: dict[str, Any]
    warnings: tuple[str, ...]


def sniff(head: bytes) -> bool:
    """A JSON object with event lists: the first MiB names "instruction" or "dma" as a member."""
    start = head.lstrip()[:1]
    return start == b"{" and (b'"instruction"' in head[:SNIFF_BYTES] or b'"dma"' in head[:SNIFF_BYTES])


class _Interner:
    """Repeated strings (engine rows, HLO names, NKI lines, tensor names) as integer codes."""

    def __init__(self) -> None:
        self.index: dict[str, int] = {}

    def code(self, value: str) -> int:
        return self.index.setdefault(value, len(self.index))

    def codes(self, column: Any) -> Codes:
        return Codes(codes=column, names=tuple(self.index))


def _first(member: list[dict[str, Any]] | dict[str, Any]) -> dict[str, Any]:
    if isinstance(member, dict):
        return member
    return member[0] if member and isinstance(member[0], dict) else {}


BATCH = 8192  # events decoded together: the C decoder does the loop, memory stays one batch wide


def _batches(raws: list[msgspec.Raw], kind: type) -> Iterable[list[Any]]:
    decoder = msgspec.json.Decoder(list[kind])
    for i in range(0, len(raws), BATCH):
        yield decoder.decode(b"[" + b",".join(bytes(r) for r in raws[i:i + BATCH]) + b"]")


def _columns(raws: list[msgspec.Raw], kind: type, numbers: tuple[str, ...], texts: tuple[str, ...]) -> dict[str, Any]:
    """Numeric fields as float64 columns, text fields as integer codes, batch by batch."""
    import numpy as np

    n = len(raws)
    out: dict[str, Any] = {f: np.empty(n) for f in numbers}
    codes = {f: np.empty(n, dtype=np.int32) for f in texts}
    interners = {f: _Interner() for f in texts}
    at = 0
    for batch in _batches(raws, kind):
        size = len(batch)
        for f in numbers:
            out[f][at:at + size] = np.fromiter((getattr(e, f) for e in batch), dtype=np.float64, count=size)
        for f in texts:
            code = interners[f].code
            codes[f][at:at + size] = np.fromiter((code(getattr(e, f)) for e in batch), dtype=np.int32, count=size)
        at += size
    out.update({f: interners[f].codes(codes[f]) for f in texts})
    return out


def _instructions(raws: list[msgspec.Raw]) -> dict[str, Any]:
    c = _columns(raws, _Instruction, ("timestamp", "duration", "evt_wait_time"),
                 ("label", "hlo_name", "nki_source_location"))
    return {"instr_start": c["timestamp"], "instr_duration": c["duration"], "instr_wait": c["evt_wait_time"],
            "instr_engine": c["label"], "instr_hlo": c["hlo_name"], "instr_nki": c["nki_source_location"]}


def _dmas(raws: list[msgspec.Raw]) -> dict[str, Any]:
    c = _columns(raws, _Dma, ("timestamp", "duration", "transfer_size"), ("variable",))
    return {"dma_start": c["timestamp"], "dma_duration": c["duration"], "dma_size": c["transfer_size"],
            "dma_variable": c["variable"]}


def decode(data: bytes, where: str) -> Trace:
    gc_was_enabled = gc.isenabled()
    gc.disable()  # millions of small objects: the collector would rescan them all (3-7× slower)
    try:
        trace = msgspec.json.decode(data, type=_Trace)
        columns = {**_instructions(trace.instruction), **_dmas(trace.dma)}
    except msgspec.ValidationError as exc:
        raise AdvisorError(where, f"not a Neuron full JSON trace: {exc}") from None
    except msgspec.DecodeError as exc:
        raise AdvisorError(where, f"invalid JSON: {exc}") from None
    finally:
        if gc_was_enabled:
            gc.enable()
    return Trace(**columns, summary=_first(trace.summary), metadata=_first(trace.metadata),
                 warnings=tuple(f"{w.category}: {w.message}".strip(": ") for w in trace.warnings))


def stream(path: Path) -> Trace:
    """A trace too large to hold in memory: streamed with ijson's C parser (yajl), one pass per
    event list, events appended to compact columns. Slower than `decode` (≈5×) but flat in memory:
    peak RSS is the columns, not the file."""
    import array

    import ijson
    import numpy as np

    where = str(path)

    def items(prefix: str):
        with path.open("rb") as handle:
            yield from ijson.items(handle, prefix, use_float=True)

    def first(prefix: str) -> dict[str, Any]:
        for item in items(prefix):
            return item if isinstance(item, dict) else {}
        return {}

    def columns(prefix: str, numbers: tuple[str, ...], texts: tuple[str, ...]) -> dict[str, Any]:
        values = {f: array.array("d") for f in numbers}
        codes = {f: array.array("i") for f in texts}
        interners = {f: _Interner() for f in texts}
        for event in items(prefix):
            if not isinstance(event, dict):
                raise AdvisorError(where, f"not a Neuron full JSON trace: {prefix} holds a non-object")
            for f in numbers:
                value = event.get(f, -1)
                values[f].append(float(value) if isinstance(value, (int, float)) and not isinstance(value, bool)
                                 else -1.0)
            for f in texts:
                value = event.get(f, "")
                codes[f].append(interners[f].code(value if isinstance(value, str) else ""))
        out: dict[str, Any] = {f: np.frombuffer(values[f], dtype=np.float64) for f in numbers}
        out.update({f: interners[f].codes(np.frombuffer(codes[f], dtype=np.int32)) for f in texts})
        return out

    try:
        warnings = tuple(f"{w.get('category', '')}: {w.get('message', '')}".strip(": ")
                         for w in items("warnings.item") if isinstance(w, dict))
        i = columns("instruction.item", ("timestamp", "duration", "evt_wait_time"),
                    ("label", "hlo_name", "nki_source_location"))
        d = columns("dma.item", ("timestamp", "duration", "transfer_size"), ("variable",))
        return Trace(instr_start=i["timestamp"], instr_duration=i["duration"], instr_wait=i["evt_wait_time"],
                     instr_engine=i["label"], instr_hlo=i["hlo_name"], instr_nki=i["nki_source_location"],
                     dma_start=d["timestamp"], dma_duration=d["duration"], dma_size=d["transfer_size"],
                     dma_variable=d["variable"], summary=first("summary.item") or first("summary"),
                     metadata=first("metadata.item"), warnings=warnings)
    except ijson.JSONError as exc:
        raise AdvisorError(where, f"invalid JSON: {str(exc).splitlines()[0][:120]}") from None
