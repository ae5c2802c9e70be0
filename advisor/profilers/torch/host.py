"""Host-side figures: device synchronisations (cudaDeviceSynchronize, cudaStreamSynchronize, Tensor.item() …:
data/kernels.yaml `syncs`; MTIA's synchronize and synchronizeStream: MTIA_SYNC) and the data loader
(`enumerate(DataLoader)#…__next__` marks: `dataloader`), in the runtime, cpu_op and annotation tables. Times are
unions inside the window, so a sync nested in another (aten::item -> aten::_local_scalar_dense ->
cudaStreamSynchronize) counts once, and so do the same marks on several threads.

Both return the merged (start, end) arrays; owners.py reads the trace again to say what the host does in the idle
time no span owns (pace.py).

A copy blocks the host too (issue 34, class 2): a synchronous copy call (cudaMemcpy, cudaMemcpy2D, hipMemcpy, …:
a Memcpy call without Async) and the call that queued a copy from or to pageable memory (the copy's name says
Pageable) return only when the copy is done, however little it moves. `blocking_copies` measures them by that
host time, not the copy's device time, and `blocking_stack` names the operators the longest one runs in."""

from __future__ import annotations

import re
from typing import Any

from advisor.core.events import NS, EventTrace
from advisor.metrics.intervals import concat, segments, usable
from advisor.profilers.torch import tables as T
from advisor.profilers.torch.classes import Knowledge, matching, named
from advisor.profilers.torch.launches import SYNC_COPY

MTIA_SYNC = re.compile(r"^synchronize(Stream|Event|Device)?$")  # MTIA's runtime (mtia_runtime) synchronisations


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


def sync_segments(trace: EventTrace, know: Knowledge, w0: float, w1: float) -> tuple[Any, Any]:
    """The merged blocking episodes (ns) inside the window: nested calls and the same call on several threads
    count once."""
    def syncs(names: tuple[str, ...]) -> Any:
        return named(names, know.syncs) | matching(names, (MTIA_SYNC,))

    return segments(*_rows(trace, (T.RUNTIME, T.CPU_OP), syncs, w0, w1))


def loader_segments(trace: EventTrace, know: Knowledge, w0: float, w1: float) -> tuple[Any, Any]:
    """The merged spans (ns) inside the window in which the data loader's __next__ runs."""
    return segments(*_rows(trace, (T.ANNOTATION, T.CPU_OP), lambda names: matching(names, know.dataloader), w0, w1))


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


def _copy_rows(trace: EventTrace) -> tuple[Any, Any, Any]:
    """(start, end, row) of the runtime calls that block in a copy: a synchronous copy call, or the call that
    queued a copy from or to pageable memory (linked by correlation)."""
    import numpy as np

    table = trace.table(T.RUNTIME)
    if table is None or not len(table):
        return np.empty(0), np.empty(0), np.empty(0, dtype=np.int64)
    start, duration, keep = usable(np.asarray(table.start, dtype=float), np.asarray(table.duration, dtype=float))
    names = tuple(table.name.names)
    mine = np.fromiter((bool(SYNC_COPY.search(n)) for n in names), dtype=bool, count=len(names))[table.name.codes[keep]]
    copies, corr = trace.table(T.MEMCPY), table.extra.get(T.CORRELATION)
    if copies is not None and len(copies) and corr is not None and copies.extra.get(T.PAGEABLE) is not None:
        paged = np.asarray(copies.extra[T.PAGEABLE], dtype=float) == 1.0
        linked = np.asarray(copies.extra.get(T.CORRELATION, np.full(len(copies), -1)), dtype=np.int64)[paged]
        mine |= np.isin(np.asarray(corr, dtype=np.int64)[keep], linked[linked >= 0])
    return start[mine], start[mine] + duration[mine], np.flatnonzero(keep)[mine]


def blocked_copy_starts(trace: EventTrace) -> Any:
    """The device start (ns) of every copy queued by a call that blocks in it (`_copy_rows`), sorted."""
    import numpy as np

    copies, runtime = trace.table(T.MEMCPY), trace.table(T.RUNTIME)
    if copies is None or not len(copies) or runtime is None or runtime.extra.get(T.CORRELATION) is None:
        return np.empty(0)
    _, _, rows = _copy_rows(trace)
    calls = np.asarray(runtime.extra[T.CORRELATION], dtype=np.int64)[rows]
    linked = np.asarray(copies.extra.get(T.CORRELATION, np.full(len(copies), -1)), dtype=np.int64)
    mine = np.isin(linked, calls[calls >= 0]) & (linked >= 0)
    return np.sort(np.asarray(copies.start, dtype=float)[mine])


def blocking_copies(trace: EventTrace | None, w0: float, w1: float,
                    syncs: tuple[Any, Any]) -> tuple[tuple[Any, Any], int]:
    """The host time blocked in copies inside the window (merged spans, ns) and the number of such calls that
    start in it outside a synchronisation (`syncs`, merged; a copy inside one, Tensor.item()'s, is the sync's)."""
    import numpy as np

    if trace is None:
        return (np.empty(0), np.empty(0)), 0
    a, b, _ = _copy_rows(trace)
    s_start, s_end = (np.asarray(x, dtype=float) for x in syncs)
    episode = np.searchsorted(s_start, a, side="right") - 1
    in_sync = (episode >= 0) & (a < s_end[np.maximum(episode, 0)]) if len(s_start) else np.zeros(len(a), bool)
    count = int(((a >= w0) & (a < w1) & ~in_sync).sum())
    a, b = np.clip(a, w0, w1), np.clip(b, w0, w1)
    inside = b > a
    return segments(a[inside], b[inside] - a[inside]), count


def blocking_stack(trace: EventTrace | None, know: Knowledge, w0: float, w1: float) -> str:
    """The longest blocking copy call in the window with the annotations and operators it runs in on its thread,
    outermost first ("## sparse_data_dist ## > aten::to > … > cudaMemcpyAsync"; profiler steps left out), or ""."""
    import numpy as np

    runtime = trace.table(T.RUNTIME) if trace is not None else None
    if trace is None or runtime is None:  # no runtime calls: none blocks
        return ""
    a, b, rows = _copy_rows(trace)
    inside = (a < w1) & (b > w0)
    if not inside.any():
        return ""
    i = int(np.flatnonzero(inside)[np.argmax((b - a)[inside])])
    threads = runtime.extra.get(T.THREAD)
    thread = int(np.asarray(threads)[rows[i]]) if threads is not None else None
    around = []
    for key in (T.ANNOTATION, T.CPU_OP):
        table = trace.table(key)
        if table is None or not len(table):
            continue
        start, duration, keep = usable(np.asarray(table.start, dtype=float), np.asarray(table.duration, dtype=float))
        mine = (start <= a[i]) & (start + duration >= b[i])
        if thread is not None and table.extra.get(T.THREAD) is not None:
            mine &= np.asarray(table.extra[T.THREAD])[keep] == thread
        names = tuple(table.name.names)
        around += [(float(s), -float(d), names[c]) for s, d, c in
                   zip(start[mine], duration[mine], table.name.codes[keep][mine], strict=True)
                   if not know.step.match(names[c])]
    name = runtime.name.names[runtime.name.codes[rows[i]]]
    return " > ".join([n for _, _, n in sorted(around)] + [name])
