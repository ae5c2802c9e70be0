"""Opening only regular files: a FIFO blocks the open until a writer comes, a device never ends, so every
file advisor reads (profiles, packs, contexts, settings, saved analyses, the fleet's hashing) is checked
before it is opened, and again on the open handle (no race between the check and the open)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from advisor.core.errors import AdvisorError
from advisor.core.files import describe_node, is_regular


@contextmanager
def read_errors(path: Path) -> Iterator[None]:
    """An OS error reading `path` as the one-line error users see."""
    try:
        yield
    except FileNotFoundError:
        raise AdvisorError(str(path), "no such file") from None
    except PermissionError:
        raise AdvisorError(str(path), "permission denied") from None
    except OSError as exc:
        raise AdvisorError(str(path), exc.strerror or str(exc)) from None


def _refusal(path: Path, mode: int, what: str) -> AdvisorError:
    return AdvisorError(str(path), f"is {describe_node(mode)}, not {what}: advisor reads regular files only")


def require_regular_file(path: Path, what: str = "a profile file") -> os.stat_result:
    """The file's status, or the one-line refusal of anything that is not a regular file."""
    with read_errors(path):
        status = os.stat(path)
    if not is_regular(status.st_mode):
        raise _refusal(path, status.st_mode, what)
    return status


def _nonblocking(name: str, flags: int) -> int:
    return os.open(name, flags | getattr(os, "O_NONBLOCK", 0))  # a FIFO swapped in after the check cannot block


@contextmanager
def open_regular(path: Path, what: str = "a profile file") -> Iterator[BinaryIO]:
    """The file open for reading, checked to be regular before the open and on the open handle itself."""
    require_regular_file(path, what)
    with read_errors(path), open(path, "rb", opener=_nonblocking) as handle:
        mode = os.fstat(handle.fileno()).st_mode
        if not is_regular(mode):
            raise _refusal(path, mode, what)
        yield handle


GROWTH_STEP = 1 << 20  # bytes read at a time past the size the file had when opened (it grew meanwhile)


def read_at_most(handle: BinaryIO, limit: int) -> bytes:
    """The rest of an open file, up to `limit` + 1 bytes (one more than allowed: the caller sees that it is
    over). It asks for the size the file has now, plus one byte, then reads on in GROWTH_STEP pieces only if
    the file grew: `read(limit + 1)` reserves the whole limit before the first byte, so under `ulimit -v`
    a 1 KB summary's read asked for gigabytes and was "out of memory"."""
    left = max(os.fstat(handle.fileno()).st_size - handle.tell(), 0)
    data = handle.read(min(left, limit) + 1)
    if len(data) <= left:  # the end came where fstat said (or earlier), or the read is already over the limit
        return data
    chunks, total = [data], len(data)
    while total <= limit and (chunk := handle.read(min(GROWTH_STEP, limit + 1 - total))):  # it grew: read on
        chunks.append(chunk)
        total += len(chunk)
    return b"".join(chunks)


def read_regular(path: Path, limit: int, what: str) -> bytes:
    """A whole regular file of at most `limit` bytes (also when it grows while being read)."""
    with open_regular(path, what) as handle:
        size = os.fstat(handle.fileno()).st_size
        if size > limit:
            raise AdvisorError(str(path), f"is {size / 2**20:,.1f} MiB, larger than {limit / 2**20:,.0f} MiB (the most "
                                          f"{what} may be)")
        data = read_at_most(handle, limit)
    if len(data) > limit:
        raise AdvisorError(str(path), f"grew past {limit / 2**20:,.0f} MiB while being read")
    return data
