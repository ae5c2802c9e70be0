"""One capture stored in two formats: an Nsight Compute CSV and its text export, a legacy Neuron JSON and its
Parquet export, one run read as cores and as ranks. Their bytes differ, so their content hashes do; their
analyses agree. A capture is known by a key from its analysis (`capture_key`, stored in the profile row's
`capture` column): its identity, compared exactly, and its figures, each with the tolerance two exports of
it may differ by. A profile with the identity and figures of one stored before it is the same capture again
(`same_captures`): left out of the overview's counts and named in the run's closing line. Settings:
`same_capture:` in advisor/data/fleet_run.yaml."""

from __future__ import annotations

import bisect
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from advisor.core.model import Analysis

Values = dict[str, tuple[float | None, float]]  # metric -> (value, how far another export of it may be)


def _fields(spec: Mapping[str, Any], extra: Sequence[str]) -> list[str]:
    """The kind's identity fields (its fleet name, device and capture time fields) and the extra ones, each once."""
    names = [*spec.get("name", ()), *spec.get("device", ()), *spec.get("captured", ()), *extra]
    return list(dict.fromkeys(names))


def _tolerance(value: float | None, unit: str, settings: Mapping[str, Any]) -> float:
    """How far two exports of one figure may be apart: a relative part (a text export shows 4 significant
    digits), and for a fraction an absolute one too (percentages shown with 2 decimals: 0.43 % of 0.4312 %)."""
    if value is None:
        return 0.0
    return float(settings["relative"]) * abs(value) + (float(settings["fraction"]) if unit == "fraction" else 0.0)


def capture_key(analysis: Analysis, spec: Mapping[str, Any], settings: Mapping[str, Any]) -> str | None:
    """What identifies the capture an analysis was made from, whatever format it was stored in, as compact JSON:
    the kind and its identity fields (compared exactly), then total time and headline metrics, each with the
    tolerance two exports of it may differ by. None when the analysis has no total time: nothing would tell two
    such profiles apart."""
    total = analysis.value("total_time")
    if total is None or not math.isfinite(total):
        return None
    kind = analysis.kind
    identity = {name: analysis.info.get(name) for name in _fields(spec, (settings.get("info") or {}).get(kind, ()))}
    extra = settings.get("metrics") or {}
    names = dict.fromkeys(["total_time", *spec.get("metrics", ()), *extra.get("all", ()), *extra.get(kind, ())])
    values = {}
    for name in names:
        value = analysis.value(name)
        value = value if value is not None and math.isfinite(value) else None
        unit = analysis.metrics[name].unit if name in analysis.metrics else ""
        values[name] = [value, _tolerance(value, unit, settings)]
    return json.dumps({"kind": kind, "identity": identity, "values": values}, sort_keys=True,
                      separators=(",", ":"), ensure_ascii=True)


def _parsed(capture: object) -> tuple[str, Values] | None:
    """A stored key (untrusted: a store is a folder anyone may edit): its identity text and values, or None
    when it is missing or not what `capture_key` writes (that row is then never a duplicate)."""
    if not isinstance(capture, str) or not capture:
        return None
    try:
        data = json.loads(capture)
        values = {str(k): (None if v is None else float(v), float(t)) for k, (v, t) in data["values"].items()}
        identity = json.dumps([data["kind"], data["identity"]], sort_keys=True)
    except (ValueError, TypeError, KeyError, AttributeError):
        return None
    figures = [x for pair in values.values() for x in pair if x is not None]
    if values.get("total_time", (None, 0.0))[0] is None or not all(math.isfinite(x) for x in figures):
        return None
    return identity, values


def _close(a: Values, b: Values) -> bool:
    """Every figure of the two within the larger of their tolerances; one known and one not differ."""
    if a.keys() != b.keys():
        return False
    for name, (x, tx) in a.items():
        y, ty = b[name]
        if (x is None) != (y is None) or (x is not None and y is not None and abs(x - y) > max(tx, ty)):
            return False
    return True


def _first_order(row: Mapping[str, Any]) -> tuple[int, str, str]:
    """Which of one capture's profiles counts: the one stored first (by run), then by path; deterministic
    whatever order the workers finished in."""
    return int(row.get("run") or 0), str(row["path"]), str(row["hash"])


def same_captures(rows: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """Content hash -> the path of the profile it is the same capture as, for every analysed profile whose
    capture (and label) an earlier one has: the first by run, then path, counts; the others are duplicates.
    Rows without a capture key (error rows, stores written before the key) are never duplicates."""
    groups: dict[tuple[str, str], list[tuple[Mapping[str, Any], Values]]] = {}
    for row in rows:
        parsed = _parsed(row.get("capture")) if row.get("status") == "ok" else None
        if parsed is not None:
            groups.setdefault((row.get("label") or "", parsed[0]), []).append((row, parsed[1]))
    same: dict[str, str] = {}
    for group in groups.values():
        same.update(_duplicates(sorted(group, key=lambda item: _first_order(item[0]))))
    return same


def _duplicates(ordered: Sequence[tuple[Mapping[str, Any], Values]]) -> dict[str, str]:
    """Within one identity, in order: a profile close to one kept before it is a duplicate of the first such;
    any other is kept. Kept profiles are looked up by total time, so a large group costs n log n."""
    times: list[float] = []  # the kept profiles' total times, sorted
    kept: list[tuple[int, str, Values]] = []  # (order, path, values), in the order of `times`
    same: dict[str, str] = {}
    for order, (row, values) in enumerate(ordered):
        total, tolerance = values["total_time"]
        total = total or 0.0  # _parsed keeps none without one
        reach = 2 * tolerance + 1e-300  # tolerances are relative: a kept one within reach can be close
        lo, hi = bisect.bisect_left(times, total - reach), bisect.bisect_right(times, total + reach)
        match = min((k for k in kept[lo:hi] if _close(values, k[2])), default=None)
        if match is not None:
            same[str(row["hash"])] = match[1]
            continue
        at = bisect.bisect_right(times, total)
        times.insert(at, total)
        kept.insert(at, (order, str(row["path"]), values))
    return same


def named(rows: Iterable[Mapping[str, Any]], same: Mapping[str, str], run: int) -> tuple[str, ...]:
    """The duplicates stored by `run`, as the closing line names them: "path (same capture as other)"."""
    return tuple(sorted(f"{r['path']} (same capture as {same[r['hash']]})" for r in rows
                        if r["hash"] in same and int(r.get("run") or 0) == run))
