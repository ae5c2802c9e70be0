"""Reading a profile file as text: encodings, BOMs, binary detection, log lines before JSON."""

from __future__ import annotations

import codecs
import os
import re
from pathlib import Path

from advisor.core.errors import AdvisorError
from advisor.core.regular import open_regular as open_regular  # re-exported: the readers open through here
from advisor.core.regular import read_at_most
from advisor.core.regular import read_errors as file_errors
from advisor.core.regular import require_regular_file as require_regular_file

MAX_SUMMARY_BYTES = 256 * 1024 * 1024  # a summary is kilobytes; past this it is not a summary file

_JSON_LINE_START = re.compile(r"^[ \t]*\{", re.MULTILINE)
INPUT_PATTERNS = {"JSON after log lines": (_JSON_LINE_START, (" ", "\t", "\n", "x"))}


def size_refusal(size: int, limit: int, what: str = "input size limit") -> str:
    """The one line for an input over a limit derived from --max-memory."""
    return (f"file is {size / 2**20:,.1f} MiB, over the {what} of {limit / 2**20:,.0f} MiB "
            "(set by --max-memory; raise it with --max-memory SIZE)")


def read_bytes(path: Path, limit: int = MAX_SUMMARY_BYTES, what: str = "input size limit") -> bytes:
    """The whole file, refused past `limit` bytes (also when it grows while being read)."""
    with open_regular(path) as handle:
        size = os.fstat(handle.fileno()).st_size
        if size > limit:
            raise AdvisorError(str(path), size_refusal(size, limit, what))
        with file_errors(path):
            data = read_at_most(handle, limit)  # what the file holds, never a reservation of the whole limit
    if len(data) > limit:
        raise AdvisorError(str(path), size_refusal(len(data), limit, what))
    return data


def read_head(path: Path, size: int) -> bytes:
    """The first `size` bytes of a file (b"" for a folder, which some kinds read as a whole)."""
    if path.is_dir():
        return b""
    with open_regular(path) as handle, file_errors(path):
        return handle.read(size)


def decode(data: bytes) -> str | None:
    """Text of the file (UTF-8, UTF-8 with BOM, UTF-16 with BOM), or None when it is binary."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError:
            return None
    if b"\x00" in data[:4096]:
        return None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None


def decode_head(head: bytes) -> str | None:
    """The text of a file's first bytes, which may end inside a character; None when binary."""
    for cut in range(4):  # a UTF-8 character is at most 4 bytes
        text = decode(head[:len(head) - cut])
        if text is not None:
            return text
    return None


def first_json_start(text: str) -> int | None:
    """Offset of the JSON document: the start of the text, or the first line that opens an object
    or array after log lines (what `neuron-profile view ... > summary.json` captures)."""
    stripped = text.lstrip()
    if stripped.startswith(("{", "[")):
        return len(text) - len(stripped)
    match = _JSON_LINE_START.search(text)
    return match.start() if match else None
