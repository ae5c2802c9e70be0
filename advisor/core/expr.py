"""The safe expression language of rule packs: `when`, `estimated_speedup` and metric `expr`.

Pack text is parsed with `ast` and only a whitelist of node types is accepted; the tree is then
compiled into nested closures. Nothing is ever passed to eval/exec. A missing value is unknown
(None) and propagates with three-valued (Kleene) logic; division by zero is unknown too.
"""

from __future__ import annotations

import ast
import itertools
import math
import operator
import re
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass

from advisor.core import units
from advisor.core.errors import suggest

MAX_LENGTH = 2000  # characters; a rule condition longer than this is not a rule a reader can check
MAX_DEPTH = 32  # nesting of the syntax tree

Value = float | bool | None
Env = Mapping[str, float | None]
Evaluator = Callable[[Env], Value]

FUNCTIONS = ("min", "max", "abs", "floor", "ceil", "exists", "max_known", "min_known")
_ONE_ARGUMENT: dict[str, Callable[[float], float]] = {"abs": abs, "floor": math.floor, "ceil": math.ceil}


class ExprError(Exception):
    """An expression refused at load time, with the offending span for a caret."""

    def __init__(self, problem: str, text: str, start: int = 0, end: int | None = None):
        super().__init__(problem)
        self.problem = problem
        self.text = text
        self.start = max(0, min(start, len(text)))
        self.end = max(self.start + 1, min(end if end is not None else self.start + 1, len(text)))

    def pointed(self) -> str:
        """The problem, the expression and a caret under the offending part."""
        shown = self.text if len(self.text) <= 160 else self.text[:157] + "..."
        if self.start >= len(shown):
            return f"{self.problem}\n    {shown}"
        width = max(1, min(self.end, len(shown)) - self.start)
        return f"{self.problem}\n    {shown}\n    {' ' * self.start}{'^' * width}"


@dataclass(frozen=True)
class Expression:
    text: str
    names: tuple[str, ...]  # names read, in order of first appearance
    evaluate: Evaluator


def _span(node: ast.AST) -> tuple[int, int]:
    start = getattr(node, "col_offset", 0)
    return start, getattr(node, "end_col_offset", start + 1) or start + 1


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


def _div(a: float, b: float) -> float | None:
    return None if b == 0 else a / b


_ARITH: dict[type, Callable[[float, float], float | None]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: _div,
}
_COMPARE: dict[type, Callable[[float, float], bool]] = {
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
}
_REFUSED = {
    ast.Attribute: "attribute access is not allowed",
    ast.Subscript: "subscripts are not allowed",
    ast.Lambda: "lambdas are not allowed",
    ast.NamedExpr: "assignment (:=) is not allowed",
    ast.ListComp: "comprehensions are not allowed",
    ast.SetComp: "comprehensions are not allowed",
    ast.DictComp: "comprehensions are not allowed",
    ast.GeneratorExp: "comprehensions are not allowed",
    ast.JoinedStr: "strings are not allowed",
    ast.IfExp: "conditional expressions are not allowed; use and/or",
    ast.Starred: "unpacking is not allowed",
}


def _truth(v: Value) -> bool | None:
    return None if v is None else bool(v)


