"""Host-side figures: device synchronisations (cudaDeviceSynchronize, cudaStreamSynchronize, Tensor.item() …:
data/kernels.yaml `syncs`) and the data loader (`enumerate(DataLoader)#…__next__` marks: `dataloader`), in the
runtime, cpu_op and annotation tables. Times are unions inside the window, so a sync nested in another
(aten::item -> aten::_local_scalar_dense -> cudaStreamSynchronize) counts once, and so do the same marks on
several threads."""

from __future__ import annotations

from typing import Any

from advisor.core.events import EventTrace
from advisor.kinds.torch import tables as T
from advisor.kinds.torch.classes import Knowledge, matching, named
from advisor.metrics.intervals import concat, segments, usable

NS = 1e-9


def _rows(trace: EventTrace, keys: tuple[str, ...], choose: Any, w0: float, w1: float) -> tuple[Any, Any]:
    """(start, duration) of the chosen rows of the tables, clipped to the window (rows outside it dropped)."""
    import numpy as np

    parts = []
    for key in keys:
        table = trace.table(key)
        if table is None or not len(table):
            continue
        start, duration, keep = usable(np.asarray(table.start, dtype=float), np.asarray(table.duration, dtype=float))
        mine = choose(tuple(table.name.names))[table.name.codes[keep]]
        a = np.clip(start[mine], w0, w1)
        b = np.clip(start[mine] + duration[mine], w0, w1)
        inside = b > a
        parts.append((a[inside], b[inside] - a[inside]))
    return concat(parts)


def sync_metrics(trace: EventTrace, know: Knowledge, w0: float, w1: float,
                 steps: int) -> dict[str, float | None]:
    """sync_count (count: blocking episodes, nested calls merged), sync_time (s), its share of the window and
    the episodes per step."""
    start, duration = _rows(trace, (T.RUNTIME, T.CPU_OP), lambda names: named(names, know.syncs), w0, w1)
    a, b = segments(start, duration)
    window = w1 - w0
    time = float((b - a).sum())
    return {"sync_count": float(len(a)), "sync_time": time * NS,
            "sync_fraction": time / window if window > 0 else None,
            "sync_per_step": len(a) / steps if steps else None}


def dataloader_metrics(trace: EventTrace, know: Knowledge, w0: float, w1: float,
                       work: tuple[Any, Any] | None) -> dict[str, float | None]:
    """dataloader_time (s) and share of the window; dataloader_idle_fraction: the window's share in which the
    data loader runs and the device does no work (`work`: the device's work intervals clipped to the window,
    None without a device)."""
    import numpy as np

    start, duration = _rows(trace, (T.ANNOTATION, T.CPU_OP), lambda names: matching(names, know.dataloader), w0, w1)
    a, b = segments(start, duration)
    window = w1 - w0
    time = float((b - a).sum())
    idle = None
    if work is not None and window > 0:
        busy_a, busy_b = segments(*work)
        both_a, both_b = segments(*concat([(a, b - a), (busy_a, busy_b - busy_a)]))
        idle = (float(np.sum(both_b - both_a)) - float(np.sum(busy_b - busy_a))) / window
    return {"dataloader_time": time * NS, "dataloader_fraction": time / window if window > 0 else None,
            "dataloader_idle_fraction": idle}
