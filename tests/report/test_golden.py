"""Golden reports: the full Markdown or analysis JSON of a few cases, compared byte for byte with checked-in files.
Every declared case (samples/*/golden.yaml) has its results checked in samples/<folder>/expected.yaml, a file a
reviewer reads (tests/report/test_expectations.py); a full golden is kept only where a format's own code is what
is tested, so that the goldens stay few enough to review (issue 38). After an intended change, regenerate and
review the diff like code, and commit golden updates apart from the feature that caused them:

    pytest tests/report/test_golden.py --update-golden && git diff tests/golden

The goldens kept, and why (FULL below):

- One full Markdown report and one analysis JSON per kind, each on a case that carries most of its kind's
  sections: `legacy_trace__profile` (Neuron: the streamed legacy trace JSON, with the trace blocks, seven findings
  and the time budget), `ncu_seed004__details` (Nsight Compute: the details CSV that a `.ncu-rep` exports, with
  ncu's own verdicts beside advisor's), `rbln_atom_rsd__trace` (RBLN: four devices in one Perfetto trace) and
  `torch_a100_ddp__a100_ddp_rank0_of2.json` (PyTorch: a real Kineto trace).
- `mp2_energy__summary__context`, Markdown and JSON: the investigation (`--context`): Amdahl, expectations and
  hypotheses, in both formats.
- `multi_core__summary`, Markdown and JSON: a summary of several cores (the cores overview; entries in the JSON);
  tests/test_api_rerender.py compares sections of this Markdown too.
- `torch_straggler_ranks__folder`, Markdown and JSON: a folder of ranks analysed as one job (the ranks section).
- `torch_cpu_only__cpu_only_rank34.pt.trace.json`, Markdown and JSON: a trace with no device at all, whose report
  says why it names no cause.
- Markdown only, for a report path nothing else renders: `ncu_multi_kernel__details` (the kernels of a run ranked,
  the entries of one input) and `torch_sampled_ranks__folder` (ranks filtered to a sample of their events).
- Analysis JSON only, for an input format or shape whose reader nothing else exercises (the JSON holds every figure
  the reader produced): `matmul_text__summary` and `matmul_text__summary_raw` (the two summary-text layouts),
  `ncu_seed004__output` (ncu's text output), `sbuf_spill__summary` (the legacy `{"summary": [...]}` shape with
  -1 sentinels), `compute_bound_tuned__summary` (log lines before the JSON),
  `torch_amd_mi250__amd_mi250_minitoy_train.json` (a ROCm trace) and `torch_mtia_inference__mtia_inference_rank0.json`
  (MTIA device events).
- Comparisons: `compare__torch_before_after` in Markdown and JSON (a pair, with the kind's tables row by row),
  `compare__series` in Markdown and JSON (a series of attempts), and `compare__ncu_before_after` in Markdown (the
  kernels of two runs matched).

Every other case is held by its expected.yaml alone: the other summaries and traces of each kind read by the same
code as a kept golden, and three folders with no golden of their own: `explorer_parquet` (Neuron Explorer's Parquet
tables, the same profile as `legacy_trace`), `multi_rank` (per-rank summaries) and `rbln_ranks` (per-rank RBLN
traces).

So that a reviewer can read them, a JSON golden keeps numbers to 9 significant digits and leaves out the
per-metric descriptions (documentation, checked by the rule and metric tests, not results); every golden starts
with a line saying how to regenerate it.
"""

import json
import math
from pathlib import Path
from typing import Any

import pytest
from golden_cases import COMPARISONS, REPORTS
from tests_support import ROOT

from advisor.api import AnalyzeOptions, analyze, compare_inputs, default_labels
from advisor.report.render import render, render_comparison

