"""A comparison (before/after, or a series of attempts) as JSON: `advisor compare … -o diff.json`."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

from advisor.core.comparison import Comparison, Series, Side
from advisor.core.serialize import SOURCE_FIELDS

VERSION = 2  # the comparison JSON's own schema version (it did not change with the analysis JSON's 3)


def _comparison(c: Comparison) -> dict[str, Any]:
    def side(s: Side) -> dict[str, Any]:
        return {"label": s.label, "kind": s.kind, "source": {**asdict(s.source), "entries": list(s.source.entries),
                                             **{k: s.info.get(k) for k in SOURCE_FIELDS}},
                "hardware": s.hardware, "packs": dict(s.packs), "advisor_version": s.advisor_version}

    by_status = {s.replace(" ", "_"): [f.name for f in c.findings if f.status == s]
                 for s in ("fixed", "new", "persisting", "not comparable")}
    return {
        "schema_version": VERSION, "before": side(c.before), "after": side(c.after), "speedup": c.speedup,
        "speedup_of": c.speedup_of, "noise": c.noise,
        "metrics": {n: {"before": m.before, "after": m.after, "change": m.change, "verdict": m.verdict,
                        "unit": m.unit, "group": m.group, "better": m.better} for n, m in c.metrics.items()},
        "findings": by_status,
        "root_cause": {"before": list(c.root_cause_before), "after": list(c.root_cause_after)},
        "warnings": list(c.warnings),
        "entries": [asdict(e) for e in c.entries],
        "breakdowns": [asdict(b) for b in c.breakdowns],
    }


def comparison_json(result: Comparison | Series) -> str:
    if isinstance(result, Series):
        data: dict[str, Any] = {
            "schema_version": VERSION,
            "attempts": [{"label": s.label, "source": s.source.path, "total_time": t}
                         for s, t in zip(result.sides, result.total_times, strict=True)],
            "steps": [_comparison(c) for c in result.steps], "overall": _comparison(result.overall),
        }
    else:
        data = _comparison(result)
    return json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
