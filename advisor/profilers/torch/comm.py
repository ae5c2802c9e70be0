"""Compute, communication and their overlap on the device, and the collectives the host asked for. Times are
unions inside the window (overlapping kernels count once): compute is every kernel that is neither
communication nor a memory operation nor a device-side wait; communication the kernels of the communication
class (NCCL, RCCL, HCCL, NVSHMEM, expert-parallel dispatch and combine: data/kernels.yaml) and the unnamed kernels
of a stream that only communication uses. Exposed communication runs while no compute kernel does; the
overlap share is HTA's comp_comm_overlap_ratio (overlapped time over communication time).
Collectives are counted from record_param_comms (PyTorch's record of every c10d call, with its message size),
else from the process group's annotations (nccl:all_reduce, gloo:all_reduce), else from the communication
kernels."""

from __future__ import annotations

from typing import Any

from advisor.core.events import NS, EventTrace
from advisor.metrics.intervals import usable
from advisor.profilers.torch import tables as T
from advisor.profilers.torch.classes import COMMUNICATION, MEMORY, OTHER, Knowledge, matching
from advisor.profilers.torch.device import Device


def communication_streams(dev: Device, know: Knowledge) -> Any:
    """The kernels of no named class on a stream that only communication uses (bool per row): a stream with a
    communication kernel and no kernel of a compute class (a library's barrier or helper kernel next to its
    collectives, as DeepEP's and NVSHMEM's are). Tracks without a stream (some AMD, all MTIA events) are one
    track for every kernel, so they are left alone."""
    import numpy as np

    comm, other = know.index(COMMUNICATION), know.index(OTHER)
    kernel = dev.kernels() & ~dev.wait
    if not len(dev.tracks) or not (kernel & (dev.klass == comm)).any():
        return np.zeros(len(dev), dtype=bool)
    n = len(dev.tracks)
    has_comm = np.bincount(dev.track[kernel & (dev.klass == comm)], minlength=n) > 0
    has_compute = np.bincount(dev.track[kernel & (dev.klass != comm) & (dev.klass != other)], minlength=n) > 0
    streamed = np.fromiter((" stream " in t for t in dev.tracks), dtype=bool, count=n)
    only = has_comm & ~has_compute & streamed
    return kernel & (dev.klass == other) & only[dev.track]


def masks(dev: Device, know: Knowledge) -> tuple[Any, Any, Any]:
    """(compute, communication, memory) row masks; waits are none of them. The kernels of no named class on a
    stream only communication uses become communication here, in the device rows' classes too (the class and
    top-kernel tables read them after this)."""
    dev.klass[communication_streams(dev, know)] = know.index(COMMUNICATION)
    comm = (dev.klass == know.index(COMMUNICATION)) & ~dev.wait
    memory = (dev.klass == know.index(MEMORY)) & ~dev.wait
    compute = dev.kernels() & ~comm & ~memory & ~dev.wait
    return compute, comm, memory


def overlap_metrics(dev: Device, compute: Any, comm: Any, window: float) -> dict[str, float | None]:
    """compute/comm times (s), shares of the window, exposed communication and the overlap share."""
    c, k = dev.union(compute), dev.union(comm)
    both = dev.union(compute | comm)
    overlapped = c + k - both
    exposed = both - c
    return {
        "compute_time": c * NS, "compute_fraction": c / window if window > 0 else None,
        "comm_time": k * NS, "comm_fraction": k / window if window > 0 else None,
        "comm_exposed": exposed * NS, "comm_exposed_fraction": exposed / window if window > 0 else None,
        "comm_overlap_fraction": overlapped / k if k > 0 else None,
    }


def _in_window(table: Any, w0: float, w1: float) -> tuple[Any, Any]:
    """The usable rows of a host table that start in the window: (mask over the usable rows, keep)."""
    import numpy as np

    start, _, keep = usable(np.asarray(table.start, dtype=float), np.asarray(table.duration, dtype=float))
    return (start >= w0) & (start < w1), keep


def collectives(trace: EventTrace, know: Knowledge, dev: Device | None, comm: Any, w0: float,
                w1: float) -> dict[str, float | None]:
    """collective_count (count) and collective_bytes (bytes: record_param_comms' input messages; None when the
    trace has no sizes)."""
    import numpy as np

    ops = trace.table(T.CPU_OP)
    name_col = ops.extra.get(T.COLLECTIVE) if ops is not None else None
    if ops is not None and name_col is not None and len(ops):
        inside, keep = _in_window(ops, w0, w1)
        names = tuple(name_col.names)
        real = np.fromiter((bool(n) and n not in know.not_collectives for n in names), dtype=bool, count=len(names))
        chosen = real[name_col.codes[keep]] & inside
        if real[name_col.codes].any():  # the trace records its collectives
            sizes = ops.extra.get(T.MESSAGE_BYTES)
            size = np.asarray(sizes, dtype=float)[keep][chosen] if sizes is not None else np.empty(0)
            known = np.isfinite(size)
            return {"collective_count": float(chosen.sum()),
                    "collective_bytes": float(size[known].sum()) if known.any() else None}
    marks = trace.table(T.ANNOTATION)
    if marks is not None and len(marks):
        inside, keep = _in_window(marks, w0, w1)
        found = matching(tuple(marks.name.names), know.comm_annotations)[marks.name.codes[keep]]
        if found.any():  # the process group marks its collectives
            return {"collective_count": float((found & inside).sum()), "collective_bytes": None}
    if dev is not None and len(dev):
        return {"collective_count": float((comm & dev.inside).sum()), "collective_bytes": None}
    return {"collective_count": None, "collective_bytes": None}


def memory_metrics(dev: Device, compute: Any, comm: Any, memory: Any, window: float) -> dict[str, float | None]:
    """Copies and sets: union time, the part with no kernel running, bytes by direction, pageable copies."""
    import numpy as np

    def share(ns: float) -> float | None:
        return ns / window if window > 0 else None

    kernels = compute | comm
    mem = dev.union(memory)
    exposed = dev.union(memory | kernels) - dev.union(kernels)
    copies = (dev.direction >= 0) & dev.inside
    out: dict[str, float | None] = {"memory_op_time": mem * NS, "memory_op_fraction": share(mem),
                                    "memory_op_exposed": exposed * NS, "memory_op_exposed_fraction": share(exposed)}
    for key, direction in (("htod", "HtoD"), ("dtoh", "DtoH"), ("dtod", "DtoD")):
        index = dev.directions.index(direction) if direction in dev.directions else -1
        rows = copies & (dev.direction == index) if index >= 0 else np.zeros(len(dev), dtype=bool)
        size = dev.bytes[rows]
        out[f"memcpy_{key}_bytes"] = (float(size[np.isfinite(size)].sum())
                                      if not rows.any() or np.isfinite(size).any() else None)
    pageable = copies & (dev.pageable == 1.0)
    paged = dev.union(pageable)
    out["pageable_copy_count"] = float(pageable.sum())
    out["pageable_copy_time"] = paged * NS
    out["pageable_copy_fraction"] = share(paged)
    return out

