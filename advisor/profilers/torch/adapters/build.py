"""The collected columns as the event tables of advisor/profilers/torch/tables.py: times in ns from the trace start
(the earliest usable `ts`), at the file's resolution (Kineto's µs with ns fractions: no rounding), events
without a usable time left out and counted, ids as int64 (-1 unknown), and the figures the reader derives
from the args (copy direction and pageable memory from the event name, a collective's bytes, occupancy as a
fraction)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from advisor.core.events import Codes, EventTable
from advisor.profilers.torch import tables as t
from advisor.profilers.torch.adapters.knowledge import kineto
from advisor.profilers.torch.adapters.reader import Collected, TableColumns, number

US = 1e3  # ns per µs
OTHER_DIRECTION = "other"
NO_STREAM = 0xFFFFFFFF


@dataclass(frozen=True)
class Built:
    tables: dict[str, EventTable]
    t0_us: float | None  # the trace start, in the file's µs (None: no usable event)
    end_us: float | None  # the last usable event's end
    skipped: dict[str, int]  # events per table without a usable ts/dur, left out
    devices: dict[int, int]  # device id -> device events on it (kernels, copies, sets)
    coverage: float | None  # host events present / the span of their "Ev Idx" numbers (None: no numbers)


def _ints(values: Any) -> Any:
    """Whole numbers as int64, -1 where unknown (NaN, infinite, fractional or past int64)."""
    import numpy as np

    ok = np.isfinite(values) & (np.abs(values) < 2.0**62)
    ok &= np.floor(np.where(ok, values, 0.0)) == np.where(ok, values, 0.0)
    return np.where(ok, values, -1.0).astype(np.int64)


def _codes(cols: TableColumns, name: str, keep: Any) -> Codes:
    return Codes(cols.column(name)[keep], cols.names(name))


def _usable(cols: TableColumns) -> Any:
    import numpy as np

    limit = kineto().max_time_us
    ts, dur = cols.column("ts"), cols.column("dur")
    with np.errstate(invalid="ignore"):
        return np.isfinite(ts) & np.isfinite(dur) & (ts >= 0) & (dur >= 0) & (ts < limit) & (dur < limit)


def _labels(first: Any, second: Any, one: str, two: str, unknown: str) -> Codes:
    """Track labels from int64 id pairs ("device 0 stream 7", "device 0", "thread 12"), sorted by id; -1 is
    unknown."""
    import numpy as np

    firsts, first_codes = np.unique(first, return_inverse=True)  # a handful of ids each: the pairs by code
    seconds, second_codes = np.unique(second, return_inverse=True)
    keys, inverse = np.unique(first_codes.reshape(-1) * len(seconds) + second_codes.reshape(-1),
                              return_inverse=True)
    unique = [(int(firsts[k // len(seconds)]), int(seconds[k % len(seconds)])) for k in keys.tolist()]
    names = []
    for a, b in unique:
        names.append((one.format(a) if a != -1 else unknown) + (two.format(b) if b != -1 else ""))
    return Codes(inverse.reshape(-1).astype(np.int32), tuple(names))


def _device(cols: TableColumns, keep: Any) -> tuple[Any, Any]:
    """The device and stream of device-side events: args.device and args.stream, else the process and thread
    ids, under which Kineto writes a device's activities (pid = device index, tid = stream). The stream
    0xFFFFFFFF is CUDA's "no stream" as Kineto prints it (a context-wide synchronisation): unknown."""
    import numpy as np

    device = _ints(cols.column("device")[keep])
    pid = _ints(cols.column("pid")[keep])
    device = np.where(device >= 0, device, np.where((pid >= 0) & (pid < 1 << 20), pid, -1))
    stream = _ints(cols.column("stream")[keep])
    tid = _ints(cols.column("tid")[keep])
    stream = np.where(stream >= 0, stream, np.where(tid >= 0, tid, -1))
    return device, np.where(stream == NO_STREAM, -1, stream)


def _per_name(names: tuple[str, ...], codes: Any, of: Any, dtype: Any) -> Any:
    import numpy as np

    lookup = np.array([of(n) for n in names], dtype=dtype) if names else np.empty(0, dtype)
    return lookup[codes] if len(codes) else np.empty(0, dtype)


