"""A JSON file too large to hold, read forward in one pass at C speed: its top-level object member by
member, each container value (array or object) as runs of whole elements decoded by msgspec.

There is no Python step per token. The file is read a block (BLOCK) at a time into a window; a run is
cut at the last likely element boundary in the window (`},{`, found by `bytes.rfind`; or the array's end,
the first `}]`) and decoded by msgspec wrapped in brackets, with the caller's type (`list[Event]` straight
into structs). A cut inside
a string or a nested value cannot decode (the brackets do not balance, or a string is left open; msgspec
refuses trailing bytes), and one that decodes is a true boundary, since parsing from the run's start is
deterministic. When the guess fails (the container's last run, pretty-printed JSON, a `},{` inside a
string), `boundaries` finds the exact ones with numpy: quotes not escaped, the string spans they make,
and the depth of the brackets outside them. Every byte is still checked by msgspec, so malformed JSON is
refused as the in-memory decode refuses it, with the file offset.

Memory: the window (a block, grown only for an element longer than it, up to `limit`), plus one run's
copy and its decoded values.
"""

from __future__ import annotations

import collections
import re
from collections.abc import Callable, Iterator
from functools import cache
from typing import Any, Protocol, TypeVar

import msgspec

BLOCK = 8 << 20  # bytes read at a time; a run decodes ~25,000 events of a Neuron trace
T = TypeVar("T")
_SPACES = re.compile(rb"[ \t\r\n]*")
_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_TOKEN = re.compile(rb"[^\s,\]}]+")  # a number, true, false or null
_SPACED_CUT = re.compile(rb"\}\s*,\s*\{")  # an element boundary in pretty-printed JSON
_BYTE = re.compile(r" \(byte (\d+)\)$")
_TAIL = 1 << 20  # where the pretty-printed boundary is looked for: the window's last MiB
SCAN_FIRST = 1 << 16  # bytes an exact scan looks at first
CLOSE = {ord("["): b"]", ord("{"): b"}"}
TYPE = {ord("{"): "object", ord("["): "array", ord('"'): "str", ord("t"): "bool", ord("f"): "bool", ord("n"): "null"}


class Readable(Protocol):
    """What the reader reads from: a file, or a stream that counts or inflates one (only `read` is called)."""

    def read(self, size: int = -1, /) -> bytes: ...


class Reader:
    """The file read forward: `data[pos:]` is the window not yet consumed, `base` the file offset of
    `data[0]`; `on_read(bytes read so far)` as blocks come in. Refuses to hold more than `limit` bytes
    (an element that long is not a profile's)."""

    def __init__(self, handle: Readable, limit: int, on_read: Callable[[int], None] = lambda _: None) -> None:
        self.handle, self.limit, self.on_read = handle, max(limit, 2 * BLOCK), on_read
        self.data, self.pos, self.base, self.eof = b"", 0, 0, False

    def fill(self, want: int = 0) -> bool:
        """At least `want` (default BLOCK) unconsumed bytes in the window, or all that is left; False when
        nothing came."""
        want = want or BLOCK
        if len(self.data) - self.pos >= want or self.eof:
            return False
        if want > self.limit:
            raise msgspec.DecodeError(f"a JSON value longer than {self.limit / 2**20:,.0f} MiB at byte "
                                      f"{self.base + self.pos}, the most held at once (set by --max-memory; "
                                      "raise it with --max-memory SIZE)")
        self.base += self.pos
        chunk = self.handle.read(max(want - (len(self.data) - self.pos), BLOCK))
        self.data, self.pos = self.data[self.pos:] + chunk, 0
        self.eof = not chunk
        self.on_read(self.base + len(self.data))
        return bool(chunk)

    def peek(self) -> int | None:
        """The next byte that is not whitespace (consumed up to it), None at the end of the file."""
        while True:
            data = self.data
            spaces = _SPACES.match(data, self.pos)  # at C speed: a file may hold gigabytes of whitespace
            pos = self.pos = spaces.end() if spaces else self.pos
            if pos < len(data):
                return data[pos]
            if not self.fill(1):
                return None

    def expect(self, allowed: bytes) -> int:
        """Consume the next non-whitespace byte, one of `allowed`."""
        got = self.peek()
        if got is None:
            raise msgspec.DecodeError("Input data was truncated")
        if got not in allowed:
            raise msgspec.DecodeError(f"JSON is malformed: invalid character (byte {self.base + self.pos})")
        self.pos += 1
        return got

    def match(self, pattern: re.Pattern[bytes]) -> bytes:
        """The token at `pos` (a string, a number), the window grown until it ends."""
        while True:
            found = pattern.match(self.data, self.pos)
            if found and (found.end() < len(self.data) or self.eof):
                self.pos = found.end()
                return found.group()
            if not self.fill(2 * (len(self.data) - self.pos) or BLOCK) and self.eof:
                raise msgspec.DecodeError("Input data was truncated")

    def error(self, exc: msgspec.DecodeError, start: int) -> msgspec.DecodeError:
        """msgspec's error for a run wrapped in one bracket at window offset `start`, at the file's offset."""
        text = str(exc)
        if type(exc) is not msgspec.DecodeError:
            return exc  # a ValidationError names its place in the value
        found = _BYTE.search(text)
        if found:
            text = text[:found.start()] + f" (byte {self.base + start + int(found.group(1)) - 1})"
        return msgspec.DecodeError(text)


