"""Problems of a pack collected as they are found, so `rules validate` lists them all at once."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from advisor.core.errors import suggest
from advisor.core.expr import ExprError, Expression, compile_expression


class Checker:
    """Collects problems instead of stopping at the first."""

    def __init__(self) -> None:
        self.problems: list[str] = []

    def add(self, where: str, problem: str) -> None:
        self.problems.append(f"{where}: {problem}")

    def keys(self, where: str, obj: dict[str, Any], allowed: Sequence[str], required: Sequence[str]) -> None:
        for key in obj:
            if not isinstance(key, str) or key not in allowed:
                self.add(where, f"unknown key '{key}'{suggest(str(key), allowed)}")
        for key in required:
            if key not in obj or obj[key] in (None, ""):
                self.add(where, f"'{key}' is required")

    def text(self, where: str, obj: dict[str, Any], key: str) -> str:
        value = obj.get(key, "")
        if value is None:
            return ""
        if not isinstance(value, str):
            self.add(where, f"'{key}' must be text")
            return ""
        return value.strip()

    def expression(self, where: str, what: str, text: Any, known: set[str]) -> Expression | None:
        try:
            return compile_expression(text, known)
        except ExprError as exc:
            self.add(where, f"{what}: {exc.pointed()}")
            return None

    def text_list(self, where: str, item: dict[str, Any], key: str, what: str) -> list[str] | None:
        value = item.get(key) or []
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            self.add(where, f"'{key}' must be a list of {what}")
            return None
        return value