class _Compiler:
    def __init__(self, text: str, known: Collection[str] | None):
        self.text = text
        self.known = known
        self.names: list[str] = []

    def fail(self, problem: str, node: ast.AST) -> ExprError:
        return ExprError(problem, self.text, *_span(node))

    def compile(self, node: ast.AST, depth: int = 0) -> Evaluator:
        if depth > MAX_DEPTH:
            raise self.fail(f"expression is nested deeper than {MAX_DEPTH} levels", node)
        method = getattr(self, f"_{type(node).__name__}", None)
        if method is None:
            problem = _REFUSED.get(type(node), f"{type(node).__name__} is not allowed in an expression")
            raise self.fail(problem, node)
        return method(node, depth + 1)

    def _Constant(self, node: ast.Constant, depth: int) -> Evaluator:
        value = node.value
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.fail("only numbers are allowed as constants", node)
        number = float(value)
        if not math.isfinite(number):
            raise self.fail("the number is out of range", node)
        return lambda env: number

    def _Name(self, node: ast.Name, depth: int) -> Evaluator:
        name = node.id
        if name in FUNCTIONS:
            raise self.fail(f"'{name}' is a function; call it with parentheses", node)
        if self.known is not None and name not in self.known:
            raise self.fail(f"unknown name '{name}'{suggest(name, self.known)}", node)
        if name not in self.names:
            self.names.append(name)
        return lambda env: env.get(name)

    def _UnaryOp(self, node: ast.UnaryOp, depth: int) -> Evaluator:
        operand = self.compile(node.operand, depth)
        if isinstance(node.op, ast.USub):
            return lambda env: None if (v := operand(env)) is None else -float(v)
        if isinstance(node.op, ast.UAdd):
            return operand
        if isinstance(node.op, ast.Not):
            return lambda env: None if (v := _truth(operand(env))) is None else not v
        raise self.fail("this operator is not allowed", node)

    def _BinOp(self, node: ast.BinOp, depth: int) -> Evaluator:
        op = _ARITH.get(type(node.op))
        if op is None:
            what = "powers (**) are" if isinstance(node.op, ast.Pow) else "this operator is"
            raise self.fail(f"{what} not allowed; use + - * /", node)
        left, right = self.compile(node.left, depth), self.compile(node.right, depth)

        def binop(env: Env) -> Value:
            a, b = left(env), right(env)
            if a is None or b is None:
                return None
            result = op(float(a), float(b))
            return None if result is None else _finite(result)

        return binop

    def _Compare(self, node: ast.Compare, depth: int) -> Evaluator:
        parts = [self.compile(node.left, depth)] + [self.compile(c, depth) for c in node.comparators]
        ops = []
        for op_node in node.ops:
            op = _COMPARE.get(type(op_node))
            if op is None:
                raise self.fail("only < <= > >= == != comparisons are allowed", node)
            ops.append(op)

        def compare(env: Env) -> Value:
            values = [p(env) for p in parts]
            result: bool | None = True
            for op, a, b in zip(ops, values, values[1:], strict=False):
                if a is None or b is None:
                    result = None if result is not False else False
                elif not op(float(a), float(b)):
                    return False
            return result

        return compare

    def _BoolOp(self, node: ast.BoolOp, depth: int) -> Evaluator:
        parts = [self.compile(v, depth) for v in node.values]
        is_and = isinstance(node.op, ast.And)

        def kleene(env: Env) -> Value:
            unknown = False
            for part in parts:
                v = _truth(part(env))
                if v is None:
                    unknown = True
                elif v is not is_and:  # False decides an `and`, True decides an `or`
                    return v
            return None if unknown else is_and

        return kleene

    def _Call(self, node: ast.Call, depth: int) -> Evaluator:
        if not isinstance(node.func, ast.Name) or node.func.id not in FUNCTIONS:
            raise self.fail(f"only the functions {', '.join(FUNCTIONS)} can be called", node)
        if node.keywords:
            raise self.fail("keyword arguments are not allowed", node)
        fname = node.func.id
        if fname == "exists":
            if len(node.args) != 1 or not isinstance(node.args[0], ast.Name):
                raise self.fail("exists() takes one metric name", node)
            probe = self._Name(node.args[0], depth)
            return lambda env: probe(env) is not None
        single = _ONE_ARGUMENT.get(fname)
        if not node.args or (single and len(node.args) != 1):
            raise self.fail(f"{fname}() needs {'one argument' if single else 'arguments'}", node)
        args = [self.compile(a, depth) for a in node.args]
        if single:
            return lambda env: None if (v := args[0](env)) is None else float(single(float(v)))
        pick = min if fname.startswith("min") else max
        strict = not fname.endswith("_known")

        def extreme(env: Env) -> Value:
            """min/max are unknown when any argument is; min_known/max_known take what is known
            (unknown only when nothing is), e.g. the busiest of the engines a profile reports."""
            values = [a(env) for a in args]
            known = [float(v) for v in values if v is not None]
            if not known or (strict and len(known) < len(values)):
                return None
            return pick(known)

        return extreme


