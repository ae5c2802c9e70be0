"""The RBLN kind's inputs: Perfetto protobuf traces (.pb, .pftrace, gzip or not) written by the RBLN
profiler, recognised by content, and folders of per-rank traces.

`detect` claims a file whose first bytes frame as Perfetto packets (field 1, length-delimited) and
whose first packets decode as `TracePacket`s (a gzip file: the same test on its inflated head), and a
folder holding such files; `members` lists a folder's traces in natural order (rank 2 before rank 10),
each analysed on its own (every `.pb` is on its own device's clock); `load` reads one trace.

Bad input never raises anything but AdvisorError: a file that frames as packets but yields none is
`not a Perfetto trace: …`; a trace with no slice at all is an error (nothing to analyse); a trace whose
slices are all on tracks no category pattern matches is a profile whose notes say no RBLN command
tracks were found (its slices are in category `other`), so the report still shows what is there.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path
from typing import TYPE_CHECKING

from advisor.core.errors import AdvisorError
from advisor.core.model import Profile
from advisor.inputs.folders import MAX_LISTED, listing
from advisor.inputs.limits import DEFAULT_MAX_MEMORY
from advisor.inputs.perfetto.arguments import Arguments
from advisor.inputs.perfetto.packets import CORRUPT, Splitter
from advisor.inputs.text import read_head
from advisor.kinds.base import DEFAULT_MAX_RANKS, LoadOptions, check_rank_count
from advisor.profilers.rbln.knowledge import slice_argument_keys

if TYPE_CHECKING:
    from advisor.inputs.perfetto.reader import ReadResult

SUFFIXES = (".pb", ".pftrace", ".perfetto-trace", ".perfetto")  # a folder's traces, also gzipped (.pb.gz)
FOREIGN = (".ntff", ".ncu-rep")  # other kinds' binary captures are never claimed, whatever their bytes
NCU_MAGIC = b"NVR\0"
SNIFF_PACKETS = 16  # whole packets decoded to recognise a trace
SNIFF_FRAMED = 1 << 16  # bytes checked to be packet fields, at least (walking a whole 1 MiB head costs ~2 ms)
SNIFF_INFLATED = 1 << 20
TRACE_STARTS = (b"\x0a", b"\x1f\x8b")  # a Perfetto trace's first packet field, or gzip
ARGUMENTS = Arguments(**slice_argument_keys())  # where a slice's bytes and cycles are (tracks.yaml `arguments`)


def _inflated_head(head: bytes) -> bytes:
    try:
        return zlib.decompressobj(31).decompress(head, SNIFF_INFLATED)
    except zlib.error:
        return b""


def sniff(head: bytes) -> bool:
    """The bytes start a serialized Perfetto Trace: packet fields through the first SNIFF_FRAMED bytes, or
    all through a shorter head (the last may be cut where the head ends), and the first packets decode as
    TracePackets, one of them wholly of fields the schema knows."""
    if head[:2] == b"\x1f\x8b":
        head = _inflated_head(head)
    if not head or head[0] != 0x0A or head.startswith(NCU_MAGIC) or head.lstrip()[:1] in (b"{", b"["):
        return False  # (a JSON trace's first line break is also 0x0A: told apart before the protos load)
    from google.protobuf.message import DecodeError
    from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import TracePacket

    splitter = Splitter(head)
    spans: list[tuple[int, int]] = []  # (offset, length) of the first packets
    for span in splitter.packets():
        if len(spans) < SNIFF_PACKETS:
            spans.append(span)
        elif splitter.position >= SNIFF_FRAMED:
            break
    # garbage after whole packets is a damaged trace (read up to it, with a note); at the start it is not a trace
    corrupt = splitter.problem is not None and splitter.problem.kind == CORRUPT
    if not spans or (corrupt and len(spans) < 2):
        return False
    known = False
    for offset, length in spans:
        try:
            packet = TracePacket.FromString(head[offset:offset + length])
        except (DecodeError, RecursionError, ValueError):
            return False
        if not known and packet.ListFields():
            packet.DiscardUnknownFields()
            known = packet.ByteSize() == length
    return known


def _is_trace_name(path: Path) -> bool:
    name = path.name.lower()
    name = name[:-3] if name.endswith(".gz") else name
    return name.endswith(SUFFIXES)


def _listing(folder: Path, limit: int = MAX_LISTED) -> list[Path]:
    """The folder's files named like traces, in natural order; refused past `limit` entries."""
    return listing(folder, lambda name: _is_trace_name(Path(name)), limit)


def _bad_start(path: Path) -> str | None:
    """Why the file cannot be a trace from its first bytes (empty, or neither packets nor gzip); None if it may be."""
    try:
        head = read_head(path, 2)
    except AdvisorError as exc:
        return exc.problem
    if not head:
        return "file is empty"
    return None if head.startswith(TRACE_STARTS) else "not a Perfetto trace (no packet at its start)"


def members(folder: Path, limit: int = DEFAULT_MAX_RANKS) -> list[tuple[str, Path]] | None:
    """The folder's Perfetto traces as (file name, path), in natural order; None for a file; more than
    `limit` is refused. Every one is checked by its first bytes before any is analysed: a folder of empty
    or broken files fails at once, naming the first and how many."""
    if not folder.is_dir():
        return None
    files = _listing(folder)
    check_rank_count(folder, len(files), limit)
    bad = [(path, why) for path in files if (why := _bad_start(path)) is not None]
    if bad:
        first, why = bad[0]
        raise AdvisorError(str(first), f"{why}; {len(bad):,} of {len(files):,} trace files in {folder} cannot be "
                                       "read")
    return [(p.name, p) for p in files]


def detect(path: Path, head: bytes) -> bool:
    if path.is_dir():  # the traces' first bytes are checked again when the folder is read (`members`)
        found = _listing(path)
        return any(_sniff_file(p) for p in found[:8]) or (bool(found) and all(_is_empty(p) for p in found[:8]))
    if path.name.lower().endswith(FOREIGN) or head.startswith(NCU_MAGIC):
        return False
    return sniff(head)


def _is_empty(path: Path) -> bool:
    """An empty trace-named file: a rank folder's failed capture, claimed so that the error names it."""
    with suppress(OSError):
        return path.stat().st_size == 0
    return False


def _sniff_file(path: Path) -> bool:
    try:
        return sniff(read_head(path, 1 << 20))
    except AdvisorError:
        return False


def read(path: Path, workers: int | None = None, progress: Callable[[str], None] | None = None,
         limit: int = DEFAULT_MAX_MEMORY) -> ReadResult:
    """Every slice of an RBLN trace, with its transfer bytes and cycles (the shared Perfetto reader)."""
    from advisor.inputs.perfetto import reader

    return reader.read(path, ARGUMENTS, workers, progress, limit=limit)


def load(path: Path, options: LoadOptions) -> list[Profile]:
    """The trace's one profile (a folder's traces are analysed one by one: see `members`)."""
    from advisor.profilers.rbln.adapters.trace import build

    if path.is_dir():
        raise AdvisorError(str(path), "no Perfetto trace (.pb, .pftrace) in this folder")
    return [build(path, read(path, options.option("workers"), options.progress, options.max_memory))]


def load_trace(path: Path, workers: int | None = None) -> Profile:
    """One trace read with `workers` processes (None: the default for its size)."""
    from advisor.profilers.rbln.adapters.trace import build

    return build(path, read(path, workers))