def members(reader: Reader) -> Iterator[str]:
    """The keys of the top-level object in file order, the reader at each one's value: the caller
    consumes the value (`values` or `skip`) before asking for the next key. Trailing bytes after the
    object are refused, as msgspec refuses them."""
    reader.expect(b"{")
    if reader.peek() == ord("}"):
        reader.pos += 1
    else:
        while True:
            if reader.peek() != ord('"'):
                reader.expect(b'"')
            key = msgspec.json.decode(reader.match(_STRING))
            reader.expect(b":")
            reader.peek()
            yield key
            if reader.expect(b",}") == ord("}"):
                break
    if reader.peek() is not None:
        at = reader.base + reader.pos + 1  # as msgspec counts it: past the first trailing byte
        raise msgspec.DecodeError(f"JSON is malformed: trailing characters (byte {at})")


def value_type(reader: Reader) -> str:
    """The JSON type of the value at the reader, in msgspec's words (`array`, `object`, `int`, …)."""
    first = reader.peek()
    if first is None:
        raise msgspec.DecodeError("Input data was truncated")
    return TYPE.get(first, "number")


def values(reader: Reader, decode: Callable[[bytes], T], scalar: Callable[[bytes], T] | None = None) -> Iterator[T]:
    """The value at the reader decoded: a container as runs of whole elements (members), each handed to
    `decode` wrapped in its brackets (`[e1,e2]`, `{"k":v}`); any other value whole, to `scalar`."""
    first = reader.peek()
    if first is None:
        raise msgspec.DecodeError("Input data was truncated")
    if first not in CLOSE:
        if first not in TYPE and first not in b"-0123456789":
            raise msgspec.DecodeError(f"JSON is malformed: invalid character (byte {reader.base + reader.pos})")
        token = reader.match(_STRING if first == ord('"') else _TOKEN)
        yield (scalar or decode)(token)
        return
    open_, close = bytes((first,)), CLOSE[first]
    reader.pos += 1
    after_comma = False
    while True:
        reader.fill()
        if reader.peek() == close[0]:
            if after_comma:  # `[1,]`
                raise msgspec.DecodeError(f"JSON is malformed: invalid character (byte {reader.base + reader.pos})")
            reader.pos += 1
            return
        start, after_comma = reader.pos, True
        out = _guessed(reader, decode, start) if open_ == b"[" else None
        if out is None:
            out = _exact(reader, decode, open_, close)
        yield out
        if reader.data[reader.pos - 1] == close[0]:
            return


def _guessed(reader: Reader, decode: Callable[[bytes], T], start: int) -> T | None:
    """An array's next run decoded at a likely cut; None when no guess decodes. The guesses, for an
    array of objects: the last `},{` of the window, else the array's end at the first `}]` (events are
    flat: the end is the first), else the last boundary of pretty-printed JSON."""
    data = reader.data
    for guess in (_last_cut, _end_cut, _spaced_cut):
        cut, after = guess(data, start)
        if cut <= start + 1:
            continue
        try:
            out = decode(b"".join((b"[", memoryview(data)[start:cut], b"]")))
        except msgspec.ValidationError:
            raise  # the caller's own refusal (a value too long), not a wrong cut
        except msgspec.DecodeError:
            continue  # not a boundary after all
        reader.pos = after  # after the comma or the closing bracket
        return out
    return None


def _last_cut(data: bytes, start: int) -> tuple[int, int]:
    """(end of the run, after its comma) at the last `},{`; (0, 0) when there is none."""
    at = data.rfind(b"},{", start)
    return (at + 1, at + 2) if at >= 0 else (0, 0)


def _end_cut(data: bytes, start: int) -> tuple[int, int]:
    at = data.find(b"}]", start)
    return (at + 1, at + 2) if at >= 0 else (0, 0)


