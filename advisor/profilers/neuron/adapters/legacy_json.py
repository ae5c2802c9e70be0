"""Neuron's full JSON (`neuron-profile view --output-format json`): the summary plus every
instruction and DMA event, often hundreds of MB on one line.

Only the fields the analysis needs are decoded, with typed msgspec structs (reference:
libraries.md, ≈450 MB/s), into numpy columns by the shared JSON-events reader (inputs/json_events.py);
strings that repeat (engine rows, HLO names, NKI source lines, tensor names) are stored once and
referenced by code. This module keeps Neuron's fields and how they map to the event tables.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import msgspec

from advisor.core.collector import collector_paused
from advisor.core.errors import AdvisorError
from advisor.core.events import EventTrace
from advisor.inputs.json_events import Percent, array_columns, check_strings, columns, stream_columns
from advisor.inputs.json_stream import Reader, members, skip, whole
from advisor.inputs.limits import check_json_value, depth_refusal, member_limit
from advisor.inputs.text import open_regular
from advisor.kinds.base import Progress
from advisor.profilers.neuron.adapters.columns import neuron_trace, tensor_decls
from advisor.profilers.neuron.adapters.repeated_keys import RepeatTracker, repeat_problem
from advisor.profilers.neuron.tables import TensorDecl

NAME = "neuron-json-trace"
SNIFF_BYTES = 1 << 20
WHOLE = ("summary", "metadata", "warnings", "neff_node")  # the members read whole (the events are streamed)


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

    summary: msgspec.Raw = EMPTY  # the members read whole: decoded by `_member`, which refuses a key given twice
    metadata: msgspec.Raw = EMPTY
    instruction: msgspec.Raw = EMPTY
    dma: msgspec.Raw = EMPTY
    # supplementary members: whatever shape they have, they never make the trace unreadable
    warnings: msgspec.Raw = EMPTY
    neff_node: msgspec.Raw = EMPTY  # the NEFF's tensors: {"variable_name": "input3", "size": "65536", …}


class _KeyTwice(Exception):
    """A key given twice in a member read whole: said as the summary reader says it, naming the member."""


def _member(name: str) -> Callable[[bytes], Any]:
    """How member `name` (`summary`, `metadata`, …) is decoded: as msgspec decodes it, and a key given twice in one
    of its objects refused (msgspec and json keep the last: `total_time` twice was analysed with the second), by a
    second reading with json's pairs hook, cheap on these small members."""

    def decode(data: bytes) -> Any:
        value = msgspec.json.decode(data)
        repeats = RepeatTracker()
        try:
            seen = json.loads(bytes(data), object_pairs_hook=repeats)
        except (ValueError, RecursionError):  # msgspec read it: json's view is only for the check
            return value
        problem = repeat_problem({name: seen}) if repeats.found else None
        if problem:
            raise _KeyTwice(problem)
        return value

    return decode


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
            whole_members = [_member(name)(getattr(trace, name)) for name in WHOLE]
    except _KeyTwice as exc:
        raise AdvisorError(where, str(exc)) from None
    except msgspec.ValidationError as exc:
        raise AdvisorError(where, f"not a Neuron full JSON trace: {exc}") from None
    except msgspec.DecodeError as exc:
        raise AdvisorError(where, f"invalid JSON: {exc}") from None
    except RecursionError:  # msgspec's own depth guard, on a member decoded as Any
        raise AdvisorError(where, depth_refusal(None)) from None
    return _checked(where, instr, dma, *whole_members)


def _checked(where: str, instr: dict[str, Any], dma: dict[str, Any], summary: Any, metadata: Any, warnings: Any,
             neff_node: Any) -> EventTrace:
    """The trace from its members, as either path read them: the same checks, the same tables."""
    check_strings(where, instr, dma)
    check_json_value([summary, metadata], where)  # decoded as Any: the depth and string limits
    return _trace(instr, dma, _first(summary), _first(metadata), [_warning(w) for w in _objects(warnings)],
                  tensor_decls(_objects(neff_node)))


def stream(path: Path, max_memory: int, progress: Progress | None = None) -> EventTrace:
    """A trace too large to hold in memory, read forward once (inputs/json_stream.py): each event array
    in runs of whole events decoded by msgspec into the same columns as `decode`, the small members
    whole, the others checked and dropped. Flat in memory: the columns, the small members and one run
    (a run is 8 MiB; a member read whole may be a sixteenth of `max_memory`)."""
    where = str(path)
    size = path.stat().st_size
    percent = Percent(progress, f"streaming {size / 2**20:,.0f} MiB")
    read: dict[str, Any] = {"instruction": _no_events(_Instruction), "dma": _no_events(_Dma)}
    events: dict[str, type[msgspec.Struct]] = {"instruction": _Instruction, "dma": _Dma}
    limit = member_limit(max_memory)
    try:
        with open_regular(path) as handle, collector_paused():
            reader = Reader(handle, limit, lambda at: percent(at, size))
            for key in members(reader):
                if key in events:  # a member twice: the last one counts, as msgspec decodes it
                    read[key] = stream_columns(reader, key, events[key])
                elif key in WHOLE:
                    read[key] = whole(reader, limit, key, _member(key))
                else:
                    skip(reader)
    except _KeyTwice as exc:
        raise AdvisorError(where, str(exc)) from None
    except msgspec.ValidationError as exc:
        raise AdvisorError(where, f"not a Neuron full JSON trace: {exc}") from None
    except msgspec.DecodeError as exc:
        raise AdvisorError(where, f"invalid JSON: {exc}") from None
    except RecursionError:
        raise AdvisorError(where, depth_refusal(None)) from None
    return _checked(where, read["instruction"], read["dma"], *(read.get(k, []) for k in WHOLE))


def _no_events(kind: type) -> dict[str, Any]:
    return columns([], kind, 0)
