"""Flow edges between slices, from the flow ids phase 2 collected in `Resolved` (TrackEvent flow_ids and
terminating_flow_ids, and legacy bind ids)."""

from __future__ import annotations

from typing import Any


def flow_edges(slices: Any, ids: Any, ends: Any) -> tuple[Any, Any]:
    """(from, to) slice ids: consecutive slices carrying one flow id, in emission order; a terminating
    id closes its chain (the next slice with that id starts a new one)."""
    import numpy as np

    slices = np.asarray(slices, dtype=np.int64)
    if len(slices) < 2:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    ids = np.asarray(ids, dtype=np.uint64)
    ends = np.asarray(ends, dtype=np.uint8)
    order = np.argsort(ids, kind="stable")
    s, i, e = slices[order], ids[order], ends[order]
    link = (i[1:] == i[:-1]) & (e[:-1] == 0) & (s[1:] != s[:-1])
    return s[:-1][link].copy(), s[1:][link].copy()
