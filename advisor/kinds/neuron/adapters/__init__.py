"""Input adapters: the format is decided by content (the extension only breaks ties for NTFF)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from advisor.core.errors import AdvisorError
from advisor.core.model import Profile, SourceInfo
from advisor.inputs.text import MAX_SUMMARY_BYTES, decode, read_bytes
from advisor.kinds.conventions import has_profile_metrics, normalise
from advisor.kinds.neuron.adapters import legacy_json, ntff, parquet, summary_json, summary_text
from advisor.kinds.neuron.adapters.columns import Progress, Trace

DEFAULT_MAX_MEMORY = 2 << 30  # bytes; a trace decoded in memory peaks at about 1.5× its size


@dataclass(frozen=True)
class LoadOptions:
    neuron_profile: str | None = None  # path of neuron-profile / neuron-explorer for .ntff
    neff: str | None = None
    entry: str | None = None  # which entry of a multi-profile summary-json
    max_memory: int = DEFAULT_MAX_MEMORY  # full traces above half of it are streamed instead of loaded whole
    progress: Progress | None = None  # progress lines for long trace ingests (a terminal is watching)
    trace: bool = False  # for an .ntff: convert the full event trace, not the summary


def _parse_text(text: str, where: str) -> tuple[str, str, list[tuple[str, dict[str, Any]]]]:
    if summary_json.sniff(text):
        return (summary_json.NAME, *summary_json.parse(text, where))
    if summary_text.sniff(text):
        return (summary_text.NAME, *summary_text.parse(text, where))
    raise AdvisorError(where, "unknown format: expected Neuron summary-json, summary-text or an .ntff capture")


def load_profiles(path: Path, options: LoadOptions | None = None) -> list[Profile]:
    """Every profile in the file, in file order."""
    options = options or LoadOptions()
    where = str(path)
    converted_with = None
    if options.trace and not ntff.sniff_name(path):
        raise AdvisorError(where, "--trace converts an .ntff capture; this input is read as it is (a summary has "
                                  "no events: capture the full trace with `neuron-profile view … --output-format "
                                  "json`)")
    if parquet.is_explorer_dir(path):
        return [_trace_profile(path, parquet.load(path, options.progress), parquet.NAME)]
    if ntff.sniff_name(path):
        if not path.exists():
            raise AdvisorError(where, "no such file")
        if options.trace:
            return [_ntff_trace(path, options)]
        conversion = ntff.convert(path, options.neuron_profile, options.neff)
        converted_with = " ".join(conversion.command)
        fmt, (shape, entries) = ntff.NAME, summary_json.parse(conversion.stdout, where)
    else:
        streamed = _stream_if_large(path, options)
        if streamed is not None:
            return [streamed]
        data = read_bytes(path, max(MAX_SUMMARY_BYTES, options.max_memory // 2))
        if not data.strip():
            raise AdvisorError(where, "file is empty")
        if legacy_json.sniff(data[:legacy_json.SNIFF_BYTES]):
            trace = legacy_json.decode(data, where, options.progress)
            if len(trace.instr_start) or len(trace.dma_start):
                return [_trace_profile(path, trace, legacy_json.NAME)]
        elif len(data) > MAX_SUMMARY_BYTES:
            raise AdvisorError(where, f"file is {len(data) / 2**20:.0f} MiB; too large for a profile summary")
        text = decode(data)
        if text is None:
            raise AdvisorError(where, "binary data, not a Neuron summary (an .ntff capture needs the .ntff extension)")
        fmt, shape, entries = _parse_text(text, where)

    profiles = []
    for name, raw in entries:
        fields = normalise(raw)
        if not has_profile_metrics(fields.values):
            continue
        source = SourceInfo(
            path=where, format=fmt, shape=shape, entry=name if len(entries) > 1 else None,
            entries=tuple(n for n, _ in entries) if len(entries) > 1 else (), converted_with=converted_with,
        )
        profiles.append(Profile(source=source, values=fields.values, info=fields.info, notes=fields.notes))
    if not profiles:
        raise AdvisorError(where, "no Neuron profile metrics in it (expected fields such as total_time or "
                                  "hbm_read_bytes)")
    return profiles


def _stream_if_large(path: Path, options: LoadOptions) -> Profile | None:
    """A full trace larger than half the memory budget is streamed, never read whole."""
    try:
        if not path.is_file() or path.stat().st_size <= options.max_memory // 2:
            return None
        with path.open("rb") as handle:
            head = handle.read(legacy_json.SNIFF_BYTES)
    except OSError:
        return None  # the ordinary path reports it
    if not legacy_json.sniff(head):
        return None
    trace = legacy_json.stream(path, options.progress)
    if not (len(trace.instr_start) or len(trace.dma_start)):
        return None  # no events: read as a summary, as the in-memory path does
    return _trace_profile(path, trace, legacy_json.NAME)


def _ntff_trace(path: Path, options: LoadOptions) -> Profile:
    """An NTFF converted to its full event trace in a temporary folder, read, and the folder removed."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="advisor-ntff-") as folder:
        conversion = ntff.convert(path, options.neuron_profile, options.neff, Path(folder))
        assert conversion.output is not None
        profile = load_profiles(conversion.output, replace(options, trace=False))[0]
    source = replace(profile.source, path=str(path), format=ntff.NAME, converted_with=" ".join(conversion.command))
    return replace(profile, source=source)


def _trace_profile(path: Path, trace: Trace, fmt: str) -> Profile:
    fields = normalise(trace.summary)
    if not has_profile_metrics(fields.values):
        raise AdvisorError(str(path), "the trace has events but no summary metrics")
    shape = f"full trace: {len(trace.instr_start):,} instructions, {len(trace.dma_start):,} DMA transfers"
    source = SourceInfo(path=str(path), format=fmt, shape=shape)
    return Profile(source=source, values=fields.values, info=fields.info, notes=fields.notes, trace=trace)


def choose(profiles: list[Profile], entry: str | None, where: str) -> Profile:
    """The profile to analyse: the named entry, else the one with the longest total_time (the core
    that bounds the step, as AWS's and users' scripts pick)."""
    if entry is not None:
        for profile in profiles:
            if profile.source.entry == entry:
                return profile
        if entry.isdigit() and int(entry) < len(profiles):
            return profiles[int(entry)]
        names = ", ".join(p.source.entry or "profile" for p in profiles)
        raise AdvisorError(where, f"--entry {entry}: no such entry; the file holds: {names}")
    return max(profiles, key=lambda p: (p.values.get("total_time") or 0.0, -profiles.index(p)))
