"""The torch kind's inputs: PyTorch-profiler traces (Kineto's Chrome-trace JSON, plain or gzip), recognised by
content, and folders of per-rank traces.

`detect` claims a JSON object with a `traceEvents` array and a mark only Kineto writes (kineto.yaml), and a
folder holding such files; `members` lists a folder's traces in rank order (distributedInfo.rank, else the
file name), each analysed on its own; `load` reads one trace into one profile whose `trace` holds the tables
of advisor/kinds/torch/tables.py. A trace up to half of --max-memory (inflated, for gzip) is decoded in memory,
a larger one streamed: the same tables either way.

Bad input raises only AdvisorError, in one line. Events without a usable time are left out and counted
(`trace.extra["skipped"]`: events per table), as are entries that are not events (`extra["malformed"]`) and
complete events of categories no table takes (`extra["other"]`, by category).
"""

from __future__ import annotations

import zlib
from pathlib import Path
from typing import Any

from advisor.core.collector import collector_paused
from advisor.core.errors import AdvisorError
from advisor.core.model import Profile
from advisor.inputs.folders import MAX_LISTED, listing
from advisor.inputs.limits import depth_refusal
from advisor.inputs.text import file_errors, open_regular, read_bytes, read_head, require_regular_file
from advisor.kinds.base import DEFAULT_MAX_RANKS, LoadOptions, check_rank_count
from advisor.kinds.torch.adapters import sniff
from advisor.kinds.torch.adapters.build import build
from advisor.kinds.torch.adapters.profile import profile
from advisor.kinds.torch.adapters.reader import Collected

ENDINGS = (".json", ".json.gz")  # a folder's traces (torch.profiler writes *.pt.trace.json[.gz])
INFLATE_STEP = 1 << 16  # compressed bytes inflated at a time


def detect(path: Path, head: bytes) -> bool:
    if path.is_dir():  # the folder's traces are checked one by one when it is read (`members`)
        return any(sniff.is_kineto_file(p) for p in _listing(path)[:8])
    return sniff.is_kineto(head)


def _listing(folder: Path, limit: int = MAX_LISTED) -> list[Path]:
    """The folder's files named like traces, in natural order; refused past `limit` entries."""
    return listing(folder, lambda name: name.lower().endswith(ENDINGS), limit)


def _rank(path: Path, text: str) -> int | None:
    from advisor.kinds.torch.adapters.profile import _whole

    info = sniff.leading_members(text).get("distributedInfo")
    rank = _whole(info.get("rank")) if isinstance(info, dict) else None
    return rank if rank is not None else sniff.rank_from_name(path.name)


def members(folder: Path, limit: int = DEFAULT_MAX_RANKS) -> list[tuple[str, Path]] | None:
    """The folder's Kineto traces as (`rank <r>` or the file name, path): ranked ones in rank order, then the
    others in natural order; None for a file. More than `limit` trace-named files is refused before any is
    read; a rank twice is an error, and so is a file named for a rank that is not a Kineto trace (a failed
    capture would otherwise drop out of the ranks unseen)."""
    if not folder.is_dir():
        return None
    files = _listing(folder)
    check_rank_count(folder, len(files), limit)
    ranked: dict[int, Path] = {}
    unranked: list[Path] = []
    bad: list[Path] = []
    for path in files:
        text = sniff.head_text(path)
        if not sniff.is_kineto(text.encode("utf-8", "surrogatepass")):
            if sniff.rank_from_name(path.name) is not None:
                bad.append(path)
            continue
        rank = _rank(path, text)
        if rank is None:
            unranked.append(path)
        elif rank in ranked:
            raise AdvisorError(str(folder), f"rank {rank} twice: {ranked[rank].name} and {path.name}")
        else:
            ranked[rank] = path
    if bad and (ranked or unranked):
        raise AdvisorError(str(bad[0]), f"not a Kineto trace, though named for a rank; {len(bad):,} of "
                                        f"{len(bad) + len(ranked) + len(unranked):,} rank files in {folder} "
                                        "cannot be read")
    return [(f"rank {r}", ranked[r]) for r in sorted(ranked)] + [(p.name, p) for p in unranked]


def _inflate(path: Path, limit: int) -> bytearray | None:
    """A gzip file's inflated bytes, or None past `limit` bytes (it is then streamed). Read INFLATE_STEP
    compressed bytes at a time: deflate inflates at most ~1,000×, so a gzip bomb overshoots the limit by
    tens of MiB at most."""
    out = bytearray()
    inflater = zlib.decompressobj(31)
    with open_regular(path) as handle, file_errors(path):
        while chunk := handle.read(INFLATE_STEP):
            pending = chunk
            while pending:
                if inflater.eof:  # concatenated gzip members: the next one starts after the last
                    if not pending.strip(b"\x00"):
                        break
                    inflater = zlib.decompressobj(31)
                try:
                    out += inflater.decompress(pending)
                except zlib.error as exc:
                    raise AdvisorError(str(path), f"not a readable gzip file: {exc}") from None
                if len(out) > limit:
                    return None
                pending = inflater.unused_data if inflater.eof else b""
    if not inflater.eof:
        raise AdvisorError(str(path), "truncated gzip file: the compressed data ends before its end marker")
    return out  # decoded as it is: a bytes copy would double the peak


def _read(path: Path, options: LoadOptions, gz: bool) -> tuple[Collected, dict[str, Any]] | None:
    """The trace decoded in memory, or None when it is larger than half of --max-memory (streamed instead)."""
    from advisor.kinds.torch.adapters.memory import decode

    limit = options.max_memory // 2
    if gz:
        data = _inflate(path, limit)
    else:
        data = None if path.stat().st_size > limit else read_bytes(path, limit, "size limit for a trace read whole")
    if data is None:
        return None
    if not data or data.isspace():  # (strip() would copy the file)
        raise AdvisorError(str(path), "file is empty" if not gz else "the gzip file holds no text")
    return decode(data, str(path), options.progress)


def load(path: Path, options: LoadOptions) -> list[Profile]:
    """The trace's one profile (a folder's traces are analysed one by one: see `members`)."""
    from advisor.kinds.torch.adapters.memory import stream

    if path.is_dir():
        raise AdvisorError(str(path), "no Kineto trace (*.json, *.json.gz with traceEvents) in this folder")
    require_regular_file(path)
    gz = read_head(path, 2) == sniff.GZIP_MAGIC
    try:
        with collector_paused():  # many small objects per batch: the collector would rescan them all
            read = _read(path, options, gz) or stream(path, gz, options.progress)
    except RecursionError:
        raise AdvisorError(str(path), depth_refusal()) from None
    found, members_ = read
    return [profile(path, members_, build(found), found, gz)]
