"""Resolved slices to the event trace and profile the rest of advisor reads (the shared contract):
one EventTable per category, times in ns from the first slice, names and tracks as codes numbered
in order of first appearance (codes.py: the tables do not depend on how the file was split for decoding),
transfer bytes and cycles, device and chiplet labels, global slice ids, flow edges, and what could
not be read as sentences in `warnings` and the profile's notes.

Held compactly (a 500 MB trace has 3.3 million slices): the tables are views of one copy of each column
(`extra["columns"]`, which the event analysis sorts in place and puts back), ids and codes in the narrowest
integers that hold them, names compressed (inputs/perfetto/names.py), bytes and cycles kept only for the
tables that carry them (None elsewhere).
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from advisor.core.errors import AdvisorError
from advisor.core.events import NS, Codes, EventTable, EventTrace, Kept, int32_if_fits
from advisor.core.model import Profile, SourceInfo
from advisor.core.units import plural
from advisor.inputs.perfetto.flows import flow_edges
from advisor.inputs.perfetto.names import NameTable
from advisor.inputs.perfetto.reader import ReadResult
from advisor.inputs.perfetto.resolve import Resolved
from advisor.inputs.perfetto.rows import OPEN
from advisor.profilers.rbln import knowledge
from advisor.profilers.rbln.adapters import tracks as track_rules
from advisor.profilers.rbln.adapters.codes import label_codes, name_codes
from advisor.profilers.rbln.adapters.quality import ReadQuality, TrackInfo
from advisor.profilers.rbln.heap import release_heap

FORMAT, GZIP_FORMAT = "perfetto-pb", "perfetto-pb.gz"
NAME_SAMPLE = 20_000  # names tested for the v0.12 prefixes: enough for the majority, cheap on any file
V012, CLASSIC = "v0.12 (i/W prefixes)", "{seq}_{layer}_{cmd}"


def _name_format(names: Sequence[str], codes: Any) -> str:
    data = knowledge.names_data()
    try:
        pattern = re.compile(str(data.get("pattern") or ""))
    except re.error:
        return CLASSIC
    majority = float(data.get("workload_majority") or 0.5)
    step = max(1, len(codes) // NAME_SAMPLE)
    sample = [names[int(c)] for c in codes[::step]]
    matches = [m for m in map(pattern.match, sample) if m]
    if not matches or "wl" not in pattern.groupindex:
        return CLASSIC
    with_prefix = sum(1 for m in matches if m.group("wl") is not None
                      or ("inst" in pattern.groupindex and m.group("inst") is not None))
    return V012 if with_prefix >= majority * len(sample) else CLASSIC


def _sentences(r: Resolved, result: ReadResult, unclosed: int, unknown: tuple[str, ...], known_slices: int,
               backwards: int = 0) -> list[str]:
    out = []
    if result.gzip_note:
        out.append(result.gzip_note)
    if result.problem is not None:
        out.append(result.problem.sentence())
    if unclosed:
        out.append(f"{plural(unclosed, 'slice')} began and never ended: left out")
    if backwards:
        out.append(f"{plural(backwards, 'slice')} ended before they began: their durations are unavailable")
    if r.unmatched_ends:
        out.append(f"{plural(r.unmatched_ends, 'END event')} had no open slice on their track: ignored")
    if r.dropped:
        out.append(f"{plural(r.dropped, 'packet')} needed interned data their sequence does not have (never "
                   "cleared, or an unknown id): dropped, as Perfetto does")
    if r.skipped:
        out.append(f"{plural(r.skipped, 'packet')} could not be decoded: skipped")
    if r.unknown_clocks:
        clocks = ", ".join(str(c) for c in sorted(r.unknown_clocks))
        out.append(f"timestamps on clock {clocks}, which no clock snapshot defines: read as ns")
    if not known_slices:
        out.append("no RBLN command tracks were found: no track name matches a category of tracks.yaml (Host, "
                   "Neural Engine Clusters, Neural DMA, …), so every slice is in category other")
    elif unknown:
        shown = ", ".join(unknown[:8]) + (f" and {len(unknown) - 8} more" if len(unknown) > 8 else "")
        out.append(f"tracks no category pattern matches: {shown} (category other)")
    return out


def _clock_note(r: Resolved) -> str:
    if not r.clocks_used:
        return ""
    parts = []
    for clock, incremental, multiplier in sorted(r.clocks_used):
        unit = f"{multiplier:,} ns units" if multiplier != 1 else "ns"
        parts.append(f"clock {clock} ({'delta-encoded, ' if incremental else ''}{unit})")
    return f"timestamps on {', '.join(parts)}: converted to ns"


def _as_float(values: Any) -> Any:
    """An int64 array turned into float64 in its own buffer (as `values.astype(float64)`, without a
    second array of its size), a block at a time."""
    import numpy as np

    out = values.view(np.float64)
    step = 1 << 16
    for a in range(0, len(values), step):
        out[a:a + step] = values[a:a + step].astype(np.float64)  # the block read before it is overwritten
    return out


def _columns(r: Resolved, order_by: Any) -> dict[str, Any]:
    """The per-slice columns in table order, each made from the reader's arrays and those arrays let go
    of at once (the build holds one extra column at a time, not a second copy of the trace)."""
    import numpy as np

    release_heap()  # what the reader freed (its ranges' rows), before the largest temporaries
    names = name_codes(np.frombuffer(r.name, dtype=np.int32), r.names)  # shared by the tables
    r.name, r.names = array("i"), NameTable()
    out: dict[str, Any] = {"name": Codes(names.codes[order_by], names.names)}
    del names
    start = np.frombuffer(r.start, dtype=np.int64)
    t0 = int(start.min())
    last = int(start.max())
    end = np.frombuffer(r.end, dtype=np.int64)
    closed = end != OPEN
    unclosed = int(len(closed) - closed.sum())
    if unclosed < len(closed):
        last = max(int(end[closed].max()), last)
    out.update(t0=t0, last=last, unclosed=unclosed)
    del closed
    begin = _as_float(start[order_by])  # float64(start), as np.subtract(start, t0, dtype=float64) reads it
    del start
    r.start = array("q")
    finish = end[order_by]
    del end
    r.end = array("q")
    open_ = finish == OPEN
    duration = _as_float(finish)
    del finish
    duration -= begin  # np.subtract(end, start, dtype=float64)
    duration[open_] = np.nan
    del open_
    backwards = duration < 0  # an END stamped before its BEGIN (clock damage): no duration, not a negative one
    out["backwards"] = int(backwards.sum())
    duration[backwards] = np.nan
    del backwards
    begin -= float(t0)
    out["start"], out["duration"] = begin, duration
    for key in ("bytes", "cycles"):
        out[key] = np.frombuffer(getattr(r, key), dtype=np.float64)[order_by]  # kept in part: `_carried`
        setattr(r, key, array("d"))
    release_heap()
    return out


def _carried(values: Any, bounds: Any) -> Kept:
    """A per-slice column in table order (NaN where a slice has no value) kept only from the first to the
    last table that has a value, and where that part starts: the tables outside it carry none (None)."""
    import numpy as np

    known = ~np.isnan(values)
    if not known.any():
        return Kept(values[:0].copy(), 0)
    first, last = int(np.argmax(known)), len(known) - 1 - int(np.argmax(known[::-1]))
    lo = int(bounds[np.searchsorted(bounds, first, side="right") - 1])
    hi = int(bounds[np.searchsorted(bounds, last, side="right")])
    return Kept(values[lo:hi].copy(), lo)


@dataclass(frozen=True)
class _Layout:
    """The tracks resolved and the slices put in table order (by category, stable): every column is taken in
    `order_by`'s order, and each table is a consecutive run of rows (`bounds`)."""

    tracks: list[track_rules.Resolved]  # per track code
    categories: list[str]  # the tables, in order (knowledge.OTHER last)
    category_of_track: Any  # int32: per track code, its category's index
    counts: Any  # per track code, its slices
    track: Any  # per row, its track code
    order_by: Any  # per row, the slice's id (file order): int32 below 2**31 slices
    bounds: Any  # per category, its first row; then the rows' end


