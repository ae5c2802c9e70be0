"""The trace summary of a saved analysis (core/trace.py) to and from its JSON object, older schemas included:
schema 2's Neuron-only fields (hotspots, tensor loads, instruction and DMA counts) read back as today's
breakdowns and event counts, so an analysis or fleet store saved before schema 3 renders as it did."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from advisor.core.trace import TEXT, Breakdown, BreakdownColumn, BreakdownFigure, EngineBusy, Gap, TraceSummary

_OPTIONAL_PARTS = ("text_columns", "texts", "figures")  # a breakdown's parts left out of the JSON when empty


def trace_to_dict(trace: TraceSummary | None) -> dict[str, Any] | None:
    if trace is None:
        return None
    out = asdict(trace)
    out["dma_size_edges"] = [e if e != float("inf") else None for e in trace.dma_size_edges]  # JSON has no inf
    out["breakdowns"] = [{k: v for k, v in b.items() if k not in _OPTIONAL_PARTS or v} for b in out["breakdowns"]]
    return out


def trace_from_dict(data: dict[str, Any] | None, schema_version: int, kind: str) -> TraceSummary | None:
    """The trace summary of a checked analysis JSON object written under `schema_version` by `kind`."""
    if not data:
        return None
    if "engines" not in data:  # written before rows were grouped into engines: each row stands alone
        data = {**{k: v for k, v in data.items() if k != "engine_busy"}, "engines": [
            {"engine": "", "title": row, "rows": [row], "busy": busy, "compute": False}
            for row, busy in data.get("engine_busy", {}).items()]}
    if schema_version < 3:
        data = _from_schema_2(data, kind)
    return TraceSummary(**{
        **data, "engines": tuple(EngineBusy(**{**e, "rows": tuple(e["rows"])}) for e in data["engines"]),
        "events": dict(data.get("events", {})), "skipped": dict(data.get("skipped", {})),
        "facts": dict(data.get("facts", {})),
        "dma_size_edges": tuple(float("inf") if e is None else e for e in data["dma_size_edges"]),
        "dma_size_counts": tuple(data["dma_size_counts"]), "timeline_edges": tuple(data["timeline_edges"]),
        "timeline": {k: tuple(v) for k, v in data["timeline"].items()},
        "gaps": tuple(Gap(**g) for g in data["gaps"]), "warnings": tuple(data["warnings"]),
        "breakdowns": tuple(_breakdown_from(b) for b in data.get("breakdowns", ()))})


def _breakdown_from(data: dict[str, Any]) -> Breakdown:
    """A breakdown read back; a row or text entry that does not match its columns is refused (ValueError: the
    reader names the file), so no table draws a value under another column's heading."""
    name, width, words = data["name"], len(data["columns"]), len(data.get("text_columns", ()))
    if any(len(values) != width for _, values in data["rows"]):
        raise ValueError(f"trace breakdown '{name}': a row without one value per column ({width})")
    if any(len(texts) != words for texts in data.get("texts", {}).values()):
        raise ValueError(f"trace breakdown '{name}': a text entry without one word per text column ({words})")
    return Breakdown(**{**data, "columns": tuple(BreakdownColumn(**c) for c in data["columns"]),
                        "rows": tuple((key, tuple(values)) for key, values in data["rows"]),
                        "text_columns": tuple(BreakdownColumn(**c) for c in data.get("text_columns", ())),
                        "texts": {k: tuple(v) for k, v in data.get("texts", {}).items()},
                        "figures": tuple(BreakdownFigure(**f) for f in data.get("figures", ()))})


# --- schema 2 -> 3 -------------------------------------------------------------------------------------------
# Schema 2 counted "instructions" and "DMA transfers": Neuron's two event tables, RBLN's Neural Engine (compute)
# and DMA commands. Schema 3 keys the counts as each kind now writes them.
_V2_EVENT_KEYS = {"rbln": ("compute", "dma")}
_V2_DEFAULT_EVENT_KEYS = ("instruction", "dma")
_V2_FIELDS = ("instructions", "dma_transfers", "skipped_instructions", "skipped_dma", "hotspots_hlo", "hotspots_nki",
              "tensor_loads", "tensors_declared", "dma_unnamed_fraction", "tensor_note")
# Schema 2's hotspot and tensor-load tables as its reports titled them.
_HOTSPOT_COLUMNS = [{"name": "time", "title": "Instruction time", "unit": "s"},
                    {"name": "share", "title": "Share", "unit": "fraction"},
                    {"name": "count", "title": "Instructions", "unit": "count"}]
_HOTSPOTS = (("hotspots_hlo", "Hotspots by HLO op", "HLO op"), ("hotspots_nki", "Hotspots by NKI source line",
                                                                  "NKI source line"))
_TENSOR_COLUMNS = [{"name": "size", "title": "Size", "unit": "bytes"},
                   {"name": "loaded_bytes", "title": "Loaded", "unit": "bytes"},
                   {"name": "loads", "title": "Transfers", "unit": "count"},
                   {"name": "repeat", "title": "Copies loaded", "unit": "ratio"}]
_TENSOR_TEXTS = [{"name": "kind", "title": "Kind", "unit": TEXT}, {"name": "source", "title": "Source", "unit": TEXT}]


def _from_schema_2(data: dict[str, Any], kind: str) -> dict[str, Any]:
    """A schema-2 trace object in schema 3's shape: counts per category, hotspots and tensor loads as breakdowns."""
    compute, dma = _V2_EVENT_KEYS.get(kind, _V2_DEFAULT_EVENT_KEYS)
    out = {k: v for k, v in data.items() if k not in _V2_FIELDS}
    out["events"] = {compute: data.get("instructions") or 0, dma: data.get("dma_transfers") or 0}
    out["skipped"] = {compute: data.get("skipped_instructions") or 0, dma: data.get("skipped_dma") or 0}
    tables: list[dict[str, Any]] = []
    for name, title, key in _HOTSPOTS:
        spots = data.get(name) or ()
        if spots:
            tables.append({"name": name, "title": title, "key_title": key, "columns": _HOTSPOT_COLUMNS,
                           "rows": [(h["name"], (h["time"], h["share"], float(h["count"]))) for h in spots]})
    loads = data.get("tensor_loads") or ()
    if loads or data.get("tensor_note"):
        tables.append({
            "name": "tensor_loads", "title": "Tensor loads", "key_title": "Tensor", "columns": _TENSOR_COLUMNS,
            "rows": [(t["name"], (t["size"], t["loaded_bytes"], None if t.get("loads") is None else float(t["loads"]),
                                  t["repeat"])) for t in loads],
            "note": "" if loads else data.get("tensor_note") or "", "text_columns": _TENSOR_TEXTS,
            "texts": {t["name"]: (t["kind"], t["source"]) for t in loads},
            "figures": [{"name": "declared", "title": "Tensors declared", "unit": "count",
                         "value": float(data.get("tensors_declared") or 0)},
                        {"name": "unnamed_fraction", "title": "DMA bytes naming no declared tensor", "unit": "fraction",
                         "value": data.get("dma_unnamed_fraction")}]})
    out["breakdowns"] = [*tables, *data.get("breakdowns", ())]
    return out
