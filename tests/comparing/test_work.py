"""Issue 23, compare: two profiles that did different amounts of work (FLOPs, the problem's size) are
not a speedup or a slowdown of the same work. Compare warns, in the report and the JSON, and labels
the ratio of times as not like-for-like."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from advisor.api import compare_inputs, default_labels
from advisor.cli import main
from advisor.comparing.diff import WORK_WARNING, compare, compare_table
from advisor.report.compare_build import comparison_document, headline, like_for_like

PAIRS = {
    "neuron": ("samples/weight_reload/summary.json", "samples/weight_reload_fixed/summary.json"),
    "ncu": ("samples/ncu_before_after/before.csv", "samples/ncu_before_after/after.csv"),
    "rbln": ("samples/rbln_before_after/before.pb", "samples/rbln_before_after/after.pb"),
}


def _scaled(analysis, name: str, factor: float):
    metric = analysis.metrics[name]
    return replace(analysis, metrics={**analysis.metrics, name: replace(metric, value=metric.value * factor)})


@pytest.fixture(scope="module")
def analyses():
    from advisor.api import AnalyzeOptions, analyze
    return {kind: tuple(analyze(Path(p), AnalyzeOptions()) for p in paths) for kind, paths in PAIRS.items()}


@pytest.mark.parametrize("kind", sorted(PAIRS))
def test_every_kind_names_its_work_metrics(kind, analyses):
    """Each kind's compare.yaml lists `work:` metrics, and its before/after sample reports at least one of them."""
    work = compare_table(kind)["work"]
    assert work
    before, _ = analyses[kind]
    assert any(before.metrics.get(n) is not None and before.metrics[n].value for n in work), work


@pytest.mark.parametrize("kind", sorted(PAIRS))
def test_same_work_is_like_for_like(kind, analyses):
    """The shipped before/after pairs did the same work: no warning, the speedup reads as a speedup."""
    c = compare(*analyses[kind])
    assert like_for_like(c)
    assert not any(w.startswith(WORK_WARNING) for w in c.warnings)


@pytest.mark.parametrize("kind", sorted(PAIRS))
def test_different_work_is_a_warning_not_a_slowdown(kind, analyses):
    """Issue 23 "Compare": the after side doing 4× the work (a bigger problem) and taking longer was called
    a slowdown; now the warning names the work metric (+300.0 %) and the headline says not like-for-like."""
    before, after = analyses[kind]
    name = next(n for n in compare_table(kind)["work"] if before.metrics.get(n) and before.metrics[n].value)
    bigger = _scaled(_scaled(after, name, 4.0), "total_time", 4.0)
    c = compare(before, bigger)
    warning = next(w for w in c.warnings if w.startswith(WORK_WARNING))
    assert f"{name} " in warning and "(+300.0 %)" in warning and "not like-for-like" in warning
    assert not like_for_like(c)
    first = headline(c)[0]
    assert "not like-for-like" in first and "slower" not in first and "faster" not in first
    assert comparison_document(c).sections[0].title == "Comparability warnings"


def test_zero_work_on_one_side_is_not_compared(analyses):
    """FP32 FLOPs of 0 after a move to the tensor pipe is work measured elsewhere, not less work: no warning."""
    before, after = analyses["ncu"]
    name = next(n for n in compare_table("ncu")["work"] if before.metrics.get(n) and before.metrics[n].value)
    zero = replace(after, metrics={**after.metrics, name: replace(after.metrics[name], value=0.0)})
    assert like_for_like(compare(before, zero))


def test_work_warning_in_the_json_and_markdown(tmp_path, capsys):
    """Issue 23 "Compare": the CLI's JSON carries the warning and the Markdown labels the speedup."""
    paths = [Path("samples/weight_reload/summary.json"), Path("samples/matmul_text/summary.txt")]
    out = tmp_path / "c.json"
    assert main(["compare", *map(str, paths), "--format", "json", "-o", str(out)]) in (0, None)
    data = json.loads(out.read_text())
    assert any(w.startswith(WORK_WARNING) and "model_flops" in w for w in data["warnings"])
    md = tmp_path / "c.md"
    assert main(["compare", *map(str, paths), "-o", str(md)]) in (0, None)
    assert "not like-for-like" in md.read_text()


def test_work_warning_shows_units():
    """The warning shows each work metric in its unit (GFLOP, MiB), never a bare number."""
    paths = [Path("samples/weight_reload/summary.json"), Path("samples/matmul_text/summary.txt")]
    c = compare_inputs(paths, default_labels(paths))
    warning = next(w for w in c.warnings if w.startswith(WORK_WARNING))
    assert "model_flops 12.88 GFLOP → 75.16 GFLOP (+483.3 %)" in warning
    assert "weight_size_bytes 8 MiB → 448 MiB" in warning
