"""Charts drawn in a second process are the charts drawn here, byte for byte; a process that dies is
replaced by drawing here; a chart that cannot be drawn stops the PDF with its own error."""

import os
import signal
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
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
        with pytest.raises(BrokenProcessPool):
            executor.submit(_die).result()
        assert [chart() for chart in ProcessDrawer(executor).start(jobs)] == [charts.draw(jobs[0])]  # at submit
    assert [chart() for chart in ProcessDrawer(executor).start(jobs)] == [charts.draw(jobs[0])]  # shut down


class _DyingExecutor:
    """Takes the chart, then its process dies before it is drawn."""

    def submit(self, *_: object) -> Future:
        future: Future = Future()
        future.set_exception(BrokenProcessPool("the process died"))
        return future


def test_a_chart_whose_process_died_while_drawing_is_drawn_here(mp2_doc):
    jobs = _jobs(mp2_doc, "png")[:2]
    assert [chart() for chart in ProcessDrawer(_DyingExecutor()).start(jobs)] == [charts.draw(j) for j in jobs]


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


@pytest.mark.skipif(usable_cores() < 2, reason="a drawing process needs a second core")
def test_a_failing_command_does_not_wait_for_the_drawing_process():
    """Bad input: the error comes at once; the process loading matplotlib is ended (SIGTERM), not waited
    for (a shutdown would let it finish and exit by itself, with 0)."""
    with pytest.raises(ValueError, match="bad input"), drawing_process() as drawer:
        processes = list(drawer.executor._processes.values())  # started at once, to load matplotlib
        raise ValueError("bad input")
    assert len(processes) == 1 and processes[0].exitcode == -signal.SIGTERM