def _refusal(path: Path, result: ReadResult) -> AdvisorError:
    """The error for a trace without a single slice: not a Perfetto trace, or one with nothing to analyse."""
    r = result.resolved
    if r.packets == 0 or (r.skipped == r.packets and result.problem is not None):
        what = result.problem.sentence() if result.problem is not None else "no packet decoded"
        if result.gzip_note:
            what = f"{result.gzip_note}; {what}"
        return AdvisorError(str(path), f"not a Perfetto trace: {what}")
    return AdvisorError(str(path), f"a Perfetto trace without slices ({plural(r.packets, 'packet')}, "
                                   f"{plural(r.instants, 'instant event')}): nothing to analyse")


def _layout(r: Resolved) -> _Layout:
    """The tracks' categories (tracks.yaml) and the slices' table order; the reader's track column let go of."""
    import numpy as np

    rules = knowledge.track_rules()
    resolved = track_rules.resolve(r.track_keys, r.tracks, r.processes, r.threads, rules)
    order = [*(key for key, _ in rules.categories), knowledge.OTHER]
    category_of_track = np.array([order.index(t.category) for t in resolved], dtype=np.int32)
    track = np.frombuffer(r.track, dtype=np.int32)
    counts = np.bincount(track, minlength=len(resolved))
    category = category_of_track[track]
    order_by = int32_if_fits(np.argsort(category, kind="stable"))
    bounds = np.searchsorted(category, np.arange(len(order) + 1), sorter=order_by)
    del category
    track = track[order_by]
    r.track = array("i")
    return _Layout(resolved, order, category_of_track, counts, track, order_by, bounds)


