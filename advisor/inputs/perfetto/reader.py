"""A trace file to resolved slices, streaming: a plain file is memory-mapped, a gzip file is inflated a
block at a time (never to a temporary file, so a killed run leaves nothing behind); either is walked at
packet boundaries and decoded a range at a time — in a pool of worker processes for large files (each
maps a plain file itself, by path; a gzip file's ranges are sent to them), in this process for small
ones — then resolved in file order here. Mapped pages are released as soon as a range is done, so the
resident memory is the compact rows and columns, not the file. The result does not depend on the
number of workers.

The trace's size after every decompression (the gzip stream, compressed_packets containers) counts
against the input limit (`--max-memory`), checked as the bytes come: a gzip bomb stops at the limit.
"""

from __future__ import annotations

import mmap
import os
import zlib
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from advisor.core.errors import AdvisorError
from advisor.inputs.perfetto.arguments import Arguments
from advisor.inputs.perfetto.extract import extract
from advisor.inputs.perfetto.packets import CORRUPT, FramingProblem, Splitter
from advisor.inputs.perfetto.resolve import Resolved, Resolver
from advisor.inputs.perfetto.rows import CHUNK_BYTES, Records
from advisor.inputs.text import file_errors

GZIP_MAGIC = b"\x1f\x8b"
PARALLEL_MIN_BYTES = 8 << 20  # below this a pool costs more to start than it saves
RANGE_BYTES = 8 << 20  # one worker task
MAX_WORKERS = 4
PAGE = mmap.PAGESIZE
GZIP_READ = 1 << 20  # compressed bytes read at a time
GZIP_BLOCK = 4 << 20  # inflated bytes at a time: a bomb never holds more than this beyond the window
MAX_PACKET = 256 << 20  # one packet of a gzip stream waits whole in memory: larger is a broken header, not a trace


def _size(n: int) -> str:
    return f"{n / 2**30:g} GiB" if n >= 1 << 30 and n % (1 << 28) == 0 else f"{n / 2**20:,.0f} MiB"


def too_large(path: Path, what: str, limit: int) -> AdvisorError:
    """The one-line refusal of a trace past the input limit, saying how to raise it."""
    suggestion = max(4 * limit, 1 << 30) >> 30
    return AdvisorError(str(path), f"{what} more than {_size(limit)}, the input limit (--max-memory): raise it "
                                   f"to read this trace, e.g. --max-memory {suggestion}GiB")


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


def _extract_file(path: str, start: int, end: int, budget: int, arguments: Arguments) -> Records:
    """A worker's task: its own map of the file, one range of whole packets."""
    with _mapped(Path(path)) as buf:
        return extract(buf, arguments, start, end, _releaser(buf) if isinstance(buf, mmap.mmap) else None,
                       budget=budget)


class _Gunzip:
    """A gzip file's inflated bytes, a block at a time, counted against `limit` as they come; `note` says
    when the stream was cut or damaged (what came out before is kept)."""

    def __init__(self, path: Path, limit: int):
        self.path = path
        self.limit = limit
        self.size = 0
        self.note = ""

    def blocks(self) -> Iterator[bytes]:
        with file_errors(self.path), self.path.open("rb") as source:
            inflater, pending, started = zlib.decompressobj(31), b"", False
            while True:
                if not pending:
                    pending = source.read(GZIP_READ)
                    if not pending:
                        if started and not inflater.eof:
                            self.note = "the gzip stream ends early: what it held up to there was read"
                        return
                try:
                    data = inflater.decompress(pending, GZIP_BLOCK)
                except zlib.error as exc:
                    self.note = f"the gzip stream is damaged ({exc}): what came before was read"
                    return
                started = True
                pending = inflater.unconsumed_tail
                if inflater.eof:  # several gzip members, one after the other
                    pending = inflater.unused_data + pending
                    inflater, started = zlib.decompressobj(31), False
                self.size += len(data)
                if self.size > self.limit:
                    raise too_large(self.path, "the gzip trace inflates to", self.limit)
                if data:
                    yield data


def is_gzip(path: Path) -> bool:
    with file_errors(path), path.open("rb") as handle:
        return handle.read(2) == GZIP_MAGIC


def read(path: Path, arguments: Arguments, workers: int | None = None,
         progress: Callable[[str], None] | None = None, *, limit: int) -> ReadResult:
    """Every slice of the trace at `path` (a Perfetto .pb/.pftrace, gzip or not), with the bytes and
    cycles the annotations `arguments` names carry; the trace's size after decompression may be at most
    `limit` bytes (--max-memory)."""
    from concurrent.futures.process import BrokenProcessPool

    wanted = default_workers() if workers is None else max(1, workers)
    try:
        return _read(path, arguments, wanted, progress, limit)
    except (BrokenProcessPool, PermissionError, BlockingIOError):
        if wanted == 1:
            raise
        return _read(path, arguments, 1, progress, limit)  # no processes here (a sandbox, a killed worker): this one


def _read(path: Path, arguments: Arguments, workers: int, progress: Callable[[str], None] | None,
          limit: int) -> ReadResult:
    resolver = Resolver(arguments)
    if is_gzip(path):
        gunzip = _Gunzip(path, limit)
        ranges = _Ranges(path, workers, PARALLEL_MIN_BYTES, resolver, progress, limit)
        problem = _stream(gunzip.blocks(), ranges)
        return ReadResult(resolver.finish(), gunzip.size, problem, True, gunzip.note, ranges.used)
    with _mapped(path) as buf:
        size = len(buf)
        if size > limit:
            raise too_large(path, f"the trace is {_size(size)},", limit)
        start_pool = 0 if workers > 1 and size >= PARALLEL_MIN_BYTES else None
        ranges = _Ranges(path, workers, start_pool, resolver, progress, limit, size)
        problem = _split(path, buf, ranges)
    return ReadResult(resolver.finish(), size, problem, False, "", ranges.used)


