"""Neuron's full JSON (`neuron-profile view --output-format json`): the summary plus every
instruction and DMA event, often hundreds of MB on one line.

Only the fields the analysis needs are decoded, with typed msgspec structs (reference:
libraries.md, ≈450 MB/s), into numpy columns by the shared JSON-events reader (inputs/json_events.py);
strings that repeat (engine rows, HLO names, NKI source lines, tensor names) are stored once and
referenced by code. This module keeps Neuron's fields and how they map to the event tables.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import msgspec

from advisor.core.collector import collector_paused
from advisor.core.errors import AdvisorError
from advisor.core.events import EventTrace
from advisor.inputs.json_events import Percent, array_columns, check_strings, item_columns, stream_items
from advisor.inputs.limits import check_json_value, depth_refusal
from advisor.kinds.base import Progress
from advisor.kinds.neuron.adapters.columns import neuron_trace, tensor_decls
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


def _trace(instr: dict[str, Any], dma: dict[str, Any], summary: dict[str, Any], metadata: dict[str, Any],
           warnings: Iterable[tuple[str, str]], tensors: tuple[TensorDecl, ...]) -> EventTrace:
    return neuron_trace(
        {"start": instr["timestamp"], "duration": instr["duration"], "engine": instr["label"],
         "hlo": instr["hlo_name"], "nki": instr["nki_source_location"]},
        {"start": dma["timestamp"], "duration": dma["duration"], "size": dma["transfer_size"],
         "variable": dma["variable"]}, summary, metadata,
        tuple(f"{category}: {message}".strip(": ") for category, message in warnings), tensors)


def decode(data: bytes, where: str, progress: Progress | None = None) -> EventTrace:
    try:
        with collector_paused():  # millions of small objects: the collector would rescan them all (3-7× slower)
            trace = msgspec.json.decode(data, type=_Trace)
            instr = array_columns(trace.instruction, "instruction", _Instruction, "instructions", progress)
            dma = array_columns(trace.dma, "dma", _Dma, "DMA transfers", progress)
    except msgspec.ValidationError as exc:
        raise AdvisorError(where, f"not a Neuron full JSON trace: {exc}") from None
    except msgspec.DecodeError as exc:
        raise AdvisorError(where, f"invalid JSON: {exc}") from None
    except RecursionError:  # msgspec's own depth guard, on a member decoded as Any
        raise AdvisorError(where, depth_refusal()) from None
    check_strings(where, instr, dma)
    check_json_value([trace.summary, trace.metadata], where)  # decoded as Any: the depth and string limits
    return _trace(instr, dma, _first(trace.summary), _first(trace.metadata),
                  [_warning(w) for w in _objects(trace.warnings)], tensor_decls(_objects(trace.neff_node)))


def stream(path: Path, progress: Progress | None = None) -> EventTrace:
    """A trace too large to hold in memory: streamed with ijson's C parser (yajl), one pass per
    member, events filled into the same compact columns batch by batch (inputs/json_events.py). Slower
    than `decode` but flat in memory: peak RSS is the columns, not the file."""
    import ijson

    where = str(path)
    size = path.stat().st_size
    passes = ("instruction", "dma", "neff_node", "warnings")  # whole-file passes; summary and metadata stop early

    def items(prefix: str):
        member = prefix.split(".")[0]
        shown = progress if member in passes else None
        percent = Percent(shown, f"streaming {size / 2**20:,.0f} MiB, pass {passes.index(member) + 1} of "
                                 f"{len(passes)} ({member})" if shown else "")
        yield from stream_items(path, prefix, lambda at: percent(at, size))

    def first(prefix: str) -> dict[str, Any]:
        for item in items(prefix):
            return item if isinstance(item, dict) else {}
        return {}

    try:
        instr = item_columns(items("instruction.item"), _Instruction)
        dma = item_columns(items("dma.item"), _Dma)
        check_strings(where, instr, dma)
        tensors = tensor_decls(items("neff_node.item"))
        warnings = [_warning(w) for w in items("warnings.item") if isinstance(w, dict)]
        return _trace(instr, dma, first("summary.item") or first("summary"),
                      first("metadata.item") or first("metadata"), warnings, tensors)
    except ijson.JSONError as exc:
        raise AdvisorError(where, f"invalid JSON: {str(exc).splitlines()[0][:120]}") from None
