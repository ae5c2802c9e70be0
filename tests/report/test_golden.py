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
import os
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests_support import ROOT, SAMPLES

from advisor.api import AnalyzeOptions, analyze, compare_inputs, default_labels
from advisor.report.render import render, render_comparison

GOLDEN = ROOT / "tests" / "golden"


def declared() -> tuple[list[tuple[Path, Path | None]], dict[str, list[Path]]]:
    """The golden cases each sample folder declares in its golden.yaml, so a new sample or kind needs no edit
    here: `reports:` (an input, or {input, context} with an investigation) and `comparisons:` (name -> inputs),
    paths relative to the folder."""
    cases: list[tuple[Path, Path | None]] = []
    comparisons: dict[str, list[Path]] = {}
    for spec in sorted(SAMPLES.glob("*/golden.yaml")):
        folder = spec.parent.relative_to(ROOT)
        data = yaml.safe_load(spec.read_text(encoding="utf-8")) or {}
        for entry in data.get("reports") or ():
            entry = entry if isinstance(entry, dict) else {"input": entry}
            context = entry.get("context")
            cases.append((Path(os.path.normpath(folder / entry["input"])), folder / context if context else None))
        for name, inputs in (data.get("comparisons") or {}).items():
            comparisons[f"compare__{name}"] = [Path(os.path.normpath(folder / p)) for p in inputs]
    return cases, comparisons


def case_id(path: Path, context: Path | None) -> str:
    """<folder>__<file stem>; a folder input (`.`: its per-rank files as one) is <folder>__folder."""
    name = f"{path.name}__folder" if (ROOT / path).is_dir() else f"{path.parent.name}__{path.stem}"
    return name + ("__context" if context else "")


CASES, COMPARISONS = declared()


def test_every_golden_is_a_declared_case():
    """Each golden file belongs to one declared case, and each declared input exists."""
    names = [case_id(*c) for c in CASES] + list(COMPARISONS)
    assert len(names) == len(set(names))
    assert {p.stem for p in GOLDEN.glob("*.md")} | {p.stem for p in GOLDEN.glob("*.json")} == set(names)
    declared_paths = [p for case in CASES for p in case if p] + [p for ps in COMPARISONS.values() for p in ps]
    assert [p for p in declared_paths if not (ROOT / p).exists()] == []


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
