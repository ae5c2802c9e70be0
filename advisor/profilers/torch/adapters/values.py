"""The values of a Kineto event's args as the reader's columns keep them: numbers (also written as text), ids
("0x1f", "stream 7"), a kernel's grid or block as "x,y,z", and an operator's recorded inputs as compact JSON text."""

from __future__ import annotations

import re
from typing import Any

import msgspec

MAX_JSON = 4096  # characters of an operator's recorded inputs: its shapes, never a page of them
_TRAILING_INT = re.compile(r"(-?\d+)\s*$")


def number(value: Any) -> float:
    """A number, or a number written as text; NaN for anything else."""
    if isinstance(value, (int, float)):
        try:
            return float(value)
        except OverflowError:  # an integer past float range
            return float("nan")
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            pass
        try:
            return float(int(value, 0))
        except ValueError:
            return float("nan")
    return float("nan")


def id_value(value: Any) -> float:
    """An id: a number, "0x1f", "108", or the number ending a label ("stream 7")."""
    found = number(value)
    if found != found and isinstance(value, str) and (match := _TRAILING_INT.search(value)):
        return float(match.group(1))
    return found


def json_text(value: Any) -> str:
    """A recorded input list as compact JSON text; "" for none or one longer than MAX_JSON."""
    if value is None:
        return ""
    text = msgspec.json.encode(value).decode()
    return text if len(text) <= MAX_JSON else ""


def dims_text(value: Any) -> str:
    """A grid or block, [x, y, z] of whole numbers, as "x,y,z"; "" for anything else."""
    if not isinstance(value, (list, tuple)) or not 0 < len(value) <= 3:
        return ""
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and float(v).is_integer() for v in value):
        return ""
    return ",".join(str(int(v)) for v in value)
