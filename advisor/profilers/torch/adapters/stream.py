"""A Kineto trace read in one forward pass, whatever its size: the top-level object member by member
(inputs/json_stream.py), the event list in runs of whole events split into per-event slices and decoded a batch at
a time into numpy columns (reader.py), the small members (deviceProperties, distributedInfo, …) parsed whole and
checked, every other member checked and skipped unread.

One way in, so a trace reads the same at any --max-memory: memory is the columns plus one run (a window of 8 MiB,
grown only for an element longer than it), whatever the file's size. What is bounded, each refusal naming its
limit and how to raise it:
- a gzip trace inflates to at most --max-memory (counted as it inflates, like the RBLN reader);
- the columns may take inputs.limits.column_limit (a quarter of --max-memory: the analysis peaks at about three
  times its columns);
- one JSON value may be inputs.limits.member_limit (a sixteenth of --max-memory), a member read whole too;
- nesting: skipped values up to msgspec's recursion guard, values kept (the members read whole) 64 levels.
A top-level key written twice is refused: which copy would count is a guess the profiler never asks for.

NaN and ±Infinity as bare words and lone surrogate escapes, which Python's json.dump writes, cost the value, not
the trace (inputs/json_lenient.py).
"""

from __future__ import annotations

import gzip
import zlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from advisor.core.errors import AdvisorError
from advisor.core.units import bytes_
from advisor.inputs.json_events import CountingReader, Percent, check_strings
from advisor.inputs.json_lenient import lenient
from advisor.inputs.json_stream import Reader, members, value_type, values, whole
from advisor.inputs.limits import RAISE, check_json_value, column_limit, inflated_limit, member_limit
from advisor.inputs.text import open_regular
from advisor.kinds.base import Progress
from advisor.profilers.torch.adapters import sniff
from advisor.profilers.torch.adapters.reader import Collected, decoded

if TYPE_CHECKING:
    from _typeshed import SupportsRead

_RAWS = lenient(msgspec.json.Decoder(list[msgspec.Raw]).decode)  # a run of events, split into per-event slices
_SKIPPED = lenient(msgspec.json.Decoder(msgspec.Raw).decode)  # a member checked and dropped
_WHOLE = lenient(msgspec.json.decode)


class _Inflated:
    """A gzip stream's inflated bytes, refused once more than `limit` have come (a few MiB of gzip can inflate
    to terabytes of spaces)."""

    def __init__(self, source: SupportsRead[bytes], limit: int, where: str) -> None:
        # typeshed's GzipFile wants seek() too, which reading forward never calls
        inflated = gzip.GzipFile(fileobj=source, mode="rb")  # type: ignore[call-overload]
        self.file, self.limit, self.where, self.size = inflated, limit, where, 0

    def read(self, size: int = -1) -> bytes:
        chunk = self.file.read(size)
        self.size += len(chunk)
        if self.size > self.limit:
            raise AdvisorError(self.where, f"the gzip trace inflates to more than {bytes_(self.limit)}, the most "
                                           f"read of one trace (set by --max-memory; {RAISE})")
        return chunk


class _Budget:
    """The columns' bytes checked against their share of --max-memory after every run."""

    def __init__(self, max_memory: int, where: str) -> None:
        self.limit, self.where = column_limit(max_memory), where

    def check(self, found: Collected) -> None:
        held = found.column_bytes()
        if held > self.limit:
            events = sum(cols.count for cols in found.tables.values())
            raise AdvisorError(self.where, f"the trace's events need more memory than --max-memory allows: the "
                                           f"{events:,} events read so far hold {bytes_(held)} of columns, over the "
                                           f"{bytes_(self.limit)} they may take (a quarter of --max-memory: the "
                                           f"analysis peaks at about three times its columns); {RAISE}")


def read(path: Path, gz: bool, max_memory: int, progress: Progress | None = None) -> tuple[Collected, dict[str, Any]]:
    """The trace's events in columns and its small top-level members, in one pass over the file."""
    where = str(path)
    size = path.stat().st_size
    percent = Percent(progress, f"reading {bytes_(size)}")
    limit = member_limit(max_memory)
    with open_regular(path) as handle:  # inside it, an OSError names the file; a gzip one is said as what it is
        counting = CountingReader(handle, lambda at: percent(at, size))
        source = _Inflated(counting, inflated_limit(max_memory), where) if gz else counting
        try:
            return _walk(Reader(source, limit), where, limit, _Budget(max_memory, where))
        except msgspec.ValidationError as exc:
            raise AdvisorError(where, f"not a Kineto trace: {exc}") from None
        except msgspec.DecodeError as exc:
            raise AdvisorError(where, f"invalid JSON: {exc}") from None
        except EOFError:
            raise AdvisorError(where, "truncated gzip file: the compressed data ends before its end marker") from None
        except (gzip.BadGzipFile, zlib.error) as exc:
            raise AdvisorError(where, f"not a readable gzip file: {exc}") from None


def _walk(reader: Reader, where: str, limit: int, budget: _Budget) -> tuple[Collected, dict[str, Any]]:
    first = reader.peek()
    if first is None:
        raise AdvisorError(where, "the gzip file holds no text" if isinstance(reader.handle, _Inflated)
                           else "file is empty")
    if first != ord("{"):
        raise AdvisorError(where, "not a Kineto trace: the JSON is not an object")
    found, kept, seen = Collected.empty(), {}, set()
    for key in members(reader):
        if key in seen:
            raise AdvisorError(where, f"the top-level member {key!r} is written twice (the second at byte "
                                      f"{reader.base + reader.pos:,}): a trace has each member once, and which one "
                                      "counts would be a guess")
        seen.add(key)
        if key == sniff.EVENTS:
            if value_type(reader) != "array":
                raise AdvisorError(where, "not a Kineto trace: traceEvents is not a list of events")
            for raws in values(reader, _RAWS):
                for batch in decoded(raws, lambda _: None):
                    found.add(batch)
                budget.check(found)
        elif key in sniff.META_KEYS:
            kept[key] = whole(reader, limit, key, _WHOLE)
        else:
            for _ in values(reader, _SKIPPED):  # checked, not kept
                pass
    if sniff.EVENTS not in seen:
        raise AdvisorError(where, "not a Kineto trace: no traceEvents member")
    check_json_value(list(kept.values()), where)  # decoded whole: the depth and string limits
    check_strings(where, *({n: _Names(cols.names(n)) for n in cols.interners} for cols in found.tables.values()))
    return found, kept


class _Names:
    """What check_strings looks at: a column's distinct texts."""

    def __init__(self, names: tuple[str, ...]) -> None:
        self.names = names
