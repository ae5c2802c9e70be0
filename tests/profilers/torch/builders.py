"""A small builder of torch EventTraces in the layout of advisor/profilers/torch/tables.py (the reader's output, no
file), for tests whose answers can be worked out by hand. Times are given in µs, as Kineto writes them, and
stored in ns from the trace start, as the reader stores them."""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

import numpy as np

from advisor.core.events import Codes, EventTable, EventTrace
from advisor.profilers.torch import tables as T

US = 1e3  # ns per µs
NAN = math.nan


def _codes(values: list[str]) -> Codes:
    index: dict[str, int] = {}
    codes = np.array([index.setdefault(v, len(index)) for v in values], dtype=np.int32)
    return Codes(codes, tuple(index))


class TraceBuilder:
    """Add events (µs), then `build()`. `launch` adds a runtime launch call and the kernel it queued, linked by
    a fresh correlation id. (A plain class: the tests load this file by path, where a dataclass cannot.)"""

    def __init__(self, metadata: dict[str, Any] | None = None, warnings: tuple[str, ...] = ()) -> None:
        self.rows: dict[str, list[dict[str, Any]]] = defaultdict(list)
        self.metadata = dict(metadata or {})
        self.warnings = warnings
        self._correlation = 1000

    def _add(self, table: str, name: str, start: float, dur: float, **extra: Any) -> TraceBuilder:
        self.rows[table].append({"name": name, "start": start * US, "dur": dur * US, **extra})
        return self

    def kernel(self, name: str, start: float, dur: float, stream: int = 7, device: int = 0, correlation: int = -1,
               occupancy: float = NAN) -> TraceBuilder:
        return self._add(T.KERNEL, name, start, dur, stream=stream, device=device, correlation=correlation,
                         occupancy=occupancy)

    def memcpy(self, start: float, dur: float, size: float, direction: str = "HtoD", pageable: float = 0.0,
               stream: int = 7, device: int = 0, correlation: int = -1) -> TraceBuilder:
        source = {"HtoD": "Pageable" if pageable == 1.0 else "Pinned", "DtoH": "Device", "DtoD": "Device"}
        name = f"Memcpy {direction} ({source.get(direction, 'Device')} -> Device)"
        return self._add(T.MEMCPY, name, start, dur, stream=stream, device=device, correlation=correlation,
                         bytes=size, direction=direction, pageable=pageable)

    def memset(self, start: float, dur: float, size: float, stream: int = 7, device: int = 0,
               correlation: int = -1) -> TraceBuilder:
        return self._add(T.MEMSET, "Memset (Device)", start, dur, stream=stream, device=device,
                         correlation=correlation, bytes=size)

    def runtime(self, name: str, start: float, dur: float, correlation: int = -1, thread: int = 1) -> TraceBuilder:
        return self._add(T.RUNTIME, name, start, dur, correlation=correlation, thread=thread)

    def cpu_op(self, name: str, start: float, dur: float, thread: int = 1, collective: str = "",
               message_bytes: float = NAN) -> TraceBuilder:
        return self._add(T.CPU_OP, name, start, dur, thread=thread, collective=collective,
                         message_bytes=message_bytes)

    def annotation(self, name: str, start: float, dur: float, thread: int = 1) -> TraceBuilder:
        return self._add(T.ANNOTATION, name, start, dur, thread=thread)

    def step(self, number: int, start: float, dur: float) -> TraceBuilder:
        return self.annotation(f"ProfilerStep#{number}", start, dur)

    def launch(self, name: str, call: float, call_dur: float, start: float, dur: float, stream: int = 7,
               api: str = "cudaLaunchKernel", occupancy: float = NAN) -> TraceBuilder:
        """A launch call at `call` lasting `call_dur` that queued kernel `name` running [start, start + dur)."""
        self._correlation += 1
        self.runtime(api, call, call_dur, correlation=self._correlation)
        return self.kernel(name, start, dur, stream=stream, correlation=self._correlation, occupancy=occupancy)

    def copy(self, call: float, call_dur: float, start: float, dur: float, size: float, direction: str = "HtoD",
             pageable: float = 0.0, api: str = "cudaMemcpyAsync", stream: int = 7) -> TraceBuilder:
        self._correlation += 1
        self.runtime(api, call, call_dur, correlation=self._correlation)
        return self.memcpy(start, dur, size, direction, pageable, stream=stream, correlation=self._correlation)

    def build(self) -> EventTrace:
        return EventTrace(tables={key: self._table(key) for key in self.rows}, summary={},
                          metadata=dict(self.metadata), warnings=self.warnings)

    def _table(self, key: str) -> EventTable:
        rows = self.rows[key]

        def col(name: str, fill: Any = NAN, dtype: Any = float) -> Any:
            return np.array([r.get(name, fill) for r in rows], dtype=dtype)

        extra: dict[str, Any] = {}
        if key in T.DEVICE_TABLES:
            device, stream = col("device", -1, np.int64), col("stream", -1, np.int64)
            track = _codes([f"device {d} stream {s}" if s >= 0 else f"device {d}"
                            for d, s in zip(device.tolist(), stream.tolist(), strict=True)])
            extra.update({T.DEVICE: device, T.STREAM: stream, T.CORRELATION: col("correlation", -1, np.int64)})
        else:
            thread = col("thread", 1, np.int64)
            track = _codes([f"thread {t}" for t in thread.tolist()])
            extra[T.THREAD] = thread
        if key == T.KERNEL:
            extra[T.OCCUPANCY] = col("occupancy")
        if key == T.MEMCPY:
            extra[T.DIRECTION] = _codes([r["direction"] for r in rows])
            extra[T.PAGEABLE] = col("pageable")
        if key == T.RUNTIME:
            extra[T.CORRELATION] = col("correlation", -1, np.int64)
        if key == T.CPU_OP:
            extra[T.COLLECTIVE] = _codes([r.get("collective", "") for r in rows])
            extra[T.MESSAGE_BYTES] = col("message_bytes")
        size = col("bytes") if key in (T.MEMCPY, T.MEMSET) else None
        return EventTable(start=col("start"), duration=col("dur"), track=track,
                          name=_codes([r["name"] for r in rows]), bytes=size, extra=extra)
