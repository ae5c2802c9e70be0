"""Charts drawn in a second process are the charts drawn here, byte for byte; a process that dies is
replaced by drawing here; a chart that cannot be drawn stops the PDF with its own error."""

import os
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest
from tests_support import SAMPLES

from advisor.api import AnalyzeOptions, analyze
from advisor.cli import main
from advisor.report import charts
from advisor.report.build import build_document
from advisor.report.document import Chart, Document, Section
from advisor.report.drawing import LocalDrawer, ProcessDrawer, drawing_process, usable_cores
from advisor.report.html import chart_job
from advisor.report.render import render_document

MP2 = SAMPLES / "mp2_energy"


@pytest.fixture(scope="module")
def mp2_doc() -> Document:
    return build_document(analyze(MP2 / "summary.json", AnalyzeOptions(context=MP2 / "investigation.yaml")))


def _jobs(doc: Document, embed: str) -> list[charts.ChartJob]:
    return [chart_job(b.spec, embed) for s in doc.sections for b in s.blocks if isinstance(b, Chart)]


@pytest.mark.skipif(usable_cores() < 2, reason="a drawing process needs a second core")
def test_a_drawing_process_draws_what_this_process_draws(mp2_doc):
    jobs = _jobs(mp2_doc, "png") + _jobs(mp2_doc, "svg")
    with drawing_process() as drawer:
        assert isinstance(drawer, ProcessDrawer)
        elsewhere = [chart() for chart in drawer.start(jobs)]
    assert len(jobs) == 6 and elsewhere == [chart() for chart in LocalDrawer().start(jobs)]
    assert elsewhere[0].startswith(b"\x89PNG") and elsewhere[3].startswith(b"<svg")


def test_no_process_where_none_is_wanted():
    with drawing_process(wanted=False) as drawer:
        assert isinstance(drawer, LocalDrawer)


def _die() -> None:
    os._exit(1)


def test_charts_of_a_process_that_died_are_drawn_here(mp2_doc):
    jobs = _jobs(mp2_doc, "png")[:1]
    with ProcessPoolExecutor(max_workers=1) as executor:
        executor.submit(_die)  # the pool breaks: its futures fail with BrokenProcessPool
        drawn = ProcessDrawer(executor).start(jobs)
        assert [chart() for chart in drawn] == [charts.draw(jobs[0])]
    after_shutdown = ProcessDrawer(executor).start(jobs)  # a drawer whose process is gone draws here too
    assert [chart() for chart in after_shutdown] == [charts.draw(jobs[0])]


def test_a_chart_that_cannot_be_drawn_stops_the_pdf_with_its_own_error():
    doc = Document("t", (), (Section("s", (Chart("bad", "Bad", {"kind": "no-such-chart"}),)),))
    with pytest.raises(KeyError, match="no-such-chart"):
        render_document(doc, "pdf", Path("r.pdf"))


@pytest.mark.skipif(usable_cores() < 2, reason="a drawing process needs a second core")
def test_the_pdf_is_the_same_with_or_without_a_drawing_process(tmp_path, monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    args = ["report", str(MP2 / "summary.json"), "--context", str(MP2 / "investigation.yaml"), "--quiet"]
    assert main([*args, "-o", str(tmp_path / "two.pdf")]) == 0
    assert main([*args, "-o", str(tmp_path / "one.pdf"), "--jobs", "1"]) == 0
    assert (tmp_path / "two.pdf").read_bytes() == (tmp_path / "one.pdf").read_bytes()
