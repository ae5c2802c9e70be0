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


def load(path: Path, data: bytes) -> Trace:
    return decode(data, str(path))
