"""Hand-built store tables with the contract's columns (docs: the fleet contract), for the summary,
history and lookup tests; `write_store` puts them in a real store folder."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

NAN = math.nan
UNITS = {"total_time": "s", "gain": "fraction", "recoverable_time": "s", "size": "bytes",
         "dma_active_time_percent": "fraction"}


def profile(name: str, hash_: str, total_time: float = NAN, *, kind: str | None = "neuron", status: str = "ok",
            run: int = 1, label: str | None = None, captured: str | None = None, gain: float = NAN,
            gain_finding: str | None = None, error: str | None = None, dma: float = NAN,
            device: str | None = "trn1.2xlarge", path: str | None = None, root_causes: str = "",
            capture: str | None = None) -> dict[str, Any]:
    recoverable = gain * total_time if not (math.isnan(gain) or math.isnan(total_time)) else NAN
    return {"hash": hash_, "path": path or f"/p/{name}/{hash_}.json", "size": 10, "mtime_ns": 1, "kind": kind,
            "status": status, "error": error, "name": name, "device": device if status == "ok" else None,
            "profiler_version": None, "captured": captured, "label": label, "run": run, "part": run,
            "total_time": total_time, "gain": gain, "gain_finding": gain_finding, "recoverable_time": recoverable,
            "findings": 0, "root_causes": root_causes, "top_severity": None, "capture": capture,
            "dma_active_time_percent": dma}


def finding(p: dict[str, Any], rule: str, gain: float = NAN, root_cause: bool = True,
            scope: str = "global") -> dict[str, Any]:
    recoverable = gain * p["total_time"] if scope == "global" and not math.isnan(gain) else NAN
    return {"hash": p["hash"], "part": p["part"], "path": p["path"], "name": p["name"], "kind": p["kind"],
            "label": p["label"], "run": p["run"], "rule": rule, "rule_id": rule.upper(), "severity": "high",
            "title": f"{rule} title", "root_cause": root_cause, "gain": gain, "scope": scope,
            "recoverable_time": recoverable, "total_time": p["total_time"]}


def frames(profiles: list[dict[str, Any]], findings: list[dict[str, Any]]):
    import pandas as pd

    from advisor.fleet.store import FINDING_COLUMNS, PROFILE_COLUMNS

    p = pd.DataFrame(profiles, columns=[c for c, _ in PROFILE_COLUMNS] + ["dma_active_time_percent"])
    f = pd.DataFrame(findings, columns=[c for c, _ in FINDING_COLUMNS])
    p = p.astype({"total_time": "float64", "gain": "float64", "recoverable_time": "float64",
                  "dma_active_time_percent": "float64"})
    f = f.astype({"gain": "float64", "recoverable_time": "float64", "total_time": "float64"})
    return (p.sort_values(["name", "run", "path"], kind="stable").reset_index(drop=True),
            f.sort_values(["name", "run", "path", "rule"], kind="stable").reset_index(drop=True))


def write_store(folder: Path, profiles: list[dict[str, Any]], findings: list[dict[str, Any]],
                analyses: dict[str, str] | None = None):
    """A store folder holding these rows (one part per run) and, per hash, an analysis JSON text."""
    from advisor.fleet.store import Store

    store = Store.open(folder, create=True)
    for run in sorted({p["run"] for p in profiles}):
        mine = [p for p in profiles if p["run"] == run]
        hashes = {p["hash"] for p in mine}
        store.commit(mine, [f for f in findings if f["hash"] in hashes], UNITS, ["dma_active_time_percent"])
    for content_hash, text in (analyses or {}).items():
        path = store.analysis_path(content_hash)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return Store.open(folder)


def saved_analysis(sample: Path) -> str:
    """A real analysis JSON of a sample profile, as the fleet stores it."""
    from advisor.api import analyze
    from advisor.core.serialize import dumps

    text = dumps(analyze(sample))
    json.loads(text)
    return text
