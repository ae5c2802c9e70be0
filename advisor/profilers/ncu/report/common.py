"""What every Nsight Compute report section shares: small value helpers and the shortened kernel signature."""

from __future__ import annotations

import re

from advisor.core import units as fmt
from advisor.core.model import Analysis, Metric
from advisor.report.document import Table, escape
from advisor.report.view import View

NO_VALUE = "—"
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(])")
_SIGNATURE_LIMIT = 110  # characters of a kernel signature shown in the setup table
_TEMPLATE_LIMIT = 24  # template argument lists longer than this are shown as <…>


# --- small helpers --------------------------------------------------------------------------------


def _has(view: View, name: str | None) -> bool:
    return bool(name) and view.raw(name) is not None  # type: ignore[arg-type]


def _any(view: View, names: list[str | None]) -> bool:
    return any(_has(view, n) for n in names)


def _metric(view: View, name: str) -> Metric | None:
    return view.analysis.metrics.get(name)


def _source(view: View, name: str) -> str:
    metric = _metric(view, name)
    if metric is None or metric.value is None:
        return NO_VALUE
    return "ncu" if metric.source == "reported" else "advisor"


def _value_rows(view: View, rows: list[list[str]]) -> tuple[tuple[str, str, str], ...]:
    """(label, value, source) for each row; every row is kept, the missing ones as unavailable."""
    return tuple((escape(label), view.show(name) if _metric(view, name) else fmt.UNAVAILABLE, _source(view, name))
                 for name, label in rows)


def _value_table(view: View, rows: list[list[str]], caption: str = "") -> Table | None:
    """A Metric | Value | Source table, or None when none of its figures exist."""
    if not _any(view, [name for name, _ in rows]):
        return None
    return Table(("Metric", "Value", "Source"), _value_rows(view, rows), align=("left", "right", "left"),
                 caption=caption)


def _shape(analysis: Analysis) -> str:
    """`(224, 1, 1)×(32, 4, 1)` as ncu prints grid × block, or what of it is known."""
    grid, block = analysis.info.get("grid_dims"), analysis.info.get("block_dims")
    if grid and block:
        return f"{escape(grid)}×{escape(block)}"
    view = View(analysis)
    if _has(view, "grid_size") and _has(view, "block_size"):
        return f"{fmt.count(view.raw('grid_size'))} blocks × {fmt.count(view.raw('block_size'))} threads"
    return "launch shape unavailable"


def short_signature(signature: str, limit: int = _SIGNATURE_LIMIT) -> str:
    """A kernel signature readable in a table: long template argument lists folded to `<…>`,
    then cut at `limit` characters. The full signature stays in the raw profile data."""
    out, i = [], 0
    while i < len(signature):
        char = signature[i]
        if char != "<":
            out.append(char)
            i += 1
            continue
        depth, j = 0, i
        for j in range(i, len(signature)):
            depth += {"<": 1, ">": -1}.get(signature[j], 0)
            if depth == 0:
                break
        inner = signature[i + 1:j]
        out.append("<…>" if len(inner) > _TEMPLATE_LIMIT else signature[i:j + 1])
        i = j + 1
    text = " ".join("".join(out).split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"

