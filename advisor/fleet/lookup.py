"""`store:NAME@LABEL` -> the stored analysis JSON of that attempt, for `advisor compare --store DIR`.
LABEL is a run's --label, a capture time or `run N`; `first` and `latest` (also the default without `@`) pick by
the attempts' order (capture time, else run)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from advisor.core.errors import AdvisorError, suggest
from advisor.fleet.attempts import ordered, point, point_label
from advisor.fleet.summary import limits

if TYPE_CHECKING:
    import pandas as pd

    from advisor.fleet.store import Store

PREFIX = "store:"
FIRST, LATEST = "first", "latest"


def is_store_spec(text: str) -> bool:
    return text.startswith(PREFIX)


def parse(spec: str) -> tuple[str, str | None]:
    """NAME and LABEL of `store:NAME@LABEL` (the last `@` splits, so a name may hold one)."""
    body = spec[len(PREFIX):] if is_store_spec(spec) else spec
    name, at, label = body.rpartition("@")
    if not at:
        name, label = body, ""
    if not name:
        raise AdvisorError(spec, "give a profile name: store:NAME or store:NAME@LABEL")
    return name, label or None


def _listed(items: Sequence[str], limit: int) -> str:
    shown = ", ".join(items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")


def unknown_name(where: str, name: str, known: Iterable[str]) -> AdvisorError:
    limit = limits()["history"]["known_names"]
    names = sorted(set(known))
    listed = _listed(names, limit) if names else "none (the store is empty)"
    return AdvisorError(where, f"no profile named '{name}' in the store; known: {listed}{suggest(name, names)}")


def attempts(profiles: pd.DataFrame, name: str, where: str) -> list[dict[str, Any]]:
    """The analysed rows of `name` in order; an error naming the known names when there are none."""
    mine = profiles[(profiles["name"] == name) & (profiles["status"] == "ok")]
    if mine.empty:
        if (profiles["name"] == name).any():
            raise AdvisorError(where, f"every stored profile named '{name}' failed to load; nothing to compare")
        raise unknown_name(where, name, profiles["name"].dropna())
    return ordered(mine)


def pick(rows: list[dict[str, Any]], name: str, label: str | None, where: str) -> dict[str, Any]:
    if label in (None, FIRST, LATEST):
        edge = rows[0] if label == FIRST else rows[-1]
        chosen = [r for r in rows if point(r) == point(edge)]
        what = f"the {label or LATEST} point in time ({point_label(edge)})"
    else:
        chosen = [r for r in rows if label in (r["label"], r["captured"], f"run {r['run']}")]
        what = f"'{label}'"
        if not chosen:
            known = list(dict.fromkeys(v for r in rows for v in (r["label"], r["captured"]) if v))
            listed = ", ".join([*known, FIRST, LATEST])
            raise AdvisorError(where, f"no attempt of '{name}' is labelled '{label}'; known: {listed}"
                                      f"{suggest(label, known)}")
    if len(chosen) > 1:
        paths = ", ".join(r["path"] for r in chosen)
        raise AdvisorError(where, f"{what} matches {len(chosen)} profiles named '{name}': {paths}; give a label "
                                  "or capture time that names one")
    return chosen[0]


def resolve(spec: str, store: Store) -> Path:
    """The analysis JSON `spec` names in the store."""
    name, label = parse(spec)
    row = pick(attempts(store.profiles(), name, spec), name, label, spec)
    return store.analysis_path(row["hash"])
