"""`advisor report analysis.json`: a saved analysis re-rendered without the raw profile, in every
format, with a new investigation context; and analyses saved before profile kinds existed."""

import json

import pytest
from tests_support import FIXTURES, ROOT, SAMPLES, installed_kinds

from advisor.cli import main

MP2 = SAMPLES / "mp2_energy" / "summary.json"
CONTEXT = SAMPLES / "mp2_energy" / "investigation.yaml"


@pytest.fixture
def saved(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)  # paths in reports stay relative, as in the goldens
    path = tmp_path / "analysis.json"
    assert main(["report", str(MP2.relative_to(ROOT)), "-o", str(path)]) == 0
    return path


def test_rerendered_markdown_is_the_direct_one(saved, tmp_path):
    (tmp_path / "direct").mkdir()
    (tmp_path / "again").mkdir()
    direct, again = tmp_path / "direct" / "report.md", tmp_path / "again" / "report.md"  # same chart folder names
    assert main(["report", str(MP2.relative_to(ROOT)), "-o", str(direct)]) == 0
    assert main(["report", str(saved), "-o", str(again)]) == 0
    assert again.read_text() == direct.read_text()
    assert "96.45 %" in again.read_text()


def test_rerendered_pdf_and_html(saved, tmp_path):
    assert main(["report", str(saved), "-o", str(tmp_path / "r.pdf")]) == 0
    assert (tmp_path / "r.pdf").read_bytes().startswith(b"%PDF")
    assert main(["report", str(saved), "-o", str(tmp_path / "r.html")]) == 0
    assert "Vector Engine" in (tmp_path / "r.html").read_text()


def test_a_new_context_is_judged_on_the_saved_metrics(saved, tmp_path):
    (tmp_path / "direct").mkdir()
    (tmp_path / "again").mkdir()
    direct, again = tmp_path / "direct" / "report.md", tmp_path / "again" / "report.md"  # same chart folder names
    assert main(["report", str(MP2.relative_to(ROOT)), "--context", str(CONTEXT.relative_to(ROOT)), "-o",
                 str(direct)]) == 0
    assert main(["report", str(saved), "--context", str(CONTEXT.relative_to(ROOT)), "-o", str(again)]) == 0
    assert again.read_text() == direct.read_text()
    assert "Amdahl" in again.read_text()


def test_options_that_need_a_new_analysis_are_refused(saved, capsys):
    assert main(["report", str(saved), "--set", "weight-reload.min_ratio=4", "--hardware", "trn2"]) == 2
    error = capsys.readouterr().err.strip().splitlines()
    assert error == [f"advisor: error: {saved}: a saved analysis is used as it was analysed; --hardware, --set "
                     "only apply when analysing the profile itself"]


def test_an_analysis_saved_before_kinds_reads_as_neuron(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    out = tmp_path / "again.json"
    assert main(["report", str(FIXTURES / "analysis_before_kinds.json"), "-o", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["kind"] == "neuron"
    first = data["entries"][0]
    assert first["where"] == "nd_idx 0, nc_idx 0"
    assert first["columns"] == [{"title": "DMA active", "value": 0.618, "unit": "fraction"},
                                {"title": "Tensor Engine active", "value": 0.503, "unit": "fraction"},
                                {"title": "Collective time", "value": 0.005276302, "unit": "s"}]
    md = tmp_path / "report.md"
    assert main(["report", str(FIXTURES / "analysis_before_kinds.json"), "-o", str(md)]) == 0
    golden = (ROOT / "tests" / "golden" / "multi_core__summary.md").read_text()
    # the measured sections as from the raw profile today (the findings are the saved ones, from the rules of
    # then), but for the settings it was analysed with: not recorded then
    for title in ("Profile setup", "Per-engine utilisation", "Memory traffic"):
        assert _section(md.read_text(), title) == _section(golden, title).replace(
            "| Settings | defaults (no --select, --ignore, --set, --hardware or settings file) |",
            "| Settings | unknown (saved before advisor recorded them) |"), title


def _section(markdown: str, title: str) -> str:
    """The text of one `## title` section, up to the next `## ` heading."""
    start = markdown.index(f"\n## {title}\n")
    end = markdown.find("\n## ", start + 1)
    return markdown[start:end if end >= 0 else None]


def test_an_analysis_of_a_kind_not_installed_names_the_file(saved, capsys):
    data = json.loads(saved.read_text())
    data["kind"] = "vtune"
    saved.write_text(json.dumps(data))
    assert main(["report", str(saved)]) == 2
    assert capsys.readouterr().err == (f"advisor: error: {saved}: the analysis of a profile of this kind: unknown "
                                       f"profile kind 'vtune' (installed: {installed_kinds()})\n")


def test_analyze_reads_a_saved_analysis_as_load_analysis_does(tmp_path):
    """Issue 24: api.analyze() accepts a saved analysis, as `load_analysis` and `advisor report x.json` do."""
    from advisor.api import analyze, load_analysis
    from advisor.core import serialize

    fresh = analyze(SAMPLES / "mp2_energy" / "summary.json")
    saved = tmp_path / "analysis.json"
    saved.write_text(serialize.dumps(fresh))
    again = analyze(saved)
    assert serialize.dumps(again) == serialize.dumps(load_analysis(saved)) == serialize.dumps(fresh)
