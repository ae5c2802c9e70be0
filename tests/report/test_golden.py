"""Golden reports: the full pipeline's Markdown and analysis JSON for every sample, compared with
checked-in files. After an intended change, regenerate and review the diff like code, and commit golden
updates apart from the feature that caused them:

    pytest tests/report/test_golden.py --update-golden && git diff tests/golden

So that a reviewer can read them, a JSON golden keeps numbers to 9 significant digits and leaves out the
per-metric descriptions (documentation, checked by the rule and metric tests, not results); every golden starts
with a line saying how to regenerate it.
"""

import json
import math
from pathlib import Path
from typing import Any

import pytest
from tests_support import ROOT, SAMPLES

from advisor.api import AnalyzeOptions, analyze, compare_inputs, default_labels
from advisor.report.render import render, render_comparison

GOLDEN = ROOT / "tests" / "golden"
CONTEXT = Path("samples/mp2_energy/investigation.yaml")
CASES = [(p.relative_to(ROOT), None) for p in sorted(SAMPLES.glob("*/summary*.*")) if p.suffix in (".json", ".txt")]
CASES.append((Path("samples/legacy_trace/profile.json"), None))
# (the weight_reload_series attempts repeat weight_reload and weight_reload_fixed: covered by compare below)
CASES.append((Path("samples/mp2_energy/summary.json"), CONTEXT))
# Nsight Compute: the seed kernel, a run of many kernels, and both export formats of one
CASES += [(Path(f"samples/{name}"), None) for name in ("ncu_seed004/details.csv", "ncu_seed004/output.txt",
                                                       "ncu_multi_kernel/details.csv")]
# RBLN: one synthetic Perfetto trace of each layout (ATOM, ATOM with 4 devices, Rebel100 chiplets)
CASES += [(Path(f"samples/{name}/trace.pb"), None) for name in ("rbln_atom_cnn", "rbln_atom_rsd", "rbln_rebel100")]


def case_id(path: Path, context: Path | None) -> str:
    return f"{path.parent.name}__{path.stem}" + ("__context" if context else "")


COMPARISONS = {
    "compare__weight_reload": [Path("samples/weight_reload/summary.json"),
                               Path("samples/weight_reload_fixed/summary.json")],
    "compare__ncu_before_after": [Path("samples/ncu_before_after/before.csv"),
                                  Path("samples/ncu_before_after/after.csv")],
    "compare__rbln_before_after": [Path("samples/rbln_before_after/before.pb"),
                                   Path("samples/rbln_before_after/after.pb")],
    "compare__series": [Path(f"samples/weight_reload_series/attempt_{i}.json") for i in (1, 2, 3)],
}


@pytest.mark.parametrize("name", sorted(COMPARISONS))
@pytest.mark.parametrize("fmt", ["md", "json"])
def test_golden_comparison(name, fmt, monkeypatch, update_golden):
    monkeypatch.chdir(ROOT)
    paths = COMPARISONS[name]
    output = render_comparison(compare_inputs(paths, default_labels(paths)), fmt, Path(f"report.{fmt}")).main
    check(GOLDEN / f"{name}.{fmt}", output.decode("utf-8"), update_golden)


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


@pytest.mark.parametrize(("path", "context"), CASES, ids=[case_id(*c) for c in CASES])
@pytest.mark.parametrize("fmt", ["md", "json"])
def test_golden(path, context, fmt, monkeypatch, update_golden):
    monkeypatch.chdir(ROOT)  # source paths in reports stay relative and stable
    analysis = analyze(path, AnalyzeOptions(context=context))
    output = render(analysis, fmt, Path(f"report.{fmt}")).main.decode("utf-8")
    check(GOLDEN / f"{case_id(path, context)}.{fmt}", output, update_golden)
