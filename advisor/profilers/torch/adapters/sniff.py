"""Recognising a Kineto trace from its first bytes, and reading the top-level members Kineto writes before the
event list (distributedInfo, …) from them without parsing the list: what detection and a folder's rank order need.
Also recognised, to be named rather than read: a PyTorch execution trace. Reading a trace is stream.py's."""

from __future__ import annotations

import json
import re
import zlib
from functools import cache
from pathlib import Path
from typing import Any

from advisor.core.errors import AdvisorError
from advisor.inputs.text import decode_head, read_head
from advisor.profilers.torch.adapters.knowledge import kineto

GZIP_MAGIC = b"\x1f\x8b"
SNIFF_INFLATED = 1 << 20  # bytes of a gzip trace inflated to recognise it
EVENTS = "traceEvents"
META_KEYS = ("schemaVersion", "deviceProperties", "distributedInfo", "traceName", "baseTimeNanoseconds",
             "displayTimeUnit", "computeProperties")  # computeProperties: older Kineto's deviceProperties
EVENTS_LIST = re.compile(r'"traceEvents"\s*:\s*\[')
_WHITESPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


def inflated_head(head: bytes, size: int = SNIFF_INFLATED) -> bytes:
    """The head itself, or for gzip as much of its inflated text as the head holds (up to `size`)."""
    if not head.startswith(GZIP_MAGIC):
        return head
    try:
        return zlib.decompressobj(31).decompress(head, size)
    except zlib.error:
        return b""


@cache
def _markers() -> tuple[re.Pattern[str], re.Pattern[str]]:
    k = kineto()
    keys = re.compile(r'"(?:' + "|".join(map(re.escape, k.marker_keys)) + r')"\s*:')
    cats = re.compile(r'"cat"\s*:\s*"(?:' + "|".join(map(re.escape, k.marker_categories)) + r')"')
    return keys, cats


def is_kineto(head: bytes) -> bool:
    """A JSON object with a `traceEvents` array and a mark only Kineto writes (a top-level member such as
    schemaVersion, or an event category such as cpu_op): a Chrome trace of another tool is not claimed."""
    text = decode_head(inflated_head(head))
    if text is None or not text.lstrip().startswith("{") or not EVENTS_LIST.search(text):
        return False
    keys, cats = _markers()
    return bool(keys.search(text) or cats.search(text))


def execution_schema(head: bytes) -> str | None:
    """The `schema` of a PyTorch execution trace ("1.0.1", "1.1.1-chakra.0.0.4"), None for anything else: a JSON
    object whose `schema` is a version, with a member only the observer writes (kineto.yaml execution_trace) and
    no `traceEvents` (a Kineto trace with a `schema` member stays one)."""
    text = decode_head(inflated_head(head))
    if text is None or not text.lstrip().startswith("{") or EVENTS_LIST.search(text):
        return None
    k = kineto()
    found = leading_members(text)
    schema = found.get("schema")
    if not isinstance(schema, str) or len(schema) > 64 or not k.et_schema.match(schema):
        return None
    present = any(re.search(r'"' + re.escape(m) + r'"\s*:', text) for m in k.et_members)
    return schema if present else None


def is_kineto_file(path: Path, size: int = SNIFF_INFLATED) -> bool:
    try:
        return is_kineto(read_head(path, size))
    except AdvisorError:
        return False


def _skip(text: str, at: int) -> int:
    match = _WHITESPACE.match(text, at)
    return match.end() if match else at


def leading_members(text: str) -> dict[str, Any]:
    """The top-level members written before `traceEvents` (Kineto writes schemaVersion, deviceProperties and
    distributedInfo first), each parsed whole; parsing stops at the event list, at a member the text cuts,
    or at anything that is not JSON."""
    found: dict[str, Any] = {}
    at = _skip(text, 0)
    if text[at:at + 1] != "{":
        return found
    at += 1
    try:
        while True:
            at = _skip(text, at)
            if text[at:at + 1] != '"':
                return found
            key, at = _DECODER.raw_decode(text, at)
            at = _skip(text, at)
            if text[at:at + 1] != ":":
                return found
            at = _skip(text, at + 1)
            if key == EVENTS:
                return found
            found[key], at = _DECODER.raw_decode(text, at)
            at = _skip(text, at)
            if text[at:at + 1] != ",":
                return found
            at += 1
    except (ValueError, RecursionError):
        return found


def rank_from_name(name: str) -> int | None:
    """rank-3, rank_3, rank3 in a file name (the last one when several)."""
    found = kineto().rank_file.findall(name)
    return int(found[-1]) if found else None


def head_text(path: Path, size: int = SNIFF_INFLATED) -> str:
    """The first `size` bytes of a trace's text (inflated for gzip), "" when unreadable."""
    try:
        return decode_head(inflated_head(read_head(path, size), size)) or ""
    except AdvisorError:
        return ""
