"""Host-side figures: device synchronisations (cudaDeviceSynchronize, cudaStreamSynchronize, Tensor.item() …:
data/kernels.yaml `syncs`) and the data loader (`enumerate(DataLoader)#…__next__` marks: `dataloader`), in the
runtime, cpu_op and annotation tables. Times are unions inside the window, so a sync nested in another
(aten::item -> aten::_local_scalar_dense -> cudaStreamSynchronize) counts once, and so do the same marks on
several threads.

Both return `Spans`: the merged (start, end) arrays, unpacked as a pair, and the trace they were read from, which
owners.py reads again to say what the host does in the idle time no span owns (pace.py)."""

from __future__ import annotations

from typing import Any

from advisor.core.events import EventTrace
from advisor.kinds.torch import tables as T
from advisor.kinds.torch.classes import Knowledge, matching, named
from advisor.metrics.intervals import concat, segments, usable

NS = 1e-9


class Spans(tuple):
    """Merged spans of one kind of host activity inside the window, `(start, end)` ns arrays (a pair: `a, b =
    spans`), with the trace they come from (`trace`; None when made from arrays alone)."""

    trace: EventTrace | None

    def __new__(cls, start: Any, end: Any, trace: EventTrace | None = None) -> Spans:
        made = super().__new__(cls, (start, end))
        made.trace = trace
        return made


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


def sync_segments(trace: EventTrace, know: Knowledge, w0: float, w1: float) -> Spans:
    """The merged blocking episodes (ns) inside the window: nested calls and the same call on several threads
    count once."""
    return Spans(*segments(*_rows(trace, (T.RUNTIME, T.CPU_OP), lambda names: named(names, know.syncs), w0, w1)),
                 trace)


def loader_segments(trace: EventTrace, know: Knowledge, w0: float, w1: float) -> Spans:
    """The merged spans (ns) inside the window in which the data loader's __next__ runs."""
    return Spans(*segments(*_rows(trace, (T.ANNOTATION, T.CPU_OP),
                                  lambda names: matching(names, know.dataloader), w0, w1)), trace)


def sync_metrics(syncs: tuple[Any, Any], window: float, steps: int) -> dict[str, float | None]:
    """sync_count (count: blocking episodes), sync_time (s), its share of the window and the episodes per step."""
    a, b = syncs
    time = float((b - a).sum())
    return {"sync_count": float(len(a)), "sync_time": time * NS,
            "sync_fraction": time / window if window > 0 else None,
            "sync_per_step": len(a) / steps if steps else None}


def dataloader_metrics(loader: tuple[Any, Any], window: float) -> dict[str, float | None]:
    """dataloader_time (s) and its share of the window (the device's idle share in it: owners.py)."""
    a, b = loader
    time = float((b - a).sum())
    return {"dataloader_time": time * NS, "dataloader_fraction": time / window if window > 0 else None}
