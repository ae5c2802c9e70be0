"""Reading a profile file as text: encodings, BOMs, binary detection, log lines before JSON."""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from advisor.core.errors import AdvisorError

MAX_SUMMARY_BYTES = 256 * 1024 * 1024  # a summary is kilobytes; past this it is not a summary file

_JSON_LINE_START = re.compile(r"^[ \t]*\{", re.MULTILINE)


@contextmanager
def file_errors(path: Path) -> Iterator[None]:
    """An OS error reading `path` as the one-line error users see."""
    try:
        yield
    except FileNotFoundError:
        raise AdvisorError(str(path), "no such file") from None
    except PermissionError:
        raise AdvisorError(str(path), "permission denied") from None
    except OSError as exc:
        raise AdvisorError(str(path), exc.strerror or str(exc)) from None


def read_bytes(path: Path, limit: int = MAX_SUMMARY_BYTES) -> bytes:
    with file_errors(path):
        if path.is_dir():
            raise AdvisorError(str(path), "is a directory, not a profile file")
        size = path.stat().st_size
        if size > limit:
            raise AdvisorError(str(path), f"file is {size / 2**20:.0f} MiB; larger than the {limit >> 20} MiB "
                                          "this version reads")
        return path.read_bytes()


def read_head(path: Path, size: int) -> bytes:
    """The first `size` bytes of a file (b"" for a folder)."""
    if path.is_dir():
        return b""
    with file_errors(path), path.open("rb") as handle:
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
