"""A read trace as the profile advisor analyses: the metadata keys of advisor/profilers/torch/tables.py (device,
vendor, rank, world size, backend, time base), the trace's own caveats as sentences, and the profile's values
and text normalised by the kind's conventions (data/conventions.yaml)."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from advisor.core.errors import AdvisorError
from advisor.core.events import NS, EventTrace
from advisor.core.model import Profile, SourceInfo
from advisor.core.units import plural
from advisor.inputs.limits import check_json_value
from advisor.kinds.conventions import conventions, normalise
from advisor.profilers.torch import KIND
from advisor.profilers.torch import tables as t
from advisor.profilers.torch.adapters.build import Built
from advisor.profilers.torch.adapters.knowledge import kineto
from advisor.profilers.torch.adapters.reader import Collected
from advisor.profilers.torch.adapters.sniff import rank_from_name

FORMAT, GZIP_FORMAT = "kineto-json", "kineto-json.gz"
MAX_WHOLE = 2**53  # an id or count past this is not one a trace writes


def _whole(value: Any) -> int | None:
    """A whole number ≥ 0 (an int, a float or text holding one), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            return None
    if isinstance(value, (int, float)) and math.isfinite(value) and 0 <= value < MAX_WHOLE and value == int(value):
        return int(value)
    return None


def _text(value: Any) -> str | None:
    return value.strip() or None if isinstance(value, str) else None


# Older Kineto (PyTorch 1.8) wrote the devices as `computeProperties`, with CUDA's field names for three of them.
OLDER_PROPERTIES = {"major": "computeMajor", "minor": "computeMinor", "multiProcessorCount": "numSms"}


