"""One owner for each piece of the device's host-wait idle time (docs/time-budget.md: each piece of time is
counted once). With nothing queued, the device waits for whatever the host is doing, in this order:
- the data loader: the part of a host-wait gap in which the loader's __next__ runs. A faster loader gives it back.
- a synchronisation: the host-wait idle from a sync's start to the next sync's (the sync drained the queue; the
  host, released, refills it only as fast as it runs), less the loader's part, and no longer than that sync:
  without it the host would have run ahead by at most the time it spent blocked.
- the rest, the host's own pace, split by what the host does in it (pace.py): the launch path (operators that
  queue device work, their launch calls, the Python between operators), which a cheaper launch path gives back,
  and CPU operators that queue no device work, which it does not.
The step figures less the loader's idle say whether the steps' spread is the loader's or has another cause.
One more owner takes idle time with work queued (HTA's "other"): a copy that blocks the host (host.py
`blocking_copies`; one inside a synchronisation is the sync's) owns the "other" idle while the host is blocked in
it, in the gaps that copy ends: the device waits with the copy queued, and the host, blocked, queues nothing after
it. A gap ended by other work (kernels queued before the copy, waiting on an event) is not the copy's: there the
host waits for the device, not the device for the copy. No other owner takes
"other" idle there (the launch path's part is the idle inside launch calls that do not block)."""

from __future__ import annotations

from typing import Any

from advisor.core.events import NS, EventTrace
from advisor.metrics.intervals import covered, intersect
from advisor.profilers.torch.classes import knowledge
from advisor.profilers.torch.host import blocked_copy_starts, blocking_copies
from advisor.profilers.torch.idle import HOST_WAIT, OTHER, Idle
from advisor.profilers.torch.pace import Pace, attribute, pace_metrics, pace_segments, subtract
from advisor.profilers.torch.window import Window, share, variation


def _parts(idle: Idle, loader: tuple[Any, Any], syncs: tuple[Any, Any]) -> tuple[Any, Any, Any, Any, Any]:
    """The host-wait gaps (start, end), the loader's part of them (start, end) and each sync's part (ns, one per
    sync episode)."""
    import numpy as np

    host = idle.gap_category == HOST_WAIT
    h_start, h_end = idle.gap_start[host], idle.gap_end[host]
    l_start, l_end = intersect(h_start, h_end, *loader)  # the loader running while nothing is queued
    # after each sync, up to the next one, the host-wait idle the loader does not own: had the host not been
    # blocked it would have queued that work earlier, by at most the time it was blocked
    s_start, s_end = syncs
    bounds = np.append(s_start, np.inf)  # the last sync's stretch runs to the window's end
    free = covered(h_start, h_end, bounds) - covered(l_start, l_end, bounds)
    return h_start, h_end, l_start, l_end, np.minimum(np.diff(free), s_end - s_start)


def host_pace(idle: Idle, loader: tuple[Any, Any], syncs: tuple[Any, Any], w: Window,
              trace: EventTrace) -> Pace | None:
    """The host's own pace (the host wait neither the loader nor a sync owns) split by what fills it (pace.py), read
    on `trace`; None for a filtered trace (its gaps are not idle time)."""
    if trace.extra.get("filtered"):
        return None
    _, _, l_start, l_end, sync_part = _parts(idle, loader, syncs)
    return attribute(trace, knowledge(), idle, pace_segments(idle, (l_start, l_end), syncs, sync_part), syncs,
                     w.start, w.end)


