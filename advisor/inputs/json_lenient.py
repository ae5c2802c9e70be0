"""JSON as Python's json.dump writes it, for the C decoder that refuses two of its habits: non-finite floats as
bare words (NaN, Infinity, -Infinity) and lone surrogate escapes in strings (`"\\ud800"`, from text that was not
valid Unicode). A value of either kind costs that value, not the file: `lenient(decode)` retries a text msgspec
refuses with those words as null (unavailable) and those escapes as U+FFFD. Text without them is never rewritten,
so the common case costs one failed `search` only when msgspec already refused."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TypeVar

import msgspec

T = TypeVar("T")
# Outside strings, the bare words; inside them, every escape left to right (an escaped backslash is never read as
# the start of another escape), a surrogate pair as one.
_WORD_OR_STRING = re.compile(rb'(-?Infinity|NaN)|"(?:[^"\\]|\\.)*"', re.DOTALL)
_ESCAPE = re.compile(rb"\\(?:u[dD][89abAB][0-9a-fA-F]{2}(?:\\u[dD][c-fC-F][0-9a-fA-F]{2})?"
                     rb"|u[dD][c-fC-F][0-9a-fA-F]{2}|.)", re.DOTALL)
_HINT = re.compile(rb"NaN|Infinity|\\u[dD]")


def _escape(match: re.Match[bytes]) -> bytes:
    text = match.group()
    return b"\\ufffd" if len(text) == 6 and text[1:3] in (b"ud", b"uD") else text  # a surrogate without its pair


def _standard(match: re.Match[bytes]) -> bytes:
    if match.group(1):
        return b"null"
    text = match.group()
    return _ESCAPE.sub(_escape, text) if b"\\u" in text else text


def standardised(data: bytes) -> bytes:
    """`data` with non-finite words as null and lone surrogate escapes as U+FFFD."""
    return _WORD_OR_STRING.sub(_standard, data)


def lenient(decode: Callable[[bytes], T]) -> Callable[[bytes], T]:
    """`decode`, retried once on the standardised text when msgspec refuses a text that holds either habit; a
    text still refused is refused with msgspec's words about it as it was."""

    def run(data: bytes) -> T:
        try:
            return decode(data)
        except msgspec.DecodeError as refused:
            if not _HINT.search(data):
                raise
            fixed = standardised(bytes(data))
            if fixed == data:
                raise
            try:
                return decode(fixed)
            except msgspec.DecodeError:
                raise refused from None

    return run