GOLDEN = ROOT / "tests" / "golden"
BOTH, MD, JSON = ("md", "json"), ("md",), ("json",)
FULL: dict[str, tuple[str, ...]] = {  # case -> the formats kept in full (the docstring says why)
    "legacy_trace__profile": BOTH,
    "ncu_seed004__details": BOTH,
    "rbln_atom_rsd__trace": BOTH,
    "torch_a100_ddp__a100_ddp_rank0_of2.json": BOTH,
    "mp2_energy__summary__context": BOTH,
    "multi_core__summary": BOTH,
    "torch_straggler_ranks__folder": BOTH,
    "torch_cpu_only__cpu_only_rank34.pt.trace.json": BOTH,
    "ncu_multi_kernel__details": MD,
    "torch_sampled_ranks__folder": MD,
    "matmul_text__summary": JSON,
    "matmul_text__summary_raw": JSON,
    "ncu_seed004__output": JSON,
    "sbuf_spill__summary": JSON,
    "compute_bound_tuned__summary": JSON,
    "torch_amd_mi250__amd_mi250_minitoy_train.json": JSON,
    "torch_mtia_inference__mtia_inference_rank0.json": JSON,
    "compare__torch_before_after": BOTH,
    "compare__series": BOTH,
    "compare__ncu_before_after": MD,
}
KEPT_REPORTS = [(c, fmt) for c in REPORTS for fmt in FULL.get(c.name, ())]
KEPT_COMPARISONS = [(c, fmt) for c in COMPARISONS for fmt in FULL.get(c.name, ())]


def test_every_golden_is_a_kept_case():
    """Each golden file is a format kept of one declared case, and each declared input exists."""
    names = [c.name for c in REPORTS] + [c.name for c in COMPARISONS]
    assert len(names) == len(set(names))
    assert set(FULL) <= set(names), set(FULL) - set(names)
    assert sorted(p.name for p in GOLDEN.iterdir()) == sorted(f"{n}.{fmt}" for n, formats in FULL.items()
                                                               for fmt in formats)
    declared_paths = [p for c in REPORTS for p in (c.input, c.context) if p] + [p for c in COMPARISONS
                                                                               for p in c.inputs]
    assert [p for p in declared_paths if not (ROOT / p).exists()] == []


@pytest.mark.parametrize(("case", "fmt"), KEPT_COMPARISONS, ids=[f"{fmt}-{c.name}" for c, fmt in KEPT_COMPARISONS])
def test_golden_comparison(case, fmt, monkeypatch, update_golden):
    monkeypatch.chdir(ROOT)
    paths = list(case.inputs)
    output = render_comparison(compare_inputs(paths, default_labels(paths)), fmt, Path(f"report.{fmt}")).main
    check(GOLDEN / f"{case.name}.{fmt}", output.decode("utf-8"), update_golden)


REGENERATE = "regenerate: pytest tests/report/test_golden.py --update-golden, then review the diff like code"
MD_HEADER = f"<!-- golden report; {REGENERATE} -->\n"


def _rounded(value: Any) -> Any:
    """Fractional numbers to 9 significant digits, descriptions left out, at every level."""
    if isinstance(value, float):  # a whole number (bytes, counts) stays exact
        return float(f"{value:.9g}") if math.isfinite(value) and not value.is_integer() else value
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items() if k != "description"}
    if isinstance(value, list):
        return [_rounded(v) for v in value]
    return value


def comparable(text: str, suffix: str) -> str:
    """What a golden holds: the Markdown under its header line; the JSON rounded, with the header as its first key."""
    if suffix == ".md":
        return MD_HEADER + text
    return json.dumps({"_golden": REGENERATE, **_rounded(json.loads(text))}, indent=2, ensure_ascii=False) + "\n"


def check(golden: Path, output: str, update: bool) -> None:
    output = comparable(output, golden.suffix)
    if update:
        golden.write_text(output, encoding="utf-8")
    assert golden.exists(), f"missing {golden.name}: run pytest {__file__} --update-golden"
    assert output == golden.read_text(encoding="utf-8"), (
        f"{golden.name} differs: if intended, regenerate with --update-golden and review the diff")


@pytest.mark.parametrize(("case", "fmt"), KEPT_REPORTS, ids=[f"{fmt}-{c.name}" for c, fmt in KEPT_REPORTS])
def test_golden(case, fmt, monkeypatch, update_golden):
    monkeypatch.chdir(ROOT)  # source paths in reports stay relative and stable
    analysis = analyze(case.input, AnalyzeOptions(context=case.context))
    output = render(analysis, fmt, Path(f"report.{fmt}")).main.decode("utf-8")
    check(GOLDEN / f"{case.name}.{fmt}", output, update_golden)