def compile_expression(text: object, known: Collection[str] | None = None) -> Expression:
    """Parse and check `text`; raise ExprError (with a caret span) for anything not allowed.

    `known`, when given, is the set of names the expression may read; others are refused with a
    "did you mean" suggestion.
    """
    if isinstance(text, (bool, int, float)):
        text = str(text)
    if not isinstance(text, str):
        raise ExprError("an expression must be a string", str(text)[:80])
    flat = " ".join(text.split())  # folded YAML may span lines; carets point into the flat text
    if not flat:
        raise ExprError("the expression is empty", flat)
    if len(flat) > MAX_LENGTH:
        raise ExprError(f"expression is {len(flat)} characters long; the limit is {MAX_LENGTH}", flat[:80])
    try:
        tree = ast.parse(flat, mode="eval")
    except SyntaxError as exc:
        start = (exc.offset or 1) - 1
        raise ExprError(f"syntax error: {exc.msg}", flat, start) from None
    except (RecursionError, MemoryError, ValueError):
        raise ExprError("the expression is too deeply nested", flat[:80]) from None
    compiler = _Compiler(flat, known)
    evaluate = compiler.compile(tree.body)
    return Expression(text=flat, names=tuple(compiler.names), evaluate=evaluate)


def compared_constants(expression: Expression) -> list[tuple[str, float, int, int]]:
    """(name, constant, start, end) for each number compared directly with a name, e.g. the 0.5 of
    `dma_active_time_percent > 0.5`; used to show thresholds in the name's unit and to catch a
    percent written where a fraction belongs (`> 50`)."""
    found = []
    for node in ast.walk(ast.parse(expression.text, mode="eval")):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            for a, b in itertools.pairwise(sides):
                for name, constant in ((a, b), (b, a)):
                    if isinstance(name, ast.Name) and isinstance(constant, ast.Constant) \
                            and isinstance(constant.value, (int, float)) and not isinstance(constant.value, bool):
                        start, end = _span(constant)
                        found.append((name.id, float(constant.value), start, end))
    return found


def fraction_mistakes(expression: Expression, units: Mapping[str, str]) -> list[str]:
    """Numbers above 1 compared with a fraction (a percent written where the profiler's 0..1
    fraction belongs): `dma_active_time_percent > 50` can never hold."""
    return [f"'{name} ... {constant:g}' compares a fraction (0..1) with {constant:g}"
            + (f"; did you mean {constant / 100:g}?" if constant <= 100 else "")
            for name, constant, _, _ in compared_constants(expression)
            if units.get(name) == "fraction" and constant > 1]


def annotated(expression: str, values: Mapping[str, tuple[float | None, str]]) -> str:
    """An expression with each name followed by its value and unit, and each number compared with
    a name shown in that name's unit, so a reader can check it:
    `dma_active_time_percent (26.42 %) > 50.00 %`."""
    try:
        parsed = compile_expression(expression)
    except ExprError:
        return expression
    text = parsed.text
    edits: list[tuple[int, int, str]] = []
    for name, constant, start, end in compared_constants(parsed):
        unit = values.get(name, (None, ""))[1]
        if unit in units.SHOWN_IN_UNIT:
            edits.append((start, end, units.value(constant, unit)))
    for match in re.finditer(r"\b[a-z_][a-z0-9_]*\b", text):
        name = match.group(0)
        if name in values:
            number, unit = values[name]
            edits.append((match.end(), match.end(), f" ({units.value(number, unit)})"))
    for start, end, replacement in sorted(edits, reverse=True):
        text = text[:start] + replacement + text[end:]
    return text