class _Ranges:
    """Ranges of whole packets decoded here or by a pool (started once the ranges reach `start_pool`
    bytes; None: never), resolved here in file order as they come back (at most a few in flight). What
    compressed_packets containers inflate to counts against the limit with the trace's own bytes."""

    def __init__(self, path: Path, workers: int, start_pool: int | None, resolver: Resolver,
                 progress: Callable[[str], None] | None, limit: int, total: int = 0):
        self.path, self.workers, self.start_pool = path, workers, start_pool if workers > 1 else None
        self.resolver, self.progress, self.limit, self.total = resolver, progress, limit, total
        self.pool: Any = None
        self.pending: deque = deque()
        self.inflated = 0  # bytes compressed_packets containers inflated to, in ranges resolved so far
        self.reported = 0
        self.used = 1

    def budget(self, end: int) -> int:
        """What containers of a range ending at `end` may still inflate to."""
        return max(0, self.limit - end - self.inflated)

    def add(self, task: Callable[..., Records], args: tuple, end: int) -> None:
        if self.pool is None and self.start_pool is not None and end >= self.start_pool:
            from concurrent.futures import ProcessPoolExecutor

            self.pool, self.used = ProcessPoolExecutor(max_workers=self.workers), self.workers
        if self.pool is None:
            self._fed(task(*args), end)
            return
        self.pending.append((self.pool.submit(task, *args), end))
        while len(self.pending) > self.workers:  # the rest decode while the oldest is resolved
            future, done = self.pending.popleft()
            self._fed(future.result(), done)

    def drain(self) -> None:
        """The ranges still in flight, resolved in order."""
        while self.pending:
            future, done = self.pending.popleft()
            self._fed(future.result(), done)

    def close(self) -> None:
        """The pool ended (after an error: what has not started is cancelled)."""
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)
            self.pending.clear()

    def _fed(self, records: Records, end: int) -> None:
        self.inflated += records.inflated
        if records.over or end + self.inflated > self.limit:
            raise too_large(self.path, "the trace's compressed packets inflate to", self.limit)
        self.resolver.feed(records)
        total = self.total
        if self.progress and total and end * 10 // total > self.reported:
            self.reported = end * 10 // total
            self.progress(f"reading {self.path.name}: {self.reported * 10}%")
        elif self.progress and not total and end >> 26 > self.reported:  # a stream: every 64 MiB
            self.reported = end >> 26
            self.progress(f"reading {self.path.name}: {end >> 20:,} MiB")


def _range_bytes(size: int, workers: int) -> int:
    return max(CHUNK_BYTES, min(RANGE_BYTES, size // (workers * 4) + 1))


def _split(path: Path, buf: mmap.mmap | bytes, ranges: _Ranges) -> FramingProblem | None:
    """A mapped file's ranges of whole packets (the walk reads only the framing), decoded and resolved."""
    release = _releaser(buf) if isinstance(buf, mmap.mmap) else None
    arguments = ranges.resolver.arguments
    splitter = Splitter(buf)
    pooled = ranges.start_pool == 0
    try:
        for start, end, _ in splitter.chunks(_range_bytes(len(buf), ranges.workers if pooled else 1)):
            if pooled:
                if release is not None:
                    release(start, end)
                ranges.add(_extract_file, (str(path), start, end, ranges.budget(end), arguments), end)
            else:
                ranges.add(extract, (buf, arguments, start, end, release, CHUNK_BYTES, ranges.budget(end)), end)
        ranges.drain()
    finally:
        ranges.close()
    return splitter.problem


def _extract_bytes(data: bytes, budget: int, arguments: Arguments) -> Records:
    """A worker's task for a stream: one range of whole packets, sent as bytes."""
    return extract(data, arguments, budget=budget)


def _stream(blocks: Iterable[bytes], ranges: _Ranges) -> FramingProblem | None:
    """Inflated blocks gathered into ranges of whole packets (a packet cut by the block's end waits for
    the next one), decoded and resolved in order. Memory: one range plus the largest packet."""
    window = bytearray()
    arguments = ranges.resolver.arguments
    base = 0  # offset in the trace of window[0]
    problem: FramingProblem | None = None
    try:
        for block in _then_end(blocks):
            final = block is None
            if block is not None:
                window += block
                if len(window) < RANGE_BYTES:
                    continue
            splitter = Splitter(window)
            for start, end, _ in splitter.chunks(RANGE_BYTES):
                ranges.add(_extract_bytes, (bytes(window[start:end]), ranges.budget(base + end), arguments),
                           base + end)
            found = splitter.problem
            if found is not None and not final and len(window) - splitter.position > MAX_PACKET:
                found = FramingProblem(found.offset, CORRUPT, f"a packet larger than {_size(MAX_PACKET)}")
            if found is not None and (final or found.kind == CORRUPT):
                problem = FramingProblem(base + found.offset, found.kind, found.detail)
                break
            del window[:splitter.position]
            base += splitter.position
        ranges.drain()
    finally:
        ranges.close()
    return problem


def _then_end(blocks: Iterable[bytes]) -> Iterator[bytes | None]:
    yield from blocks
    yield None
