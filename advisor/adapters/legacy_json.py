"""Neuron's full JSON (`neuron-profile view --output-format json`): the summary plus every
instruction and DMA event, often hundreds of MB on one line.

Only the fields the analysis needs are decoded, with typed msgspec structs (reference:
libraries.md, ≈450 MB/s), into numpy columns; strings that repeat (engine rows, HLO names, NKI
source lines, tensor names) are stored once and referenced by code.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import msgspec

from advisor.adapters.trace import Interner, Percent, Progress, TensorDecl, Trace, tensor_decl
from advisor.errors import AdvisorError

NAME = "json"
SNIFF_BYTES = 1 << 20
INSTRUCTION_NUMBERS = ("timestamp", "duration")
INSTRUCTION_TEXTS = ("label", "hlo_name", "nki_source_location")
DMA_NUMBERS = ("timestamp", "duration", "transfer_size")
DMA_TEXTS = ("variable",)


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


class _Warning(msgspec.Struct):
    category: str = ""
    message: str = ""


class _NeffNode(msgspec.Struct):
    """A tensor of the NEFF: `{"variable_name": "input3", "size": "65536", "type": "IN", …}` (size as a string)."""

    variable_name: Any = None
    type: Any = None
    size: Any = None


class _Trace(msgspec.Struct):
    """The top level, with the event lists kept as raw slices of the input (zero-copy): they are
    decoded one batch at a time straight into columns, so no list of millions of objects is ever
    alive at once (peak memory ≈ the file plus the columns)."""

    summary: list[dict[str, Any]] | dict[str, Any] = []
    metadata: list[dict[str, Any]] | dict[str, Any] = []
    warnings: list[_Warning] = []
    instruction: list[msgspec.Raw] = []
    dma: list[msgspec.Raw] = []
    neff_node: list[_NeffNode] = []


def sniff(head: bytes) -> bool:
    """A JSON object with event lists: the first MiB names "instruction" or "dma" as a member."""
    start = head.lstrip()[:1]
    return start == b"{" and (b'"instruction"' in head[:SNIFF_BYTES] or b'"dma"' in head[:SNIFF_BYTES])


def _first(member: list[dict[str, Any]] | dict[str, Any]) -> dict[str, Any]:
    if isinstance(member, dict):
        return member
    return member[0] if member and isinstance(member[0], dict) else {}


def _tensors(nodes: Iterable[dict[str, Any]]) -> tuple[TensorDecl, ...]:
    decls = (tensor_decl(n.get("variable_name"), n.get("type"), n.get("size")) for n in nodes)
    return tuple(d for d in decls if d is not None)


BATCH = 8192  # events decoded together: the C decoder does the loop, memory stays one batch wide


def _batches(raws: list[msgspec.Raw], kind: type) -> Iterator[list[Any]]:
    decoder = msgspec.json.Decoder(list[kind])
    for i in range(0, len(raws), BATCH):
        yield decoder.decode(b"[" + b",".join(bytes(r) for r in raws[i:i + BATCH]) + b"]")


def _columns(raws: list[msgspec.Raw], kind: type, numbers: tuple[str, ...], texts: tuple[str, ...],
             done: Callable[[int], None]) -> dict[str, Any]:
    """Numeric fields as float64 columns, text fields as integer codes, batch by batch."""
    import numpy as np

    n = len(raws)
    out: dict[str, Any] = {f: np.empty(n) for f in numbers}
    codes = {f: np.empty(n, dtype=np.int32) for f in texts}
    interners = {f: Interner() for f in texts}
    at = 0
    for batch in _batches(raws, kind):
        size = len(batch)
        for f in numbers:
            out[f][at:at + size] = np.fromiter((getattr(e, f) for e in batch), dtype=np.float64, count=size)
        for f in texts:
            code = interners[f].code
            codes[f][at:at + size] = np.fromiter((code(getattr(e, f)) for e in batch), dtype=np.int32, count=size)
        at += size
        done(at)
    out.update({f: interners[f].codes(codes[f]) for f in texts})
    return out


def _trace(instr: dict[str, Any], dma: dict[str, Any], summary: dict[str, Any], metadata: dict[str, Any],
           warnings: Iterable[tuple[str, str]], tensors: tuple[TensorDecl, ...]) -> Trace:
    return Trace(
        instr_start=instr["timestamp"], instr_duration=instr["duration"], instr_engine=instr["label"],
        instr_hlo=instr["hlo_name"], instr_nki=instr["nki_source_location"], dma_start=dma["timestamp"],
        dma_duration=dma["duration"], dma_size=dma["transfer_size"], dma_variable=dma["variable"],
        summary=summary, metadata=metadata, tensors=tensors,
        warnings=tuple(f"{category}: {message}".strip(": ") for category, message in warnings))


def decode(data: bytes, where: str, progress: Progress | None = None) -> Trace:
    gc_was_enabled = gc.isenabled()
    gc.disable()  # millions of small objects: the collector would rescan them all (3-7× slower)
    try:
        trace = msgspec.json.decode(data, type=_Trace)
        total = len(trace.instruction) + len(trace.dma)
        percent = Percent(progress, f"reading {total:,} events")
        percent(0, total)
        instr = _columns(trace.instruction, _Instruction, INSTRUCTION_NUMBERS, INSTRUCTION_TEXTS,
                         lambda done: percent(done, total))
        dma = _columns(trace.dma, _Dma, DMA_NUMBERS, DMA_TEXTS,
                       lambda done: percent(len(trace.instruction) + done, total))
    except msgspec.ValidationError as exc:
        raise AdvisorError(where, f"not a Neuron full JSON trace: {exc}") from None
    except msgspec.DecodeError as exc:
        raise AdvisorError(where, f"invalid JSON: {exc}") from None
    finally:
        if gc_was_enabled:
            gc.enable()
    return _trace(instr, dma, _first(trace.summary), _first(trace.metadata),
                  ((w.category, w.message) for w in trace.warnings),
                  _tensors({"variable_name": n.variable_name, "type": n.type, "size": n.size} for n in trace.neff_node))


class _CountingReader:
    """A binary file that reports how far it has been read: progress for the streaming passes."""

    def __init__(self, handle: Any, on_read: Any) -> None:
        self.handle, self.on_read, self.position = handle, on_read, 0

    def read(self, size: int = -1) -> bytes:
        chunk = self.handle.read(size)
        self.position += len(chunk)
        self.on_read(self.position)
        return chunk


def stream(path: Path, progress: Progress | None = None) -> Trace:
    """A trace too large to hold in memory: streamed with ijson's C parser (yajl), one pass per
    member, events appended to compact columns. Slower than `decode` (≈5×) but flat in memory:
    peak RSS is the columns, not the file."""
    import array

    import ijson
    import numpy as np

    where = str(path)
    size = path.stat().st_size
    passes = ("instruction", "dma", "neff_node", "warnings", "summary", "metadata")

    def items(prefix: str):
        member = prefix.split(".")[0]
        percent = Percent(progress, f"streaming {size / 2**20:,.0f} MiB, pass {passes.index(member) + 1} "
                                    f"of {len(passes)} ({member})")
        with path.open("rb") as handle:
            yield from ijson.items(_CountingReader(handle, lambda at: percent(at, size)), prefix, use_float=True)

    def first(prefix: str) -> dict[str, Any]:
        for item in items(prefix):
            return item if isinstance(item, dict) else {}
        return {}

    def columns(prefix: str, numbers: tuple[str, ...], texts: tuple[str, ...]) -> dict[str, Any]:
        values = {f: array.array("d") for f in numbers}
        codes = {f: array.array("i") for f in texts}
        interners = {f: Interner() for f in texts}
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
        instr = columns("instruction.item", INSTRUCTION_NUMBERS, INSTRUCTION_TEXTS)
        dma = columns("dma.item", DMA_NUMBERS, DMA_TEXTS)
        tensors = _tensors(node for node in items("neff_node.item") if isinstance(node, dict))
        warnings = [(w.get("category", ""), w.get("message", "")) for w in items("warnings.item")
                    if isinstance(w, dict)]
        return _trace(instr, dma, first("summary.item") or first("summary"), first("metadata.item"),
                      warnings, tensors)
    except ijson.JSONError as exc:
        raise AdvisorError(where, f"invalid JSON: {str(exc).splitlines()[0][:120]}") from None