def _flows(r: Resolved) -> tuple[Any, Any]:
    """The flow edges (from, to: slice ids); the reader's flow arrays let go of."""
    import numpy as np

    froms, tos = flow_edges(np.frombuffer(r.flow_slices, dtype=np.int64) if len(r.flow_slices) else [],
                            np.frombuffer(r.flow_ids, dtype=np.uint64) if len(r.flow_ids) else [],
                            np.frombuffer(r.flow_ends, dtype=np.uint8) if len(r.flow_ends) else [])
    froms, tos = int32_if_fits(froms), int32_if_fits(tos)
    r.flow_slices, r.flow_ids, r.flow_ends = array("q"), array("Q"), array("B")
    return froms, tos


def _tables(layout: _Layout, cols: dict[str, Any], carried: dict[str, Kept]) -> dict[str, EventTable]:
    """One table per category with slices: consecutive views of the columns, in table order, so the event
    analysis may sort them in place (and put them back) instead of copying every column (profilers/rbln/slices.py
    `borrow`)."""
    names: Codes = cols["name"]
    paths = [t.path for t in layout.tracks]
    devices = [t.device for t in layout.tracks]
    chiplets = [t.chiplet for t in layout.tracks]
    tables: dict[str, EventTable] = {}
    for c, key in enumerate(layout.categories):
        a, b = int(layout.bounds[c]), int(layout.bounds[c + 1])
        if a == b:
            continue
        tr = layout.track[a:b]
        tables[key] = EventTable(
            start=cols["start"][a:b], duration=cols["duration"][a:b], track=label_codes(tr, paths),
            name=Codes(names.codes[a:b], names.names), bytes=carried["bytes"].of_table(a, b),
            extra={"cycles": carried["cycles"].of_table(a, b), "device": label_codes(tr, devices),
                   "chiplet": label_codes(tr, chiplets), "id": layout.order_by[a:b]})
    return tables


def _track_infos(layout: _Layout) -> tuple[TrackInfo, ...]:
    """One row per display path (tracks of one path merged), in order of the tracks' first slice."""
    seen: dict[str, list[Any]] = {}
    for i, t in enumerate(layout.tracks):
        entry = seen.setdefault(t.path, [t.category, t.device, t.chiplet, 0])
        entry[3] += int(layout.counts[i])
    return tuple(TrackInfo(path, *entry) for path, entry in seen.items())


