"""The notebook API (docs/notebook.md): the page's example runs as written, and the results expose what a
notebook user needs (issue 24)."""

import re

import pytest
from tests_support import ROOT

import advisor


def _example() -> str:
    page = (ROOT / "docs" / "notebook.md").read_text(encoding="utf-8")
    return re.findall(r"```python\n(.*?)\n```", page, re.S)[0]


def test_the_docs_example_runs_as_written(tmp_path, monkeypatch, capsys):
    for name in ("samples",):
        (tmp_path / name).symlink_to(ROOT / name)
    monkeypatch.chdir(tmp_path)
    exec(compile(_example(), "docs/notebook.md", "exec"), {})  # the page's own example
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == "<advisor.Result neuron: samples/mp2_energy/summary.json>"
    assert printed[1] == "vector-engine-bound"  # issue 36: at its limit, no waste shown, no gain claimed
    assert printed[2] == "medium {'estimated_gain': 'fraction'}"
    assert printed[3] == "0.9645 fraction"
    report = (tmp_path / "findings.md").read_text(encoding="utf-8")
    assert report.startswith("# Profile findings: mp2_energy/summary.json")
    charts = list((tmp_path / "findings_files").glob("*.png"))
    assert charts and all(f"findings_files/{c.name}" in report for c in charts)
    assert (tmp_path / "diff.md").read_text(encoding="utf-8").startswith("# Comparison: weight_reload/summary")


def test_a_result_shows_itself_in_a_notebook_and_saves_every_format(tmp_path):
    result = advisor.analyze(ROOT / "samples" / "mp2_energy" / "summary.json", select=["vector-engine-bound"])
    assert list(result.findings.index) == ["vector-engine-bound"]
    assert result.to_html().startswith("<!DOCTYPE html>")
    html = result._repr_html_()
    assert html.startswith("<iframe srcdoc=") and "vector-engine-bound" in html
    assert result.metrics.loc["total_time", "unit"] == "s"
    for suffix in ("html", "json", "pdf"):
        assert result.save(tmp_path / f"r.{suffix}").stat().st_size > 0
    again = advisor.analyze(tmp_path / "r.json")  # a saved analysis reads back as it was analysed
    assert list(again.findings.index) == ["vector-engine-bound"]
    assert advisor.load(tmp_path / "r.json").verdict == "vector-engine-bound"


def test_an_unknown_output_ending_is_one_clear_error(tmp_path):
    from advisor.core.errors import AdvisorError

    result = advisor.analyze(ROOT / "samples" / "mp2_energy" / "summary.json")
    with pytest.raises(AdvisorError, match=r"cannot tell the output format from '\.docx'"):
        result.save(tmp_path / "r.docx")
    assert list(tmp_path.iterdir()) == []