def _spaced_cut(data: bytes, start: int) -> tuple[int, int]:
    """(end of the run, after its comma) at the last `}`, comma, `{` of pretty-printed JSON in the
    window's last MiB; (0, 0) when there is none."""
    last = collections.deque(_SPACED_CUT.finditer(data, max(start, len(data) - _TAIL)), maxlen=1)
    if not last:
        return 0, 0
    at = last[0].start()
    return at + 1, at + last[0].group().index(b",") + 1


def _exact(reader: Reader, decode: Callable[[bytes], T], open_: bytes, close: bytes) -> T:
    """Decode up to the last true boundary of the window (or the container's end), the window grown
    while one element is longer than it; the reader is left after the comma or the closing bracket."""
    span = SCAN_FIRST
    while True:
        start = reader.pos
        stop = min(start + span, len(reader.data))
        end, last = boundaries(reader.data, start, stop)
        if end is None and stop < len(reader.data):
            span *= 4  # a small member ends early: scan a little first, then more (≤ 4/3 of the window)
            continue
        cut = end if end is not None else last
        if cut is not None:
            try:
                out = decode(b"".join((open_, memoryview(reader.data)[start:cut], close)))
            except msgspec.DecodeError as exc:
                raise reader.error(exc, start) from None
            reader.pos = cut + 1
            return out
        if reader.eof:
            raise msgspec.DecodeError("Input data was truncated")
        reader.fill(2 * (len(reader.data) - start))
        span = len(reader.data)


@cache
def _tables() -> tuple[Any, Any]:
    """Per byte value: is it a bracket or a comma; how it changes the depth."""
    import numpy as np

    mark, depth = np.zeros(256, dtype=bool), np.zeros(256, dtype=np.int8)
    mark[list(b"{}[],")] = True
    depth[list(b"{[")], depth[list(b"}]")] = 1, -1
    return mark, depth


def boundaries(data: bytes, start: int, stop: int) -> tuple[int | None, int | None]:
    """In `data[start:stop]`, which begins an element inside a container: the offset of the container's
    closing bracket (None when the window ends first) and of the last comma between its elements before
    it (None when there is none). Brackets and commas inside strings do not count: a string spans from
    a quote to the next quote not escaped (after an odd run of backslashes)."""
    import numpy as np

    a = np.frombuffer(data, dtype=np.uint8, count=stop - start, offset=start)
    quotes = np.flatnonzero(a == ord('"'))
    slashes = np.flatnonzero(a == ord("\\"))
    if len(slashes):
        first = np.r_[True, np.diff(slashes) != 1]
        run_start, run_end = slashes[first], slashes[np.r_[first[1:], True]]
        escaped = run_end[(run_end - run_start) % 2 == 0] + 1  # after an odd run
        quotes = quotes[~np.isin(quotes, escaped)]
    mark, step = _tables()
    marks = np.flatnonzero(mark[a])
    marks = marks[np.searchsorted(quotes, marks) % 2 == 0]  # an even count of quotes before: outside strings
    depth = 1 + np.cumsum(step[a[marks]], dtype=np.int64)
    closing = np.flatnonzero(depth == 0)
    end = int(marks[closing[0]]) if len(closing) else None
    commas = marks[(depth == 1) & (a[marks] == ord(","))]
    if end is not None:
        commas = commas[commas < end]
    return (None if end is None else start + end), (int(commas[-1]) + start if len(commas) else None)


def skip(reader: Reader) -> None:
    """Consume the value at the reader, checked but not kept."""
    for _ in values(reader, _raw):
        pass


def _raw(data: bytes) -> Any:
    return msgspec.json.decode(data, type=msgspec.Raw)


def whole(reader: Reader, limit: int, where: str, parse: Callable[[bytes], Any] = msgspec.json.decode) -> Any:
    """The value at the reader decoded as it is (any JSON, by `parse`), refused past `limit` bytes of JSON
    (decoded values take several times their text)."""
    read = 0

    def decode(data: bytes) -> Any:
        nonlocal read
        read += len(data)
        if read > limit:
            raise msgspec.ValidationError(f"`$.{where}` is longer than {limit / 2**20:,.1f} MiB, the most read "
                                          "whole in a streamed file (set by --max-memory; raise it with "
                                          "--max-memory SIZE)")
        return parse(data)

    parts = list(values(reader, decode))
    if len(parts) == 1 or not parts:
        return parts[0] if parts else ([] if reader.data[reader.pos - 1] == ord("]") else {})
    if isinstance(parts[0], list):
        return [item for part in parts for item in part]
    return {key: value for part in parts for key, value in part.items()}
