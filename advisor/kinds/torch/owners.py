"""One owner for each piece of the device's host-wait idle time (docs/time-budget.md: each piece of time is
counted once). With nothing queued, the device waits for whatever the host is doing, in this order:
- the data loader: the part of a host-wait gap in which the loader's __next__ runs. A faster loader gives it back.
- a synchronisation: the host-wait idle from a sync's start to the next sync's (the sync drained the queue; the
  host, released, refills it only as fast as it runs), less the loader's part, and no longer than that sync:
  without it the host would have run ahead by at most the time it spent blocked.
- the rest (other host work: Python, dispatch, launches): what a cheaper launch path can give back.
The step figures less the loader's idle say whether the steps' spread is the loader's or has another cause."""

from __future__ import annotations

from typing import Any

from advisor.kinds.torch.idle import HOST_WAIT, Idle
from advisor.kinds.torch.window import Window, share, variation
from advisor.metrics.intervals import covered, intersect

NS = 1e-9


def owned_idle(idle: Idle, loader: tuple[Any, Any], syncs: tuple[Any, Any], w: Window) -> dict[str, float | None]:
    """dataloader_idle, sync_idle and idle_host_wait_other (s) and their shares of the window, and the steps' spread
    less the loader's idle (loader_free_step_cv, loader_free_step_excess in s). `loader` and `syncs` are merged
    segments (ns) clipped to the window."""
    import numpy as np

    length = w.length
    host = idle.gap_category == HOST_WAIT
    h_start, h_end = idle.gap_start[host], idle.gap_end[host]
    l_start, l_end = intersect(h_start, h_end, *loader)  # the loader running while nothing is queued
    # after each sync, up to the next one, the host-wait idle the loader does not own: had the host not been
    # blocked it would have queued that work earlier, by at most the time it was blocked
    s_start, s_end = syncs
    bounds = np.append(s_start, np.inf)  # the last sync's stretch runs to the window's end
    free = covered(h_start, h_end, bounds) - covered(l_start, l_end, bounds)
    sync_part = np.minimum(np.diff(free), s_end - s_start)
    host_wait = float((h_end - h_start).sum())
    loader_time, sync_time = float((l_end - l_start).sum()), float(sync_part.sum())
    other = max(host_wait - loader_time - sync_time, 0.0)
    m: dict[str, float | None] = {
        "dataloader_idle": loader_time * NS, "dataloader_idle_fraction": share(loader_time, length),
        "sync_idle": sync_time * NS, "sync_idle_fraction": share(sync_time, length),
        "idle_host_wait_other": other * NS, "idle_host_wait_other_fraction": share(other, length)}
    m.update(loader_free_steps(w, (l_start, l_end)))
    return m


def loader_free_steps(w: Window, loader_idle: tuple[Any, Any] | None) -> dict[str, float | None]:
    """The steps' coefficient of variation and summed time above the median (s), each step less the device's
    idle time waiting for the data loader in it (`loader_idle` segments; None without a device: the steps as
    they are). Three steps or more, else unavailable."""
    import numpy as np

    d = w.step_end - w.step_start
    if loader_idle is not None:
        d = d - (covered(*loader_idle, w.step_end) - covered(*loader_idle, w.step_start))
    cv = variation(d)
    if cv is None:
        return {"loader_free_step_cv": None, "loader_free_step_excess": None}
    return {"loader_free_step_cv": cv, "loader_free_step_excess": len(d) * (float(d.mean()) - float(np.median(d))) * NS}
