"""The fleet overview: its document from a summary, and render_fleet on a real store folder in every
format (offenders' own reports beside Markdown and HTML, stored analyses named in the PDF)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fleet.frames import finding, frames, profile, saved_analysis, write_store
from tests_support import SAMPLES

from advisor.fleet.overview_report import fleet_document
from advisor.fleet.render import render_fleet, report_stem
from advisor.fleet.summary import limits, summarize
from advisor.report.markdown import render_markdown


def _rows():
    a1 = profile("weight_reload", "a" * 64, 0.0004063, run=1, label="day1", gain=0.58, gain_finding="weight-reload",
                 dma=0.8)
    a2 = profile("weight_reload", "b" * 64, 0.0002438, run=2, label="day2", gain=0.4149, gain_finding="compute-bound",
                 dma=0.3)
    c = profile("conv", "c" * 64, 0.002, run=2, label="day2", dma=0.5)
    bad = profile("broken", "d" * 64, kind=None, status="error", error="unknown format", run=2, label="day2",
                  path="/p/broken.json")
    findings = [finding(a1, "weight-reload", 0.58), finding(a2, "compute-bound", 0.4149)]
    return [a1, a2, c, bad], findings


def _document(rows, findings):
    p, f = frames(rows, findings)
    s = summarize(p, f, {"total_time": "s", "dma_active_time_percent": "fraction"}, "/s", lambda h: Path(h))
    return fleet_document(s, limits(), {"a" * 64: "x_files/reports/weight_reload-aaaaaaaa.md"})


def test_document_sections_and_cells():
    doc = _document(*_rows())
    assert doc.title == "Fleet overview: 4 profiles"
    assert doc.lines[1] == "4 profile(s): 3 analysed, 1 failed; runs 1–2; labels: day1, day2"
    assert [s.title for s in doc.sections] == ["TL;DR", "Profiles per kind", "Root causes", "Top offenders",
                                               "Trends", "Distributions", "Outliers", "Failures"]
    text = render_markdown(doc)
    assert "- Top offender: **weight_reload** (neuron, trn1.2xlarge): 235.7 µs recoverable of 406.3 µs" in text
    assert "- No regressions among 1 profile(s) with several runs (noise floor 2.00 %)." in text
    assert "| 1 | `weight-reload` | neuron | 235.7 µs | 1 (33.33 %) | 1 |" in text
    assert "[weight_reload](x_files/reports/weight_reload-aaaaaaaa.md) @ day1" in text
    assert ("| weight_reload (neuron) | 2 (day1 → day2) | 406.3 µs → 243.8 µs | -40.0 % better | -40.0 % better |"
            in text)
    assert "- weight_reload (neuron): new `compute-bound`; fixed `weight-reload`" in text
    assert "| `/p/broken.json` | unknown format |" in text
    assert "| neuron | `dma_active_time_percent` | 3 | 30.00 % | 50.00 % | 80.00 % |" in text


def test_empty_store_document():
    doc = _document([], [])
    assert doc.title == "Fleet overview: the store is empty"
    assert "The store holds no profiles yet" in render_markdown(doc)


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    rows, findings = _rows()
    text = saved_analysis(SAMPLES / "weight_reload" / "summary.json")
    return write_store(tmp_path_factory.mktemp("store"), rows, findings, {"a" * 64: text, "b" * 64: text})


def test_markdown_overview_carries_offender_reports(store, tmp_path):
    output = tmp_path / "fleet.md"
    rendered = render_fleet(store, "md", output)
    stem = report_stem("weight_reload", "a" * 64)
    assert rendered.folder == "fleet_files"
    assert f"fleet_files/reports/{stem}.md" in rendered.files
    charts = [k for k in rendered.files if k.startswith(f"fleet_files/reports/{stem}_files/")]
    assert charts and all(k.endswith(".png") for k in charts)  # the report's own charts, beside it
    main = rendered.main.decode()
    assert f"[weight_reload](fleet_files/reports/{stem}.md)" in main
    assert any(k.startswith("fleet_files/distributions-neuron-") for k in rendered.files)
    assert rendered.main == render_fleet(store, "md", output).main  # same store, same bytes


def test_html_links_and_pdf_names_analyses(store, tmp_path):
    html = render_fleet(store, "html", tmp_path / "fleet.html")
    assert f"fleet_files/reports/{report_stem('weight_reload', 'b' * 64)}.html" in html.files
    assert 'href="fleet_files/reports/' in html.main.decode()
    pdf = render_fleet(store, "pdf", tmp_path / "fleet.pdf")
    assert pdf.main.startswith(b"%PDF") and pdf.files == {}


def test_json_is_the_summary(store):
    first = render_fleet(store, "json", None)
    data = json.loads(first.main)
    assert (data["format"], data["profiles"], data["failed"], data["runs"]) == ("advisor-fleet-overview", 4, 1, [1, 2])
    assert data["offenders"][0]["hash"] == "a" * 64
    assert data["offenders"][0]["analysis"] == str(store.analysis_path("a" * 64))
    assert data["trends"][0]["regression"] is False and data["trends"][0]["verdict"] == "better"
    assert first.main == render_fleet(store, "json", None).main


def test_empty_store_renders(tmp_path):
    store = write_store(tmp_path / "empty", [], [])
    assert b"the store is empty" in render_fleet(store, "md", None).main
    assert json.loads(render_fleet(store, "json", None).main)["profiles"] == 0
