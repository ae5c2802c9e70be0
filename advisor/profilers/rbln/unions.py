"""Interval unions over an RBLN slice table (slices.py) per unit (a device, or a device's chiplet on
Rebel100) and per (group, unit), through the shared grouped unions (metrics/grouped.py)."""

from __future__ import annotations

from typing import Any

from advisor.metrics.grouped import rows_of, union
from advisor.profilers.rbln.slices import Slices


def unit_view(s: Slices, mask: Any) -> tuple[Any, Any]:
    """The unit view's entries of the masked rows: (rows ascending, their units)."""

    if s.x_row is None:
        return rows_of(mask), s.x_unit[mask]
    keep = mask[s.x_row]
    return s.x_row[keep], s.x_unit[keep]


def per_unit(s: Slices, mask: Any) -> Any:
    """The union of the masked rows in each unit (ns)."""
    rows, unit = unit_view(s, mask)
    return union(s, rows, unit, len(s.units))


def per_unit_groups(s: Slices, mask: Any, group: Any, groups: int) -> Any:
    """The union of the masked rows per (group, unit), as an array groups × units (ns). `group` is per row."""
    import numpy as np

    units = len(s.units)
    rows, unit = unit_view(s, mask)
    key = group[rows].astype(np.int32 if groups * units < 2**31 else np.int64)
    key *= units
    key += unit
    flat = union(s, rows, key, groups * units)
    return flat.reshape(groups, units)
