"""The torch kind's inputs: PyTorch-profiler traces (Kineto's Chrome-trace JSON, plain or gzip), recognised by
content, and folders of per-rank traces.

`detect` claims a JSON object with a `traceEvents` array and a mark only Kineto writes (kineto.yaml), and a
folder holding such files; it claims a PyTorch execution trace too, which `load` names and refuses in one line
with what to pass instead (a folder's execution traces beside its Kineto traces are left out). `members` lists a
folder's traces in rank order (distributedInfo.rank, else the file name), each analysed on its own; `load` reads
one trace into one profile whose `trace` holds the tables of advisor/profilers/torch/tables.py, read in one forward
pass whatever its size (stream.py).

Bad input raises only AdvisorError, in one line. Events without a usable time are left out and counted
(`trace.extra["skipped"]`: events per table), as are entries that are not events (`extra["malformed"]`) and
complete events of categories no table takes (`extra["other"]`, by category).
"""

from __future__ import annotations

from pathlib import Path

from advisor.core.collector import collector_paused
from advisor.core.errors import AdvisorError
from advisor.core.model import Profile
from advisor.inputs.folders import MAX_LISTED, listing
from advisor.inputs.limits import depth_refusal
from advisor.inputs.text import read_head, require_regular_file
from advisor.kinds.base import DEFAULT_MAX_RANKS, LoadOptions, check_rank_count
from advisor.profilers.torch.adapters import sniff
from advisor.profilers.torch.adapters.build import build
from advisor.profilers.torch.adapters.profile import profile

ENDINGS = (".json", ".json.gz")  # a folder's traces (torch.profiler writes *.pt.trace.json[.gz])


ET_REFUSAL = ("a PyTorch execution trace (Chakra ET, schema {schema}), not a profiler trace: it lists the operators "
              "a run executed and their tensors, with no times; pass the torch.profiler (Kineto) trace of the same "
              "run instead (*.pt.trace.json[.gz], from tensorboard_trace_handler or export_chrome_trace)")


def detect(path: Path, head: bytes) -> bool:
    if path.is_dir():  # the folder's traces are checked one by one when it is read (`members`)
        return any(sniff.is_kineto_file(p) for p in _listing(path)[:8])
    return sniff.is_kineto(head) or sniff.execution_schema(head) is not None  # the latter to be named


def _listing(folder: Path, limit: int = MAX_LISTED) -> list[Path]:
    """The folder's files named like traces, in natural order; refused past `limit` entries."""
    return listing(folder, lambda name: name.lower().endswith(ENDINGS), limit)


def _rank(path: Path, text: str) -> int | None:
    from advisor.profilers.torch.adapters.profile import _whole

    info = sniff.leading_members(text).get("distributedInfo")
    rank = _whole(info.get("rank")) if isinstance(info, dict) else None
    return rank if rank is not None else sniff.rank_from_name(path.name)


def members(folder: Path, limit: int = DEFAULT_MAX_RANKS) -> list[tuple[str, Path]] | None:
    """The folder's Kineto traces as (`rank <r>` or the file name, path): ranked ones in rank order, then the
    others in natural order; None for a file. More than `limit` traces (or files named for a rank) is refused
    before any is analysed, other JSON files in the folder not counted (telling them apart reads a head each); a
    rank twice is an error, and so is a file named for a rank that is not a Kineto trace (a failed
    capture would otherwise drop out of the ranks unseen)."""
    if not folder.is_dir():
        return None
    ranked: dict[int, Path] = {}
    unranked: list[Path] = []
    bad: list[Path] = []
    for path in _listing(folder):  # only traces and files named for a rank count (a head read each), to the limit
        if len(ranked) + len(unranked) + len(bad) > limit:
            check_rank_count(folder, limit + 1, limit, at_least=True)
        text = sniff.head_text(path)
        head = text.encode("utf-8", "surrogatepass")
        if not sniff.is_kineto(head):
            if sniff.rank_from_name(path.name) is not None and sniff.execution_schema(head) is None:
                bad.append(path)
            continue
        rank = _rank(path, text)
        if rank is None:
            unranked.append(path)
        elif rank in ranked:
            raise AdvisorError(str(folder), f"rank {rank} twice: {ranked[rank].name} and {path.name}")
        else:
            ranked[rank] = path
    check_rank_count(folder, len(ranked) + len(unranked) + len(bad), limit)
    if bad and (ranked or unranked):
        raise AdvisorError(str(bad[0]), f"not a Kineto trace, though named for a rank; {len(bad):,} of "
                                        f"{len(bad) + len(ranked) + len(unranked):,} rank files in {folder} "
                                        "cannot be read")
    return [(f"rank {r}", ranked[r]) for r in sorted(ranked)] + [(p.name, p) for p in unranked]


def load(path: Path, options: LoadOptions) -> list[Profile]:
    """The trace's one profile (a folder's traces are analysed one by one: see `members`)."""
    from advisor.profilers.torch.adapters.stream import read

    if path.is_dir():
        raise AdvisorError(str(path), "no Kineto trace (*.json, *.json.gz with traceEvents) in this folder")
    require_regular_file(path)
    head = read_head(path, sniff.SNIFF_INFLATED)
    if not sniff.is_kineto(head) and (schema := sniff.execution_schema(head)) is not None:
        raise AdvisorError(str(path), ET_REFUSAL.format(schema=schema))
    gz = head[:2] == sniff.GZIP_MAGIC
    try:
        with collector_paused():  # many small objects per batch: the collector would rescan them all
            found, members_ = read(path, gz, options.max_memory, options.progress)
    except RecursionError:  # msgspec's own depth guard, on a value it skips or decodes as Any
        raise AdvisorError(str(path), depth_refusal(None)) from None
    return [profile(path, members_, build(found), found, gz)]