def _copies(cols: TableColumns, keep: Any, name: Codes) -> dict[str, Any]:
    """Direction and pageable memory of each copy from its name, else (ROCm) the direction from args.kind."""
    import numpy as np

    k = kineto()

    def direction(text: str) -> str:
        found = k.direction.search(text)
        return found.group(1) if found else ""

    def pageable(text: str) -> float:
        return 1.0 if k.pageable.search(text) else 0.0 if k.pinned.search(text) else float("nan")

    named = _per_name(tuple(name.names), name.codes, direction, object)
    kinds = _per_name(cols.names("kind"), cols.column("kind")[keep], direction, object)
    chosen = np.where(named != "", named, kinds) if len(named) else named
    chosen = np.where(chosen != "", chosen, OTHER_DIRECTION) if len(chosen) else chosen
    labels = sorted(set(chosen.tolist()))
    index = {label: i for i, label in enumerate(labels)}
    codes = np.fromiter((index[c] for c in chosen.tolist()), np.int32, len(chosen))
    return {t.DIRECTION: Codes(codes, tuple(labels)),
            t.PAGEABLE: _per_name(tuple(name.names), name.codes, pageable, np.float64)}


def _comms(cols: TableColumns, keep: Any) -> dict[str, Any]:
    """A collective's name, its input message in bytes (elements × the dtype's size) and its group size."""
    import numpy as np

    sizes = kineto().dtype_bytes
    per_element = _per_name(cols.names("dtype"), cols.column("dtype")[keep], lambda d: sizes.get(d, np.nan),
                            np.float64)
    nelems = cols.column("nelems")[keep]
    with np.errstate(invalid="ignore", over="ignore"):
        message = np.where(np.isfinite(nelems) & (nelems >= 0), nelems * per_element, np.nan)
        group = cols.column("group_size")[keep]
        group = np.where(np.isfinite(group) & (group >= 1), group, np.nan)
    return {t.COLLECTIVE: _codes(cols, "collective", keep), t.MESSAGE_BYTES: message, t.GROUP_SIZE: group}


def _sizes(values: Any) -> Any:
    import numpy as np

    with np.errstate(invalid="ignore"):
        return np.where(np.isfinite(values) & (values >= 0), values, np.nan)


DEVICE_SIDE = (*t.DEVICE_TABLES, t.GPU_ANNOTATION, t.SYNC)  # events on a device's timeline


def _placed(name: str, cols: TableColumns, keep: Any) -> tuple[Codes, dict[str, Any]]:
    """Where each event ran: its track ("device 0 stream 7", "thread 12") and the columns saying so."""
    import numpy as np

    extra: dict[str, Any] = {}
    thread = _ints(cols.column("tid")[keep])
    if name in t.HOST_TABLES:
        extra[t.THREAD] = thread
    if name in DEVICE_SIDE:
        device, stream = _device(cols, keep)
        extra.update({t.DEVICE: device, t.STREAM: stream})
        return _labels(device, stream, "device {}", " stream {}", "unknown device"), extra
    if name == t.RUNTIME:  # the device and stream a call works on, where the runtime says (ROCm, MTIA)
        stream = _ints(cols.column("stream")[keep])
        extra.update({t.DEVICE: _ints(cols.column("device")[keep]),
                      t.STREAM: np.where(stream >= 0, stream, _ints(cols.column("stream_id")[keep]))})
    return _labels(thread, np.full(len(thread), -1, np.int64), "thread {}", "", "unknown thread"), extra


