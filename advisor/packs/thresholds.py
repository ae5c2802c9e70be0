"""A rule's params as thresholds: the unit each takes from the metric it is compared with, and the values
that cannot mean what their author wanted. Read by the pack checker and by the engine (`--set`)."""

from __future__ import annotations

import ast
import itertools

from advisor.core.expr import Expression

_SAME_UNIT = (ast.Add, ast.Sub, ast.Div)  # operands of these share a unit (a ratio of two sizes, a size less one)


def param_problem(name: str, value: float, unit: str) -> str | None:
    """A threshold that cannot mean what its author wanted: negative, or a percent given for a
    fraction (70 for 0.70)."""
    if value < 0:
        return f"{name} = {value:g} is negative; thresholds here are sizes, times, ratios or fractions"
    if unit == "fraction" and value > 1:
        return f"{name} = {value:g} but it is a fraction (0..1); did you mean {value / 100:g}?"
    return None


def param_units(when: Expression, params: dict[str, float], units: dict[str, str],
                estimate: Expression | None = None) -> dict[str, str]:
    """A param compared with a metric, or added to, subtracted from or divided by one in the estimate, takes that
    metric's unit (`x < max_fraction` -> fraction, `x / min_average_bytes` -> bytes): 25 %, not 0.25 or 32768."""
    found: dict[str, str] = {}
    for node in (n for e in (when, estimate) if e for n in ast.walk(ast.parse(e.text, mode="eval"))):
        pairs = (list(itertools.pairwise([node.left, *node.comparators])) if isinstance(node, ast.Compare) else
                 [(node.left, node.right)] if isinstance(node, ast.BinOp) and isinstance(node.op, _SAME_UNIT) else [])
        for param, other in (pair for a, b in pairs for pair in ((a, b), (b, a))):
            unit = units.get(other.id) if isinstance(other, ast.Name) else None
            if isinstance(param, ast.Name) and param.id in params and unit:
                found.setdefault(param.id, unit)
    return found
