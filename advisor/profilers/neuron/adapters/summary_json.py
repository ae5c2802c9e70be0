"""summary-json, in every shape seen in the wild (reference §2):

- `{"n_<hash>": {metrics}, ...}`: one entry per profile (several with `-d DIR`);
- a flat metrics dict, as people paste it;
- `{"summary": [{metrics}], "instruction": [...], ...}`: the legacy full JSON's summary;
- any of these after log lines on stdout.
"""

from __future__ import annotations

import json
from typing import Any

from advisor.core.errors import AdvisorError
from advisor.inputs.limits import check_json_value, depth_refusal
from advisor.inputs.text import first_json_start
from advisor.profilers.neuron.adapters.repeated_keys import RepeatTracker, repeat_problem

NAME = "summary-json"


def sniff(text: str) -> bool:
    return first_json_start(text) is not None


def _is_metrics(obj: Any) -> bool:
    return isinstance(obj, dict) and any(
        isinstance(v, (int, float, str)) and not isinstance(v, bool) for v in obj.values()
    )


def parse(text: str, where: str) -> tuple[str, list[tuple[str, dict[str, Any]]]]:
    """The file's shape and its entries as (entry name, raw fields)."""
    start = first_json_start(text)
    if start is None:
        raise AdvisorError(where, "no JSON object found")
    repeats = RepeatTracker()
    try:
        data = json.loads(text[start:], parse_int=_integer, object_pairs_hook=repeats)
    except json.JSONDecodeError as exc:
        raise AdvisorError(where, f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    except RecursionError:
        raise AdvisorError(where, depth_refusal()) from None
    check_json_value(data, where)
    problem = repeat_problem(data) if repeats.found else None
    if problem:
        raise AdvisorError(where, problem)
    if not isinstance(data, dict):
        raise AdvisorError(where, f"expected a JSON object with profile metrics, found a JSON {_kind(data)}")

    summary = data.get("summary")
    if isinstance(summary, list) and summary and all(isinstance(s, dict) for s in summary):
        names = ["summary"] if len(summary) == 1 else [f"summary[{i}]" for i in range(len(summary))]
        return "legacy summary list", list(zip(names, summary, strict=True))
    if isinstance(summary, dict):
        return "legacy summary object", [("summary", summary)]

    nested = [(str(k), v) for k, v in data.items() if isinstance(v, dict)]
    if nested and len(nested) == len(data) and all(_is_metrics(v) for _, v in nested):
        return "profile-id entries", nested
    return "flat", [("profile", data)]


def _integer(text: str) -> int | float:
    """A JSON integer; one too long for int() (Python refuses over 4,300 digits) is out of any range a
    profile states: infinity, which the conventions read as unavailable."""
    if len(text.lstrip("-")) > 300:  # beyond any float too
        return float("-inf") if text.startswith("-") else float("inf")
    return int(text)


def _kind(data: Any) -> str:
    return {list: "array", str: "string", int: "number", float: "number", bool: "boolean"}.get(
        type(data), "null" if data is None else type(data).__name__
    )

