"""The torch trace's tables (titles and units: data/report.yaml `breakdowns:`): kernel classes, top kernels,
the idle breakdown and streams (the steps table is window.py's). Times are the events' time inside the window;
device-side waits are not kernel time and are left out of the class and top-kernel tables."""

from __future__ import annotations

from typing import Any

from advisor.core.events import NS
from advisor.core.trace import Breakdown, kind_breakdown
from advisor.metrics.grouped import union as grouped_union
from advisor.profilers.torch import KIND
from advisor.profilers.torch.classes import Knowledge
from advisor.profilers.torch.device import Device
from advisor.profilers.torch.idle import CATEGORIES

CLASS_COLUMNS = ("time", "share", "count")
TOP_COLUMNS = ("time", "share", "count", "mean")
IDLE_COLUMNS = ("time", "share")
STREAM_COLUMNS = ("busy", "kernels", "max_queue")


def _sums(group: Any, weight: Any, groups: int) -> tuple[Any, Any]:
    import numpy as np

    return (np.bincount(group, weights=weight, minlength=groups)[:groups],
            np.bincount(group, minlength=groups)[:groups])


def kernel_classes(dev: Device, know: Knowledge, rows: Any) -> Breakdown:
    """Summed time per class of the chosen rows (kernels, copies and sets in the window), largest first."""
    import numpy as np

    layout = kind_breakdown(KIND, "kernel_classes", CLASS_COLUMNS)
    duration = dev.clipped_duration()[rows]
    time, count = _sums(dev.klass[rows].astype(np.int64), duration, len(know.classes))
    total = float(time.sum())
    order = sorted((i for i in range(len(know.classes)) if count[i]), key=lambda i: (-time[i], i))
    return layout.make([(know.classes[i].title, (float(time[i]) * NS, float(time[i]) / total if total > 0 else None,
                                                 float(count[i]))) for i in order],
                       "Summed durations of the kernels, copies and sets of each class inside the window (overlapping "
                       "events each count); classes by name pattern (data/kernels.yaml), first match wins.")


def top_kernels(dev: Device, know: Knowledge, rows: Any) -> Breakdown:
    """The kernels (and copies, sets) with the most summed time in the window, by name."""
    import numpy as np

    layout = kind_breakdown(KIND, "top_kernels", TOP_COLUMNS)
    duration = dev.clipped_duration()[rows]
    time, count = _sums(dev.name[rows].astype(np.int64), duration, len(dev.names))
    total = float(time.sum())
    used = np.flatnonzero(count)
    ranked = used[np.lexsort((used, -time[used]))]
    top = ranked[:know.top_kernels]
    out = [(dev.names[i], (float(time[i]) * NS, float(time[i]) / total if total > 0 else None, float(count[i]),
                           float(time[i]) / float(count[i]) * NS)) for i in top.tolist()]
    return layout.make(out, "Summed durations by name inside the window; share of the summed time of every kernel, "
                            "copy and set.", total_rows=len(ranked) if len(ranked) > len(top) else None)


def idle_breakdown(time: tuple[float, float, float], window: float) -> Breakdown:
    layout = kind_breakdown(KIND, "idle_breakdown", IDLE_COLUMNS)
    return layout.make([(key, (t * NS, t / window if window > 0 else None)) for key, t in zip(CATEGORIES, time,
                                                                                                strict=True)],
                       "Device idle time in the window (no kernel, copy or set on any stream), by what ended each gap: "
                       "host wait (the next event was queued after the device went idle), kernel wait (queued work, "
                       "a gap under the kernel-wait threshold), other.")


def streams(dev: Device, work: Any, longest: Any) -> Breakdown:
    """Per stream: busy time (union of its work in the window), kernels in the window, the longest queue."""
    import numpy as np

    layout = kind_breakdown(KIND, "streams", STREAM_COLUMNS)
    groups = len(dev.tracks)
    rows = np.flatnonzero(work)
    busy = grouped_union(dev.clipped, rows, dev.track[rows].astype(np.int64), groups) if len(rows) else np.zeros(groups)
    kernels = np.bincount(dev.track[dev.kernels() & dev.inside & ~dev.wait].astype(np.int64), minlength=groups)
    seen = np.bincount(dev.track[dev.inside].astype(np.int64), minlength=groups)
    order = sorted((i for i in range(groups) if seen[i]), key=lambda i: (-busy[i], i))
    return layout.make([(dev.tracks[i], (float(busy[i]) * NS, float(kernels[i]), float(longest[i]))) for i in order],
                       "Busy: the union of the stream's kernels, copies and sets inside the window; longest queue: "
                       "events queued by a launch call and not yet finished.")
