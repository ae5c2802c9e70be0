"""A trace file to resolved slices, streaming: the file is memory-mapped (a gzip file is first inflated
to a temporary file), walked at packet boundaries, and decoded a range at a time — in a pool of
worker processes for large files (each maps the file itself, by path), in this process for small
ones — then resolved in file order here. Mapped pages are released as soon as a range is done, so the
resident memory is the compact rows and columns, not the file. The result does not depend on the
number of workers.
"""

from __future__ import annotations

import mmap
import os
import tempfile
import zlib
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

from advisor.inputs.text import file_errors
from advisor.kinds.rbln.adapters.decode import CHUNK_BYTES, Records, Resolved, Resolver, extract
from advisor.kinds.rbln.adapters.packets import FramingProblem, Splitter

GZIP_MAGIC = b"\x1f\x8b"
PARALLEL_MIN_BYTES = 8 << 20  # below this a pool costs more to start than it saves
RANGE_BYTES = 8 << 20  # one worker task
MAX_WORKERS = 4
PAGE = mmap.PAGESIZE


def default_workers() -> int:
    """Worker processes for a large file: the cores this process may use, at most MAX_WORKERS."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, min(MAX_WORKERS, cores))


@dataclass(frozen=True)
class ReadResult:
    resolved: Resolved
    size: int  # bytes of trace read (after gunzip)
    problem: FramingProblem | None  # where the framing stopped early
    gzip: bool
    gzip_note: str  # "" unless the gzip stream itself was cut or damaged
    workers: int  # processes that decoded (1: this one)


def _releaser(mapped: mmap.mmap) -> Callable[[int, int], None]:
    """Drops the pages of a span already decoded from this process's resident set (the page cache
    keeps them), so reading a file of any size stays at the size of the rows."""
    advise = getattr(mapped, "madvise", None)
    flag = getattr(mmap, "MADV_DONTNEED", None)

    def release(start: int, end: int) -> None:
        if advise is None or flag is None:
            return
        first = start - start % PAGE
        if end > first:
            with suppress(OSError, ValueError):
                advise(flag, first, end - first)

    return release


@contextmanager
def _mapped(path: Path) -> Iterator[mmap.mmap | bytes]:
    with file_errors(path), path.open("rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        if size == 0:
            yield b""
            return
        mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        try:
            yield mapped
        finally:
            mapped.close()


def _extract_file(path: str, start: int, end: int) -> Records:
    """A worker's task: its own map of the file, one range of whole packets."""
    with _mapped(Path(path)) as buf:
        return extract(buf, start, end, _releaser(buf) if isinstance(buf, mmap.mmap) else None)


def _gunzip(path: Path, folder: str | None) -> tuple[Path, str]:
    """The gzip file inflated to a temporary file (the caller removes it), and a note when the stream
    was cut or damaged (what came out before is kept)."""
    note = ""
    handle, name = tempfile.mkstemp(prefix="advisor-rbln-", suffix=".pb", dir=folder)
    out = Path(name)
    try:
        with file_errors(path), path.open("rb") as source, os.fdopen(handle, "wb") as target:
            inflater = zlib.decompressobj(31)
            written = 0
            while True:
                block = source.read(1 << 20)
                if not block:
                    if not inflater.eof:
                        note = "the gzip stream ends early: what it held up to there was read"
                    break
                try:
                    data = inflater.decompress(block)
                    while inflater.eof and inflater.unused_data:  # several gzip members, one after the other
                        rest = inflater.unused_data
                        target.write(data)
                        written += len(data)
                        inflater = zlib.decompressobj(31)
                        data = inflater.decompress(rest)
                except zlib.error as exc:
                    note = f"the gzip stream is damaged ({exc}): what came before was read"
                    break
                target.write(data)
                written += len(data)
            target.write(inflater.flush() if not note else b"")
    except BaseException:
        out.unlink(missing_ok=True)
        raise
    return out, note


def is_gzip(path: Path) -> bool:
    with file_errors(path), path.open("rb") as handle:
        return handle.read(2) == GZIP_MAGIC


def read(path: Path, workers: int | None = None, progress: Callable[[str], None] | None = None) -> ReadResult:
    """Every slice of the trace at `path` (a Perfetto .pb/.pftrace, gzip or not)."""
    gz = is_gzip(path)
    note = ""
    source = path
    if gz:
        source, note = _gunzip(path, None)
    try:
        return _read(source, path, workers, progress, gz, note)
    finally:
        if gz:
            source.unlink(missing_ok=True)


def _read(source: Path, shown: Path, workers: int | None, progress: Callable[[str], None] | None, gz: bool,
          note: str) -> ReadResult:
    from concurrent.futures.process import BrokenProcessPool

    wanted = default_workers() if workers is None else max(1, workers)
    with _mapped(source) as buf:
        size = len(buf)
        used = 1 if wanted == 1 or size < PARALLEL_MIN_BYTES else wanted
        resolver = Resolver()
        try:
            problem = _ranges(source, buf, used, resolver, progress, shown)
        except (BrokenProcessPool, PermissionError, BlockingIOError):
            if used == 1:
                raise
            used, resolver = 1, Resolver()  # no processes here (a sandbox, a killed worker): read it in this one
            problem = _ranges(source, buf, used, resolver, progress, shown)
    return ReadResult(resolver.finish(), size, problem, gz, note, used)


def _ranges(source: Path, buf: mmap.mmap | bytes, workers: int, resolver: Resolver,
            progress: Callable[[str], None] | None, shown: Path) -> FramingProblem | None:
    """Ranges of whole packets found here (the walk reads only the framing), decoded here or by a
    pool, and resolved here in file order as they come back (at most a few ranges in flight)."""
    size = len(buf)
    release = _releaser(buf) if isinstance(buf, mmap.mmap) else None
    range_bytes = max(CHUNK_BYTES, min(RANGE_BYTES, size // (workers * 4) + 1))
    splitter = Splitter(buf)
    reported = 0

    def fed(records: Records, end: int) -> None:
        nonlocal reported
        resolver.feed(records)
        if progress and size and end * 10 // size > reported:
            reported = end * 10 // size
            progress(f"reading {shown.name}: {reported * 10}%")

    if workers == 1:
        for start, end, _ in splitter.chunks(range_bytes):
            fed(extract(buf, start, end, release), end)
        return splitter.problem
    from concurrent.futures import ProcessPoolExecutor

    pending: deque = deque()
    with ProcessPoolExecutor(max_workers=workers) as pool:
        for start, end, _ in splitter.chunks(range_bytes):
            if release is not None:
                release(start, end)
            pending.append((pool.submit(_extract_file, str(source), start, end), end))
            while len(pending) > workers:  # the rest decode while the oldest is resolved
                fed(*_result(pending.popleft()))
        while pending:
            fed(*_result(pending.popleft()))
    return splitter.problem


def _result(item: tuple) -> tuple[Records, int]:
    future, end = item
    return future.result(), end
