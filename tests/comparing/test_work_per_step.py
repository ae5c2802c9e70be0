"""Issue 36, compare: two traces whose steps ran different work (two models on one H100) read "10.7× faster per
step". Steps whose matmul FLOPs (from the recorded shapes) differ beyond a compilation's reach are not like-for-like:
compare warns, headlines no speedup, and the regression gate refuses to judge."""

from __future__ import annotations

from dataclasses import replace

import pytest
from tests_support import SHARED_REFERENCE

from advisor.api import analyze
from advisor.comparing.diff import STEP_WORK_WARNING, compare
from advisor.core.errors import AdvisorError
from advisor.gates import regression_gate
from advisor.report.compare_build import headline, like_for_like

TRACES = SHARED_REFERENCE / "torch-traces" / "tracelens"
QWEN = TRACES / "h100_Qwen_Qwen1.5-0.5B-Chat.json.gz"
BERT = TRACES / "h100_gaunernst_bert-small-uncased.json.gz"
pytestmark = pytest.mark.skipif(not QWEN.is_file(), reason="../shared/reference is not beside the project")


@pytest.fixture(scope="module")
def models():
    return analyze(QWEN), analyze(BERT)


def _scaled(analysis, name: str, factor: float):
    metric = analysis.metrics[name]
    return replace(analysis, metrics={**analysis.metrics, name: replace(metric, value=metric.value * factor)})


def test_two_models_are_not_a_speedup(models):
    qwen, bert = models
    c = compare(qwen, bert)
    warning = next(w for w in c.warnings if w.startswith(STEP_WORK_WARNING))
    assert "matmul_flops per step 5.111 TFLOP → 8.029 GFLOP (-99.8 %)" in warning
    assert not like_for_like(c)
    first = headline(c)[0]
    assert "not like-for-like" in first and "no speedup is claimed" in first and "faster" not in first
    with pytest.raises(AdvisorError, match=r"ran different work per step .*5\.111 TFLOP.*cannot be judged"):
        regression_gate(c, 5.0)


def test_a_fusion_that_moves_some_matmuls_out_of_the_count_is_still_the_same_work(models):
    """Within the 25 % tolerance (a compiled after whose Triton templates the aten count misses) the steps are
    the same work: the per-step speedup stands and the gate judges."""
    qwen, _ = models
    c = compare(qwen, _scaled(qwen, "matmul_flops", 0.8))
    assert not any(w.startswith(STEP_WORK_WARNING) for w in c.warnings)
    assert like_for_like(c) and regression_gate(c, 5.0) == []


def test_a_side_without_shapes_says_nothing(models):
    """No recorded shapes: no FLOPs, so the check cannot run, and it claims no difference."""
    qwen, bert = models
    blind = replace(bert, metrics={k: m for k, m in bert.metrics.items() if k != "matmul_flops"})
    assert not any(w.startswith(STEP_WORK_WARNING) for w in compare(qwen, blind).warnings)