def _table(name: str, cols: TableColumns, keep: Any, t0: float) -> EventTable:
    import numpy as np

    start = (cols.column("ts")[keep] - t0) * US
    duration = cols.column("dur")[keep] * US
    names = _codes(cols, "name", keep)
    track, extra = _placed(name, cols, keep)
    size = _sizes(cols.column("size")[keep]) if name == t.RUNTIME else None
    for column, field in ((t.CORRELATION, "correlation"), (t.EXTERNAL_ID, "external_id")):
        if field in cols.fields:
            extra[column] = _ints(cols.column(field)[keep])
    if name == t.KERNEL:
        occupancy = cols.column("occupancy")[keep]
        with np.errstate(invalid="ignore"):
            occupancy = np.where((occupancy >= 0) & (occupancy <= 100), occupancy / 100, np.nan)
        registers = cols.column("registers")[keep]
        with np.errstate(invalid="ignore"):
            registers = np.where(np.isfinite(registers) & (registers >= 0), registers, np.nan)
        extra.update({t.GRID: _codes(cols, "grid", keep), t.BLOCK: _codes(cols, "block", keep),
                      t.REGISTERS: registers, t.OCCUPANCY: occupancy})
    if name in (t.KERNEL, t.CPU_OP):
        extra.update(_comms(cols, keep))
    if name == t.CPU_OP:
        extra.update({t.INPUT_DIMS: _codes(cols, "input_dims", keep), t.INPUT_TYPES: _codes(cols, "input_types", keep),
                      t.CONCRETE_INPUTS: _codes(cols, "concrete", keep)})
    if name == t.MEMCPY:
        extra.update(_copies(cols, keep, names))
    if name in (t.MEMCPY, t.MEMSET):
        size = _sizes(cols.column("bytes")[keep])
    return EventTable(start=start, duration=duration, track=track, name=names, bytes=size, extra=extra)


def _fill_copy_bytes(tables: dict[str, EventTable]) -> None:
    """ROCm writes a copy's size on its runtime call (hipMemcpyWithStream `size`), not on the copy: taken
    from the call with the same correlation id where the copy has none."""
    import numpy as np

    copy, runtime = tables.get(t.MEMCPY), tables.get(t.RUNTIME)
    if copy is None or runtime is None or not len(copy) or not len(runtime):
        return
    missing = np.isnan(copy.bytes) & (copy.extra[t.CORRELATION] >= 0)
    if not missing.any():
        return
    known = np.isfinite(runtime.bytes) & (runtime.extra[t.CORRELATION] >= 0)
    if not known.any():
        return
    ids, sizes = runtime.extra[t.CORRELATION][known], runtime.bytes[known]
    order = np.argsort(ids, kind="stable")
    ids, sizes = ids[order], sizes[order]
    wanted = copy.extra[t.CORRELATION][missing]
    at = np.minimum(np.searchsorted(ids, wanted), len(ids) - 1)
    found = ids[at] == wanted
    filled = copy.bytes[missing]
    filled[found] = sizes[at[found]]
    copy.bytes[missing] = filled


def _coverage(found: Collected) -> float | None:
    import numpy as np

    # every event Kineto numbered counts, whatever its table: a memory record (cpu_instant_event, ph i) takes a
    # number too, and a complete trace recorded with profile_memory=True is no filtered one
    others = np.fromiter(map(number, found.other_ev_idx), np.float64, len(found.other_ev_idx))
    numbers = np.concatenate([*(found.tables[n].column("ev_idx") for n in (t.CPU_OP, t.ANNOTATION)), others])
    numbers = np.unique(numbers[np.isfinite(numbers) & (numbers >= 0)])
    if len(numbers) < 2:
        return None
    span = numbers[-1] - numbers[0] + 1
    widest = float(np.diff(numbers).max())
    if widest >= kineto().ev_idx_sequence_gap and widest > span / 2:  # two sequences' numbers, not a filter's gap
        span -= widest - 1
    return float(len(numbers) / span)


def build(found: Collected) -> Built:
    import numpy as np

    usable = {name: _usable(cols) for name, cols in found.tables.items()}
    starts = [cols.column("ts")[usable[name]] for name, cols in found.tables.items()]
    ends = [(cols.column("ts") + cols.column("dur"))[usable[name]] for name, cols in found.tables.items()]
    t0 = min((float(s.min()) for s in starts if len(s)), default=None)
    end = max((float(e.max()) for e in ends if len(e)), default=None)
    tables = {name: _table(name, cols, usable[name], t0 or 0.0) for name, cols in found.tables.items()}
    _fill_copy_bytes(tables)
    ids = np.concatenate([tables[n].extra[t.DEVICE] for n in t.DEVICE_TABLES])
    ids, counts = np.unique(ids[ids >= 0], return_counts=True)
    return Built(tables=tables, t0_us=t0, end_us=end,
                 skipped={name: int(len(mask) - mask.sum()) for name, mask in usable.items()},
                 devices=dict(zip(ids.tolist(), counts.tolist(), strict=True)), coverage=_coverage(found))
