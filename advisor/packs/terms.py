"""A pack's `terms` section: phrases of advice chosen by a text field of the profile, or that field's own text
quoted (docs/rule-packs.md), which a rule's texts name and its expressions never read."""

from __future__ import annotations

from typing import Any

from advisor.packs.checker import Checker
from advisor.packs.model import TermDef
from advisor.packs.validate import IDENT, Declared

_TERM_KEYS = ("name", "from", "values", "description")
MAX_TERM_TEXT = 300  # characters: a phrase of advice, not a paragraph


def term_def(check: Checker, where: str, item: dict[str, Any], pack: str, declared: Declared) -> TermDef | None:
    """A term: a snake_case name no input, metric or hardware figure has, the text field it is chosen by, and
    its texts (plain phrases: no placeholders, bounded)."""
    check.keys(where, item, _TERM_KEYS, ("name", "from"))
    name, source, values = item.get("name"), item.get("from"), item.get("values")
    if not isinstance(name, str) or not IDENT.match(name):
        check.add(where, f"term name {name!r} must be a snake_case identifier")
        return None
    where = f"{where}: term '{name}'"
    if name in declared.names:
        check.add(where, "has the name of an input, metric or hardware figure")
    if not isinstance(source, str) or not IDENT.match(source):
        check.add(where, f"from {source!r} must name a profile's text field (e.g. device_vendor)")
        return None
    if values is None:  # the field's own text, quoted (a trace's operator stack)
        return TermDef(name=name, source=source, values=None, description=check.text(where, item, "description"),
                       pack=pack, where=where)
    if not isinstance(values, dict) or not values:
        check.add(where, "values must map each value of the field to its text")
        return None
    texts: dict[str, str] = {}
    for key, text in values.items():
        if not isinstance(text, str) or not text.strip():
            check.add(where, f"values: {key!r} must map to text")
        elif len(text) > MAX_TERM_TEXT or "{" in text or "}" in text:
            check.add(where, f"values: {key!r}: a term is a phrase of at most {MAX_TERM_TEXT} characters, "
                             "without braces")
        else:
            texts[str(key)] = " ".join(text.split())
    return TermDef(name=name, source=source, values=texts, description=check.text(where, item, "description"),
                   pack=pack, where=where)
