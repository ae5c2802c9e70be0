"""A saved analysis whose workload timings disagree with themselves is refused with one line (the suite's
mutation test found `optimized` without a step `baseline` has: the next steps read it on both sides)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from advisor.api import AnalyzeOptions, analyze, load_analysis
from advisor.core import serialize
from advisor.core.errors import AdvisorError

SAMPLE = Path(__file__).parents[2] / "samples" / "mp2_energy"


@pytest.mark.parametrize(("edit", "problem"), [
    (lambda a: a["optimized"].pop("gemm"), "baseline and optimized name different steps"),
    (lambda a: a.__setitem__("changed", ["softmax"]), "changed names a step the timings do not have"),
])
def test_inconsistent_workload_timings_are_one_error(tmp_path, edit, problem):
    analysis = analyze(SAMPLE / "summary.json", AnalyzeOptions(context=SAMPLE / "investigation.yaml"))
    data = json.loads(serialize.dumps(analysis))
    edit(data["investigation"]["amdahl"])
    saved = tmp_path / "a.json"
    saved.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(AdvisorError, match=f"investigation.amdahl.*{problem}"):
        load_analysis(saved)
