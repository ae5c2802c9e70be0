"""Hand-built RBLN event traces for the event-analysis tests: the reader's output shape (contract), no file."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np

from advisor.core.events import EventTable, EventTrace, Interner

TITLES = {"host": "Host", "neural_engine": "Neural Engine Clusters", "neural_dma": "Neural DMA",
          "task_dma": "Task DMA", "external_hdma": "External HDMA", "device_hdma": "Device HDMA",
          "device_sync": "Device Sync", "general_compute": "General Compute Engine", "ccl": "CCL",
          "device_workload": "Device Workload", "other": "Mystery"}


def S(category, start, duration, name="0_layer_0", device="rbln0", chiplet="", bytes=math.nan, cycles=math.nan,
      track=None, id=None):
    """One slice: category key, start and duration in ns, name, device, chiplet, bytes, cycles, track, id."""
    return SimpleNamespace(category=category, start=start, duration=duration, name=name, device=device,
                           chiplet=chiplet, bytes=bytes, cycles=cycles, track=track, id=id)


def _codes(values):
    interner = Interner()
    return interner.codes(np.array([interner[v] for v in values], dtype=np.int32))


def make_trace(slices, flows=None, quality=None, warnings=(), shared_names=False):
    """An EventTrace with one table per category; ids number the slices in the order given unless set.
    shared_names: every table codes its names with one interner (as the reader does)."""
    tables = {}
    names = Interner()
    if shared_names:
        for sl in slices:
            names[sl.name]
    for number, sl in enumerate(slices):
        if sl.id is None:
            sl.id = number
    for key in dict.fromkeys(sl.category for sl in slices):
        rows = [sl for sl in slices if sl.category == key]
        tracks = [sl.track or " / ".join(p for p in (sl.device, sl.chiplet, TITLES[key]) if p) for sl in rows]
        tables[key] = EventTable(
            start=np.array([sl.start for sl in rows], dtype=float),
            duration=np.array([sl.duration for sl in rows], dtype=float),
            track=_codes(tracks), name=names.codes(np.array([names[sl.name] for sl in rows], dtype=np.int32))
            if shared_names else _codes([sl.name for sl in rows]),
            bytes=np.array([sl.bytes for sl in rows], dtype=float),
            extra={"cycles": np.array([sl.cycles for sl in rows], dtype=float),
                   "device": _codes([sl.device for sl in rows]), "chiplet": _codes([sl.chiplet for sl in rows]),
                   "id": np.array([sl.id for sl in rows], dtype=np.int64)})
    extra = {}
    if flows is not None:
        extra["flows"] = tuple(np.array([edge[i] for edge in flows], dtype=np.int64) for i in (0, 1))
    if quality is not None:
        extra["quality"] = SimpleNamespace(**quality)
    return EventTrace(tables=tables, summary={}, metadata={"generation": "ATOM", "devices": 1},
                      warnings=tuple(warnings), extra=extra)