def _devices(layout: _Layout) -> tuple[set[str], set[tuple[str, str]]]:
    """The devices (those with slices on device tracks; without any, those with slices at all) and the
    (device, chiplet) units with slices."""
    import numpy as np

    device_keys = {c.key for c in knowledge.categories() if c.device}
    device_cats = [i for i, key in enumerate(layout.categories) if key in device_keys]
    devices, chiplets = [t.device for t in layout.tracks], [t.chiplet for t in layout.tracks]
    used = layout.counts > 0
    on_device = np.isin(layout.category_of_track, device_cats) & used
    labels = {devices[i] for i in np.flatnonzero(on_device if on_device.any() else used)}
    units = {(devices[i], chiplets[i]) for i in np.flatnonzero(used) if chiplets[i]}
    return labels, units


def build(path: Path, result: ReadResult) -> Profile:
    """The profile of one trace (the reader's arrays are consumed). A trace with no slice at all is an
    error (nothing to analyse); one whose slices are all on tracks no category matches is a profile whose
    notes say so."""
    from google.protobuf.internal import api_implementation

    r = result.resolved
    n = len(r.start)
    if n == 0:
        raise _refusal(path, result)
    layout = _layout(r)
    froms, tos = _flows(r)
    cols = _columns(r, layout.order_by)
    names = cols["name"]
    # Bytes and cycles are kept only for the tables that carry them (transfers, Neural Engine commands); a
    # table outside has None.
    carried = {key: _carried(cols.pop(key), layout.bounds) for key in ("bytes", "cycles")}
    tables = _tables(layout, cols, carried)
    shared = {"start": cols["start"], "duration": cols["duration"], "name": names.codes, "ident": layout.order_by,
              **carried}
    track_infos = _track_infos(layout)
    unknown = tuple(t.name for t in track_infos if t.category == knowledge.OTHER)
    known_slices = int(layout.bounds[layout.categories.index(knowledge.OTHER)])
    clock_note = _clock_note(r)
    warnings = tuple(_sentences(r, result, cols["unclosed"], unknown, known_slices, cols["backwards"]))
    device_labels, units = _devices(layout)
    rebel_only = set(knowledge.tracks_data().get("rebel100_categories") or ())
    generation = "Rebel100" if units or rebel_only & set(tables) else "ATOM"
    backend = api_implementation.Type()
    quality = ReadQuality(
        packets=r.packets, slices=n, instants=r.instants, unclosed_begins=cols["unclosed"],
        unmatched_ends=r.unmatched_ends, dropped_packets=r.dropped, unknown_tracks=unknown,
        truncated=result.problem is not None or bool(result.gzip_note),
        truncated_at=result.problem.offset if result.problem is not None else None, gzip=result.gzip,
        compressed_packets=r.compressed, skipped_packets=r.skipped, clock_note=clock_note)
    metadata = {"generation": generation, "devices": len(device_labels), "protobuf_backend": backend}
    trace = EventTrace(tables=tables, summary={}, metadata=metadata, warnings=warnings,
                       extra={"flows": (froms, tos), "quality": quality, "tracks": track_infos, "columns": shared})
    notes = [*warnings, *([clock_note] if clock_note else [])]  # a conversion is noted, not a data problem
    if backend == "python":
        notes.append("the protobuf runtime here is the pure-Python one, 10–40× slower than the upb wheel: "
                     "`pip install --force-reinstall protobuf` for speed")
    info = {"generation": generation, "devices": str(len(device_labels)), "chiplets": str(len(units)),
            "name_format": _name_format(names.names, names.codes[:known_slices] if known_slices else names.codes)}
    shape = (f"Perfetto trace: {plural(n, 'slice')} on {plural(len(track_infos), 'track')}, "
             f"{plural(len(device_labels), 'device')}")
    source = SourceInfo(path=str(path), format=GZIP_FORMAT if result.gzip else FORMAT, shape=shape)
    return Profile(source=source, values={"total_time": (cols["last"] - cols["t0"]) * NS}, info=info,
                   notes=tuple(notes), trace=trace, units={"total_time": "s"}, kind="rbln")
