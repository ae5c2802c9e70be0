"""Issue 37: the notebook API as a notebook user meets it. docs/examples/notebook.ipynb is executed with nbclient
(a real Jupyter kernel) on a Neuron, an Nsight Compute and a PyTorch-profiler sample: `dir(advisor)` lists the
API, results show a short repr and a rich display, and their tables are DataFrames."""

from __future__ import annotations

import shutil

import pytest
from tests_support import ROOT

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytestmark = pytest.mark.slow  # a kernel starts: seconds, not milliseconds

NOTEBOOK = ROOT / "docs" / "examples" / "notebook.ipynb"


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    """The notebook run in a folder that has the samples, as a reader runs it from the project folder."""
    where = tmp_path_factory.mktemp("notebook")
    (where / "samples").symlink_to(ROOT / "samples")
    shutil.copy(NOTEBOOK, where / "notebook.ipynb")
    notebook = nbformat.read(where / "notebook.ipynb", as_version=4)
    nbclient.NotebookClient(notebook, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(where)}}).execute()
    return [cell for cell in notebook.cells if cell.cell_type == "code"]


def _outputs(cell, mime: str) -> str:
    return "".join(str(o.get("data", {}).get(mime, "")) + str(o.get("text", "")) for o in cell.outputs)


def test_every_cell_runs_without_an_error(executed):
    assert not [o for cell in executed for o in cell.outputs if o.output_type == "error"]


def test_dir_lists_the_api(executed):
    assert _outputs(executed[0], "text/plain").replace("\n", " ").split() == [
        "['ComparisonResult',", "'FleetResult',", "'HistoryResult',", "'Result',", "'__version__',", "'analyze',",
        "'compare',", "'fleet',", "'history',", "'load']"]


def test_a_result_prints_a_few_lines_and_displays_the_report(executed):
    printed = _outputs(executed[1], "text/plain").splitlines()
    assert printed[0] == "<advisor.Result neuron: samples/legacy_trace/profile.json>"
    assert printed[1].startswith("verdict: tensor-reload — Tensors are loaded more than twice (up to 28.55 %")
    assert len(printed) <= 8
    rich = _outputs(executed[2], "text/html")
    assert rich.startswith("<iframe srcdoc=") and "TL;DR" in rich and "&lt;svg" in rich  # charts inline, escaped
    assert "<script" not in rich  # the page is an attribute's text: nothing in it runs in the notebook


def test_tables_are_dataframes_for_every_kind(executed):
    findings = _outputs(executed[3], "text/html")
    assert findings.startswith("<div>") and "<table" in findings and "tensor-reload" in findings
    assert "<table" in _outputs(executed[4], "text/html")  # the time budget
    assert "UncoalescedGlobalAccess" in _outputs(executed[5], "text/html")  # ncu's own verdicts
    assert "compute_throughput_percent" in _outputs(executed[6], "text/html")
    assert "'kernel_classes'" in _outputs(executed[7], "text/plain")
    classes = executed[8]
    assert "{'time': 's', 'share': 'fraction', 'count': 'count'}" in _outputs(classes, "text/plain")
    assert "<table" in _outputs(classes, "text/html") and "GEMM" in _outputs(classes, "text/html")
    assert _outputs(executed[9], "text/html").startswith("<iframe srcdoc=")  # the torch trace's rich display
    diff = executed[10]
    assert _outputs(diff, "text/plain").startswith("<advisor.ComparisonResult")
    assert "weight-reload" in _outputs(diff, "text/html")
