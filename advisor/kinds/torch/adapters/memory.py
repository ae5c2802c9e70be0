"""The two ways a trace's events are read: decoded in memory (the file's bytes held once, the event list split
into per-event slices and decoded a batch at a time), or streamed with ijson's C parser when the file is larger
than half of --max-memory (flat in memory: the columns and one batch). Both give the same columns and the same
top-level members (deviceProperties, distributedInfo, …)."""

from __future__ import annotations

import gzip
import zlib
from pathlib import Path
from typing import Any

import msgspec

from advisor.core.errors import AdvisorError
from advisor.inputs.json_events import BATCH, CountingReader, Percent, check_strings, chunks
from advisor.inputs.text import open_regular
from advisor.kinds.base import Progress
from advisor.kinds.torch.adapters import sniff
from advisor.kinds.torch.adapters.reader import Collected, collect, convert_items, decoded

EDGE_BYTES = 1 << 20  # the streamed file's first and last bytes kept for its top-level members


class _Top(msgspec.Struct):
    """The top level: the event list as one raw slice of the input (zero-copy), the small members as parsed
    values, UNSET when absent; every other member is skipped unread."""

    traceEvents: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET
    schemaVersion: Any = msgspec.UNSET
    deviceProperties: Any = msgspec.UNSET
    distributedInfo: Any = msgspec.UNSET
    traceName: Any = msgspec.UNSET
    baseTimeNanoseconds: Any = msgspec.UNSET
    displayTimeUnit: Any = msgspec.UNSET


def _check(found: Collected, where: str) -> Collected:
    check_strings(where, *({n: _Names(cols.names(n)) for n in cols.interners} for cols in found.tables.values()))
    return found


class _Names:
    """What check_strings looks at: a column's distinct texts."""

    def __init__(self, names: tuple[str, ...]) -> None:
        self.names = names


def decode(data: bytes | bytearray, where: str, progress: Progress | None = None) -> tuple[Collected, dict[str, Any]]:
    try:
        top = msgspec.json.decode(data, type=_Top)
    except msgspec.ValidationError as exc:
        raise AdvisorError(where, f"not a Kineto trace: {exc}") from None
    except msgspec.DecodeError as exc:
        raise AdvisorError(where, f"invalid JSON: {exc}") from None
    if top.traceEvents is msgspec.UNSET:
        raise AdvisorError(where, "not a Kineto trace: no traceEvents member")
    try:
        raws = msgspec.json.decode(top.traceEvents, type=list[msgspec.Raw])
    except msgspec.ValidationError:
        raise AdvisorError(where, "not a Kineto trace: traceEvents is not a list of events") from None
    percent = Percent(progress, f"reading {len(raws):,} events")
    percent(0, len(raws))
    found = collect(decoded(raws, lambda done: percent(done, len(raws))))
    members = {key: value for key in sniff.META_KEYS if (value := getattr(top, key)) is not msgspec.UNSET}
    return _check(found, where), members


class _Edges:
    """A binary stream that keeps its first and last EDGE_BYTES as they are read."""

    def __init__(self, source: Any) -> None:
        self.source, self.head, self.tail = source, bytearray(), bytearray()

    def read(self, size: int = -1) -> bytes:
        chunk = self.source.read(size)
        if len(self.head) < EDGE_BYTES:
            self.head += chunk[:EDGE_BYTES - len(self.head)]
        self.tail += chunk
        if len(self.tail) > 2 * EDGE_BYTES:
            del self.tail[:-EDGE_BYTES]
        return chunk


def _text(data: bytearray) -> str:
    return bytes(data).decode("utf-8", "replace")


def stream(path: Path, gz: bool, progress: Progress | None = None) -> tuple[Collected, dict[str, Any]]:
    """One pass over the file: the events into columns, its first and last bytes kept for the members written
    before the event list (Kineto: schemaVersion, deviceProperties, distributedInfo) and after it (traceName,
    baseTimeNanoseconds)."""
    import ijson

    where = str(path)
    size = path.stat().st_size
    percent = Percent(progress, f"streaming {size / 2**20:,.0f} MiB")
    try:
        with open_regular(path) as handle:
            counting = CountingReader(handle, lambda at: percent(at, size))
            edges = _Edges(gzip.GzipFile(fileobj=counting, mode="rb") if gz else counting)
            items = ijson.items(edges, "traceEvents.item", use_float=True)
            found = collect(chunks(convert_items(items), BATCH))
            while edges.read(1 << 20):  # to the end: the members after the event list
                pass
    except ijson.JSONError as exc:
        raise AdvisorError(where, f"invalid JSON: {str(exc).splitlines()[0][:120]}") from None
    except EOFError:
        raise AdvisorError(where, "truncated gzip file: the compressed data ends before its end marker") from None
    except (gzip.BadGzipFile, zlib.error) as exc:
        raise AdvisorError(where, f"not a readable gzip file: {exc}") from None
    head, tail = _text(edges.head), _text(edges.tail)
    if not head.lstrip().startswith("{"):
        raise AdvisorError(where, "not a Kineto trace: the JSON is not an object")
    total = sum(cols.count for cols in found.tables.values()) + found.malformed + sum(found.other.values())
    if not total and not any(sniff.EVENTS_LIST.search(text) for text in (head, tail)):
        if any(sniff.EVENTS_KEY.search(text) for text in (head, tail)):
            raise AdvisorError(where, "not a Kineto trace: traceEvents is not a list of events")
        raise AdvisorError(where, "not a Kineto trace: no traceEvents member")
    members = sniff.trailing_members(tail)
    leading = sniff.leading_members(head)  # a member before the events is read whole from the head
    members.update({key: leading[key] for key in sniff.META_KEYS if key in leading})
    return _check(found, where), members
