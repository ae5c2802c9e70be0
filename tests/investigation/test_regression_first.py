"""Issue 36: a change that made its own step slower was told to "shorten the unchanged steps". Its first step is
to fix or revert the change, in the next steps, the Amdahl section and the reading of the report."""

from __future__ import annotations

from pathlib import Path

from advisor.api import AnalyzeOptions, analyze
from advisor.report.build import build_document
from advisor.report.findings import ranked_steps
from advisor.report.markdown import render_markdown

SAMPLE = Path(__file__).parents[2] / "samples" / "mp2_energy"


def _with_context(tmp_path: Path, optimized_energy: float):
    text = (SAMPLE / "investigation.yaml").read_text()
    context = tmp_path / "context.yaml"
    context.write_text(text.replace("optimized: {gemm: 5.2, energy: 0.21}",
                                    f"optimized: {{gemm: 5.2, energy: {optimized_energy}}}"))
    return analyze(SAMPLE / "summary.json", AnalyzeOptions(context=context))


def test_a_regression_is_told_to_fix_or_revert_the_change_first(tmp_path):
    analysis = _with_context(tmp_path, 3.4)  # energy 2.83 s -> 3.4 s: the workload 1.07x slower
    steps = ranked_steps(analysis)
    assert steps[0].startswith("Fix or revert the change: the changed step got slower — energy (2.83 s → 3.4 s) — "
                               "so the workload is 1.07× slower (a slowdown)")
    assert not any(s.startswith("Shorten the unchanged steps") for s in steps)
    text = render_markdown(build_document(analysis))
    assert "The change made the workload slower: **fix or revert it first**" in text
    assert "the first step is to fix or revert the change, not to shorten the unchanged steps" in text


def test_a_faster_change_still_points_at_the_unchanged_steps(tmp_path):
    steps = ranked_steps(_with_context(tmp_path, 0.21))
    assert any(s.startswith("Shorten the unchanged steps — gemm (5.2 s)") for s in steps)
    assert not any("revert" in s for s in steps)
