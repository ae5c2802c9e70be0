"""A key given twice in one JSON object: Python's json (like msgspec) silently keeps the last value,
so a summary with two `total_time` members would be analysed with whichever came second. The
decoder's pairs hook notices the repeat (a length comparison, C-speed for an object without one);
the object's place in the document is named afterwards, by a walk made only when there was one.
"""

from __future__ import annotations

import json
import re
from typing import Any

_PLAIN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,79}$")  # a key shown as it is in a path; others are quoted
MAX_SHOWN = 80


class Repeated(dict[str, Any]):
    """The object (its last value for each key, as json builds it) and the first key it repeated."""

    __slots__ = ("key",)
    key: str


class RepeatTracker:
    """`object_pairs_hook` for json.loads that marks objects naming a key twice."""

    def __init__(self) -> None:
        self.found = False

    def __call__(self, pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        obj = dict(pairs)
        if len(obj) == len(pairs):
            return obj
        self.found = True
        repeated = Repeated(obj)
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                repeated.key = key
                break
            seen.add(key)
        return repeated


def repeat_problem(data: Any) -> str | None:
    """`the key "x" appears twice in a.b[0]` for the first object (in document order) that repeats a
    key, or None. Iterative: the depth was bounded by the decoder, but a walk needs no recursion."""
    stack: list[tuple[Any, str]] = [(data, "")]
    while stack:
        item, path = stack.pop()
        if isinstance(item, Repeated):
            where = f"in {path}" if path else "at the top level"
            return f"the key {_shown(item.key)} appears twice {where}: only one value would be read"
        if isinstance(item, dict):
            children = [(v, f"{path}.{_part(k)}" if path else _part(k)) for k, v in item.items()]
        elif isinstance(item, list):
            children = [(v, f"{path}[{i}]") for i, v in enumerate(item)]
        else:
            continue
        stack.extend(reversed(children))  # popped in file order
    return None


def _shown(key: str) -> str:
    """The key as JSON spells it (quoted, escapes for control characters: the error stays one line)."""
    text = json.dumps(key)
    return text if len(text) <= MAX_SHOWN + 2 else text[:MAX_SHOWN] + '…"'


def _part(key: str) -> str:
    return key if _PLAIN.match(key) else _shown(key)