def owned_idle(idle: Idle, loader: tuple[Any, Any], syncs: tuple[Any, Any], w: Window, trace: EventTrace,
               pace: Pace | None = None) -> dict[str, float | None]:
    """dataloader_idle, sync_idle and idle_host_wait_other (s) and their shares of the window, and the steps' spread
    less the loader's idle (loader_free_step_cv, loader_free_step_excess in s), and the host's own pace split by
    what fills it (pace.py: launch_idle, launch_call_idle, cpu_op_idle; `pace` when the caller has it, else
    host_pace's). `loader` and `syncs` are merged segments (ns) clipped to the window."""
    length = w.length
    h_start, h_end, l_start, l_end, sync_part = _parts(idle, loader, syncs)
    host_wait = float((h_end - h_start).sum())
    loader_time, sync_time = float((l_end - l_start).sum()), float(sync_part.sum())
    other = max(host_wait - loader_time - sync_time, 0.0)
    m: dict[str, float | None] = {
        "dataloader_idle": loader_time * NS, "dataloader_idle_fraction": share(loader_time, length),
        "sync_idle": sync_time * NS, "sync_idle_fraction": share(sync_time, length),
        "idle_host_wait_other": other * NS, "idle_host_wait_other_fraction": share(other, length)}
    m.update(loader_free_steps(w, (l_start, l_end)))
    m.update(pace_metrics(pace or host_pace(idle, loader, syncs, w, trace), length))
    m.update(copy_idle(idle, syncs, w, trace))
    return m


def copy_idle(idle: Idle | None, syncs: tuple[Any, Any] | None, w: Window,
              trace: EventTrace | None) -> dict[str, float | None]:
    """blocking_copy_count (calls starting in the window) and blocking_copy_time (s: the host blocked in copies), both
    outside synchronisations, and blocking_copy_idle (s: the "other" idle while it is), with their shares of the window,
    read on `trace`; None without a device (`idle` and `syncs` None), for a filtered trace or without one."""
    import numpy as np

    keys = ("blocking_copy_count", "blocking_copy_time", "blocking_copy_fraction", "blocking_copy_idle",
            "blocking_copy_idle_fraction")
    if idle is None or syncs is None or trace is None or trace.extra.get("filtered"):
        return dict.fromkeys(keys)
    copies, count = blocking_copies(trace, w.start, w.end, syncs)
    c_start, c_end = subtract(*copies, np.asarray(syncs[0], dtype=float), np.asarray(syncs[1], dtype=float))
    ends = blocked_copy_starts(trace)
    at = np.clip(np.searchsorted(ends, idle.gap_end), 0, max(len(ends) - 1, 0))
    ended_by_copy = np.abs(ends[at] - idle.gap_end) < 1.0 if len(ends) else np.zeros(len(idle.gap_end), bool)
    other = (idle.gap_category == OTHER) & ended_by_copy
    i_start, i_end = intersect(idle.gap_start[other], idle.gap_end[other], c_start, c_end)
    blocked, waiting = float((c_end - c_start).sum()), float((i_end - i_start).sum())
    return dict(zip(keys, (float(count), blocked * NS, share(blocked, w.length), waiting * NS,
                           share(waiting, w.length)), strict=True))


def loader_free_steps(w: Window, loader_idle: tuple[Any, Any] | None) -> dict[str, float | None]:
    """The steps' coefficient of variation and summed time above the median (s), each step less the device's
    idle time waiting for the data loader in it (`loader_idle` segments; None without a device: the steps as
    they are, and the host's pace and the median launch call unavailable, as every device figure). Three steps
    or more, else unavailable."""
    import numpy as np

    d = w.step_end - w.step_start
    m: dict[str, float | None] = {}
    if loader_idle is not None:
        d = d - (covered(*loader_idle, w.step_end) - covered(*loader_idle, w.step_start))
    else:  # no device: nothing was idle, no launch queued anything, no copy blocked
        m.update(pace_metrics(None, w.length))
        m.update(copy_idle(None, None, w, None))
        m["launch_time_median"] = None
    cv = variation(d)
    if cv is None:
        return {**m, "loader_free_step_cv": None, "loader_free_step_excess": None}
    return {**m, "loader_free_step_cv": cv,
            "loader_free_step_excess": len(d) * (float(d.mean()) - float(np.median(d))) * NS}
