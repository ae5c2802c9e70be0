"""The Neuron kind's inputs: the format is decided by content (the extension only marks an NTFF).

`detect` claims an input from its first bytes or a folder's names; `load` reads every profile in it;
`members` lists the per-rank files of a multi-worker capture folder, each analysed on its own.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Any

from advisor.core.errors import AdvisorError
from advisor.core.events import EventTrace
from advisor.core.model import Profile, SourceInfo
from advisor.core.units import bytes_
from advisor.inputs.limits import TextLimits, whole_trace_limit
from advisor.inputs.text import decode, decode_head, open_regular, read_bytes, require_regular_file, size_refusal
from advisor.kinds.base import DEFAULT_MAX_RANKS, LoadOptions, check_rank_count
from advisor.kinds.conventions import conventions, has_profile_metrics, has_usable_metric, no_usable_metric, normalise
from advisor.profilers.neuron import KIND
from advisor.profilers.neuron.adapters import legacy_json, ntff, parquet, summary_json, summary_text
from advisor.profilers.neuron.adapters.bounds import check_entry_count, check_field_count
from advisor.profilers.neuron.tables import DMA, INSTRUCTION

JSON_KEY = re.compile(r'"([A-Za-z_][A-Za-z0-9_]*)"\s*:')
RANK_FILE = re.compile(r"^profile_rank_(\d{1,9})\.(json|txt|ntff)$")  # multi-worker captures: one file per rank
INPUT_PATTERNS = {"neuron JSON key": (JSON_KEY, ('"a', '"a"', " ", ":")),
                  "neuron rank file": (RANK_FILE, ("profile_rank_", "1", ".json"))}


def detect(path: Path, head: bytes) -> bool:
    """An .ntff, an Explorer output folder, a folder of per-rank files, a full JSON trace, or the text
    of a summary-json or summary-text."""
    if path.is_dir():
        return parquet.has_tables(path) or bool(members(path))
    if ntff.sniff_name(path) or legacy_json.sniff(head):
        return True
    text = decode_head(head)
    if text is None:
        return False
    if summary_json.sniff(text):  # JSON is every profiler's: Neuron's names a field only Neuron writes early on
        # each distinct key once: a Chrome trace's megabyte repeats a few keys tens of thousands of times
        return any(conventions(KIND).is_identifying_field(key) for key in set(JSON_KEY.findall(text)))
    return summary_text.sniff(text)


def members(folder: Path, limit: int = DEFAULT_MAX_RANKS) -> list[tuple[str, Path]]:
    """`profile_rank_<i>.*` files as (`rank <i>`, path), in rank order; a rank twice is an error, and more
    than `limit` of them too."""
    try:
        names = sorted(folder.iterdir()) if folder.is_dir() else []
    except OSError as exc:
        raise AdvisorError(str(folder), exc.strerror or str(exc)) from None
    ranks = sorted((int(m.group(1)), p) for p in names if (m := RANK_FILE.match(p.name)) and p.is_file())
    check_rank_count(folder, len(ranks), limit)
    seen: dict[int, Path] = {}
    for rank, path in ranks:
        if rank in seen:
            raise AdvisorError(str(folder), f"rank {rank} twice: {seen[rank].name} and {path.name}")
        seen[rank] = path
    return [(f"rank {rank}", path) for rank, path in ranks]


def load(path: Path, options: LoadOptions) -> list[Profile]:
    """Every profile in the input, in file order."""
    if path.is_dir() and not parquet.is_explorer_dir(path):
        raise AdvisorError(str(path), "Parquet tables but no Summary.parquet: a Neuron Explorer output folder "
                                      "needs its Summary table")
    return load_profiles(path, options)


def _parse_text(text: str, where: str, limits: TextLimits) -> tuple[str, str, list[tuple[str, dict[str, Any]]]]:
    if summary_json.sniff(text):
        return (summary_json.NAME, *summary_json.parse(text, where))
    if summary_text.sniff(text):
        limits.check_lines(text, where)
        return (summary_text.NAME, *summary_text.parse(text, where, conventions(KIND)))
    raise AdvisorError(where, "unknown format: expected Neuron summary-json, summary-text or an .ntff capture")


def load_profiles(path: Path, options: LoadOptions | None = None) -> list[Profile]:
    """Every profile in the file, in file order."""
    options = options or LoadOptions()
    where = str(path)
    limits = TextLimits.for_memory(options.max_memory)
    converted_with = None
    if options.option("trace") and not ntff.sniff_name(path):
        raise AdvisorError(where, "--trace converts an .ntff capture; this input is read as it is (a summary has "
                                  "no events: capture the full trace with `neuron-profile view … --output-format "
                                  "json`)")
    if parquet.is_explorer_dir(path):
        return [_trace_profile(path, parquet.load(path, options.progress), parquet.NAME)]
    if ntff.sniff_name(path):
        require_regular_file(path)  # neuron-profile would block on a FIFO until its 30-minute timeout
        if options.option("trace"):
            return [_ntff_trace(path, options)]
        conversion = ntff.convert(path, options.option("neuron_profile"), options.option("neff"))
        converted_with = " ".join(conversion.command)
        fmt, (shape, entries) = ntff.NAME, summary_json.parse(conversion.stdout, where)
    else:
        streamed = _stream_if_large(path, options)
        if streamed is not None:
            return [streamed]
        data = read_bytes(path, max(limits.max_bytes, whole_trace_limit(options.max_memory)),
                          "size limit for a trace read whole")
        if not data.strip():
            raise AdvisorError(where, "file is empty")
        if legacy_json.sniff(data[:legacy_json.SNIFF_BYTES]):
            trace = legacy_json.decode(data, where, options.progress)
            if len(trace.tables[INSTRUCTION]) or len(trace.tables[DMA]):
                return [_trace_profile(path, trace, legacy_json.NAME, READ_WHOLE)]
        elif len(data) > limits.max_bytes:
            raise AdvisorError(where, size_refusal(len(data), limits.max_bytes, "size limit for a summary"))
        text = decode(data)
        if text is None:
            raise AdvisorError(where, "binary data, not a Neuron summary (an .ntff capture needs the .ntff extension)")
        fmt, shape, entries = _parse_text(text, where, limits)
    return _summary_profiles(entries, SourceInfo(path=where, format=fmt, shape=shape, converted_with=converted_with))


def _summary_profiles(entries: list[tuple[str, dict[str, Any]]], file: SourceInfo) -> list[Profile]:
    """A profile per summary entry with a usable Neuron metric, in file order (`file`: the source each names,
    completed with its entry); none is an error, naming what the entries had instead."""
    where, conv = file.path, conventions(KIND)
    check_entry_count(entries, where)
    profiles: list[Profile] = []
    unusable: list[dict[str, Any]] = []
    names = tuple(n for n, _ in entries) if len(entries) > 1 else ()  # one tuple shared: a copy each is quadratic
    for name, raw in entries:
        check_field_count(raw, where)
        fields = normalise(raw, conv)
        if not has_profile_metrics(fields.values, conv):
            continue
        if not has_usable_metric(fields.values, conv):
            unusable.append(raw)  # names metrics but measures none ("fast", "n/a"): not a profile
            continue
        source = replace(file, entry=name if len(entries) > 1 else None, entries=names)
        profiles.append(Profile(source=source, values=fields.values, info=fields.info, notes=fields.notes,
                                units=fields.units, raw_names=fields.raw_names, kind=KIND.name))
    if not profiles and unusable:
        raise AdvisorError(where, no_usable_metric(unusable, conv))
    if not profiles:
        raise AdvisorError(where, "no Neuron profile metrics in it (expected fields such as total_time or "
                                  "hbm_read_bytes)")
    return profiles


def _stream_if_large(path: Path, options: LoadOptions) -> Profile | None:
    """A full trace larger than half the memory budget is streamed, never read whole."""
    try:
        if not path.is_file() or path.stat().st_size <= whole_trace_limit(options.max_memory):
            return None
        with open_regular(path) as handle:
            head = handle.read(legacy_json.SNIFF_BYTES)
    except (OSError, AdvisorError):
        return None  # the ordinary path reports it
    if not legacy_json.sniff(head):
        return None
    trace = legacy_json.stream(path, options.max_memory, options.progress)
    if not (len(trace.tables[INSTRUCTION]) or len(trace.tables[DMA])):
        return None  # no events: read as a summary, as the in-memory path does
    return _trace_profile(path, trace, legacy_json.NAME, streamed(path.stat().st_size, options.max_memory))


def _ntff_trace(path: Path, options: LoadOptions) -> Profile:
    """An NTFF converted to its full event trace in a temporary folder, read, and the folder removed."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="advisor-ntff-") as folder:
        conversion = ntff.convert(path, options.option("neuron_profile"), options.option("neff"), Path(folder))
        assert conversion.output is not None
        without_trace = {k: v for k, v in options.kind_options.items() if k != "trace"}
        profile = load_profiles(conversion.output, replace(options, kind_options=without_trace))[0]
    source = replace(profile.source, path=str(path), format=ntff.NAME, converted_with=" ".join(conversion.command))
    return replace(profile, source=source)


READ_WHOLE = "read whole in memory"


def streamed(size: int, max_memory: int) -> str:
    """How a trace over half the budget was read, for the setup table (the only place the budget shows)."""
    return f"streamed: {size / 2**20:,.1f} MiB is over half of the --max-memory budget of {bytes_(max_memory)}"


def _trace_profile(path: Path, trace: EventTrace, fmt: str, read: str = "") -> Profile:
    """The profile of a full trace; `read` says which way the file was read, when there are two."""
    conv = conventions(KIND)
    check_field_count(trace.summary, str(path))
    fields = normalise(trace.summary, conv)
    if not has_profile_metrics(fields.values, conv):
        raise AdvisorError(str(path), "the trace has events but no summary metrics")
    shape = f"full trace: {len(trace.tables[INSTRUCTION]):,} instructions, {len(trace.tables[DMA]):,} DMA transfers"
    shape += f"; {read}" if read else ""
    source = SourceInfo(path=str(path), format=fmt, shape=shape)
    return Profile(source=source, values=fields.values, info=fields.info, notes=fields.notes, trace=trace,
                   units=fields.units, raw_names=fields.raw_names, kind=KIND.name)