def _listed(members: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The trace's devices: deviceProperties, else an older trace's computeProperties in today's field names."""
    for key in ("deviceProperties", "computeProperties"):
        listed = [p for p in members.get(key) or () if isinstance(p, dict)] if isinstance(members.get(key), list) \
            else []
        if listed:
            return listed if key == "deviceProperties" else [
                {**p, **{new: p[old] for old, new in OLDER_PROPERTIES.items() if old in p and new not in p}}
                for p in listed]
    return []


def _properties(members: Mapping[str, Any], devices: Mapping[int, int]) -> dict[str, Any]:
    """deviceProperties of the device this trace's events ran on (the busiest, when several)."""
    listed = _listed(members)
    if not devices or not listed:
        return {}
    busiest = max(devices, key=lambda d: (devices[d], -d))
    return next((p for p in listed if _whole(p.get("id")) == busiest), listed[0] if len(listed) == 1 else {})


def _vendor(categories: Counter[str], runtime_names: tuple[str, ...], device_name: str | None,
            has_device: bool) -> str | None:
    if not has_device:
        return "none"
    for vendor in kineto().vendors:
        if vendor.categories & set(categories):
            return vendor.vendor
        if vendor.runtime is not None and any(vendor.runtime.search(n) for n in runtime_names):
            return vendor.vendor
        if vendor.device_name is not None and device_name and vendor.device_name.search(device_name):
            return vendor.vendor
    return None


def _int64_ns(us: float) -> int:
    """µs (float) as whole ns without going through a float of 1e18 (which keeps only ~256 ns)."""
    whole = math.floor(us)
    return int(whole) * 1000 + round((us - whole) * 1000)


def metadata(members: Mapping[str, Any], built: Built, found: Collected, path: Path) -> dict[str, Any]:
    """The metadata keys of tables.py the trace gives (absent when it does not say)."""
    meta: dict[str, Any] = {}
    has_device = any(len(built.tables[n]) for n in t.DEVICE_TABLES)
    ranges = not has_device and found.counter_ranges > 0  # a CUPTI range-profiler trace: it measured a device
    props = _properties(members, built.devices) if has_device else (
        _properties(members, found.range_devices) if ranges else {})
    name = _text(props.get("name"))
    runtime = built.tables[t.RUNTIME].name.names
    vendor = kineto().counter_vendor if ranges else _vendor(found.categories, tuple(runtime), name, has_device)
    if name:
        meta[t.META_DEVICE_NAME] = name
    if vendor:
        meta[t.META_DEVICE_VENDOR] = vendor
    major, minor = _whole(props.get("computeMajor")), _whole(props.get("computeMinor"))
    if vendor == "nvidia" and major is not None and minor is not None:
        meta[t.META_COMPUTE_CAPABILITY] = f"{major}.{minor}"
    for key, field in ((t.META_SM_COUNT, "numSms"), (t.META_DEVICE_MEMORY, "totalGlobalMem")):
        if (number := _whole(props.get(field))) is not None and number > 0:
            meta[key] = number
    distributed = members.get("distributedInfo")
    info: dict[str, Any] = distributed if isinstance(distributed, dict) else {}
    rank = _whole(info.get("rank"))
    if rank is not None:
        meta[t.META_RANK], meta[t.META_RANK_SOURCE] = rank, "distributedInfo"
    elif (rank := rank_from_name(path.name)) is not None:
        meta[t.META_RANK], meta[t.META_RANK_SOURCE] = rank, "file name"
    if (world := _whole(info.get("world_size"))) is not None and world > 0:
        meta[t.META_WORLD_SIZE] = world
    if backend := _text(info.get("backend")):
        meta[t.META_BACKEND] = backend
    if built.t0_us is not None:
        base = members.get("baseTimeNanoseconds")
        base = base if isinstance(base, int) and not isinstance(base, bool) and 0 <= base < 2**62 else 0
        meta[t.META_TIME_BASE] = base + _int64_ns(built.t0_us)
    if trace_name := _text(members.get("traceName")):
        meta[t.META_TRACE_NAME] = trace_name
    return meta


def warnings(members: Mapping[str, Any], built: Built, found: Collected, meta: Mapping[str, Any]) -> list[str]:
    """The trace's own caveats, one sentence each."""
    out = []
    if found.malformed:
        out.append(f"{plural(found.malformed, 'entry', 'entries')} of traceEvents are not Kineto events (not an "
                   "object, or ph, cat or name not text): left out")
    for table, n in built.skipped.items():
        if n:
            out.append(f"{plural(n, f'{table} event')} without a usable ts or dur (missing, not a number, "
                       "negative or past any clock): left out")
    if not any(len(built.tables[n]) for n in t.DEVICE_TABLES):
        out.append(_ranges(found) if found.counter_ranges else
                   "no device events (kernels, copies, sets): a CPU-only trace; device figures are unavailable")
    elif found.counter_ranges:
        out.append(f"{plural(found.counter_ranges, kineto().counter_ranges + ' event')} (CUPTI hardware counters at "
                   "evenly spaced times, not when the kernels ran): left out")
    if "distributedInfo" not in members:
        rank = f"rank {meta[t.META_RANK]} from the file name" if t.META_RANK in meta else "rank unknown"
        out.append(f"no distributedInfo in the trace: {rank}, world size and backend unknown")
    coverage = built.coverage
    if coverage is not None and coverage < kineto().filtered_coverage_below:
        out.append(f"events were filtered out of this trace: the host events present are {coverage:.1%} of the "
                   "numbers Kineto gave them (Ev Idx), so gaps between events are not real idle time")
    return out


def _ranges(found: Collected) -> str:
    """What a CUPTI range-profiler trace holds, what it cannot tell and why."""
    names = list(found.counters)
    shown = ", ".join(names[:3]) + (f" and {len(names) - 3:,} more" if len(names) > 3 else "")
    counters = f"{plural(len(names), 'hardware counter')} ({shown})" if names else "hardware counters"
    return (f"a CUPTI range-profiler trace: {plural(found.counter_ranges, kineto().counter_ranges + ' event')} (one "
            f"per kernel, or per range) hold {counters} measured by replaying the work; Kineto spreads them evenly "
            "over the profiled span, not when the kernels ran, and the range profiler records no kernels, copies "
            "or sets, so device busy and idle, overlap, kernel times and launch delays are unavailable; the host's "
            "operators and runtime calls are as recorded, counter collection included; for the device timeline, "
            "profile again without profiler_metrics")


def _shape(built: Built, found: Collected) -> str:
    counts = [(n, len(built.tables[n])) for n in (t.KERNEL, t.MEMCPY, t.MEMSET, t.RUNTIME, t.CPU_OP, t.ANNOTATION)]
    listed = ", ".join(f"{c:,} {n}" for n, c in counts if c)
    total = sum(len(table) for table in built.tables.values())
    ranges = f"; {plural(found.counter_ranges, 'CUPTI counter range')}, untimed" if found.counter_ranges else ""
    return f"Kineto trace: {plural(total, 'complete event')}" + (f" ({listed})" if listed else "") + ranges


def profile(path: Path, members: Mapping[str, Any], built: Built, found: Collected, gzip: bool) -> Profile:
    """The trace's one profile; a trace without any usable complete event is an error (nothing to analyse)."""
    where = str(path)
    check_json_value(dict(members), where)  # decoded as Any: the depth and string limits
    if built.t0_us is None or built.end_us is None:
        left = sum(built.skipped.values())
        raise AdvisorError(where, "a Kineto trace without usable complete events (ph X with ts and dur)"
                                  + (f": {plural(left, 'event')} without a usable time" if left else ""))
    meta = metadata(members, built, found, path)
    caveats = tuple(warnings(members, built, found, meta))
    coverage = built.coverage
    extra = {"skipped": dict(built.skipped), "categories": dict(found.categories), "other": dict(found.other),
             "malformed": found.malformed, "event_coverage": coverage,
             "filtered": coverage is not None and coverage < kineto().filtered_coverage_below,
             "counter_ranges": found.counter_ranges, "counters": list(found.counters)}
    trace = EventTrace(tables=built.tables, summary={}, metadata=meta, warnings=caveats, extra=extra)
    raw: dict[str, Any] = {"total_time": (built.end_us - built.t0_us) * 1e3 * NS}
    raw.update({k: meta[k] for k in (t.META_RANK, t.META_WORLD_SIZE, t.META_SM_COUNT, t.META_DEVICE_MEMORY)
                if k in meta})
    raw.update({k: str(meta[k]) for k in (t.META_DEVICE_NAME, t.META_DEVICE_VENDOR, t.META_COMPUTE_CAPABILITY,
                                          t.META_BACKEND, t.META_RANK_SOURCE, t.META_TRACE_NAME) if k in meta})
    fields = normalise(raw, conventions(KIND))
    source = SourceInfo(path=where, format=GZIP_FORMAT if gzip else FORMAT, shape=_shape(built, found))
    return Profile(source=source, values=fields.values, info=fields.info, notes=(*caveats, *fields.notes),
                   trace=trace, units=fields.units, raw_names=fields.raw_names, kind=KIND.name)
