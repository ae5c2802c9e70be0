"""Issue 37: the notebook API's calls and results: `load` reads only saved analyses, every table is a typed
DataFrame with its units, a short repr, and `fleet`/`history` results over a store (workers=1: in this process)."""

from __future__ import annotations

import shutil

import pytest
from tests_support import ROOT, SAMPLES

import advisor
from advisor.core.errors import AdvisorError


def test_dir_and_all_list_the_api_and_nothing_else():
    api = ["ComparisonResult", "FleetResult", "HistoryResult", "Result", "__version__", "analyze", "compare",
           "fleet", "history", "load"]
    assert dir(advisor) == api == sorted(advisor.__all__)
    assert all(getattr(advisor, name).__doc__ for name in api if name != "__version__")
    assert ">>> " in advisor.analyze.__doc__ and ">>> " in advisor.fleet.__doc__  # a call to copy


def test_load_reads_a_saved_analysis_and_refuses_a_profile(tmp_path):
    saved = advisor.analyze(SAMPLES / "legacy_trace" / "profile.json").save(tmp_path / "a.json")
    assert advisor.load(saved).verdict == "tensor-reload"
    with pytest.raises(AdvisorError, match="not a saved analysis JSON"):
        advisor.load(SAMPLES / "legacy_trace" / "profile.json")


def test_a_results_tables_are_typed_with_their_units():
    result = advisor.analyze(SAMPLES / "legacy_trace" / "profile.json")
    findings = result.findings
    assert findings.index.name == "rule" and findings.index[0] == "tensor-reload"
    assert findings.loc["tensor-reload", "estimated_gain"] == pytest.approx(0.2855, abs=1e-4)
    assert str(findings["estimated_gain"].dtype) == "float64" and findings["root_cause"].dtype == bool
    assert list(findings["severity"].cat.categories) == ["info", "low", "medium", "high", "critical"]
    assert findings.attrs["units"] == {"estimated_gain": "fraction"}
    bounds = result.bounds
    assert bounds["recoverable_at_most"].dropna().is_monotonic_increasing  # tightest first, unavailable last
    assert bounds.attrs["units"] == {"recoverable_at_most": "fraction"}
    tensors = result.tables["tensor_loads"]
    assert tensors.attrs["title"] and set(tensors.attrs["units"].values()) <= {"bytes", "ratio", "count", "s",
                                                                              "fraction"}


def test_the_repr_is_a_few_lines_with_the_verdict():
    text = repr(advisor.analyze(SAMPLES / "legacy_trace" / "profile.json"))
    lines = text.splitlines()
    assert lines[0] == "<advisor.Result neuron: " + str(SAMPLES / "legacy_trace" / "profile.json") + ">"
    assert lines[1].startswith("verdict: tensor-reload — Tensors are loaded more than twice (up to 28.55 %")
    assert lines[2] == "7 findings:" and lines[-1] == "  … and 4 more (.findings)" and len(lines) == 7


def test_a_comparison_gives_its_changes_as_dataframes():
    diff = advisor.compare([SAMPLES / "weight_reload" / "summary.json", SAMPLES / "weight_reload_fixed" /
                            "summary.json"])
    assert repr(diff).splitlines()[0].startswith("<advisor.ComparisonResult ")
    assert diff.findings.loc["weight-reload", "status"] == "fixed"
    assert diff.metrics.loc["total_time", "unit"] == "s" and diff.metrics.attrs["units"]["change"].startswith(
        "fraction")


def test_fleet_is_the_call_even_once_the_fleet_package_is_imported():
    import advisor.fleet.run  # the import system sets the package as advisor's attribute

    assert callable(advisor.fleet) and advisor.fleet.__module__ == "advisor.notebook"


def test_fleet_and_history_results_over_a_store(tmp_path):
    for attempt in (1, 2):
        folder = tmp_path / f"attempt{attempt}"
        folder.mkdir()
        source = "weight_reload" if attempt == 1 else "weight_reload_fixed"
        shutil.copy(SAMPLES / source / "summary.json", folder / "weight_reload.json")
        run = advisor.fleet([folder], store=tmp_path / "store", label=f"attempt-{attempt}", workers=1)
        assert run.run is not None and run.run.analysed == 1
    overview = advisor.fleet(store=tmp_path / "store")
    assert overview.run is None and overview.summary.profiles == 2
    assert repr(overview).startswith(f"<advisor.FleetResult {tmp_path / 'store'}: 2 profiles (2 analysed, 0 failed)>")
    assert len(overview.profiles) == 2 and "weight-reload" in set(overview.root_causes["rule"])
    assert overview.root_causes.attrs["units"]["recoverable_time"] == "s"
    history = advisor.history("weight_reload", store=tmp_path / "store")
    assert list(history.attempts["label"]) == ["attempt-1", "attempt-2"]
    assert repr(history).startswith("<advisor.HistoryResult weight_reload: 2 attempts")
    written = overview.save(tmp_path / "fleet.md")
    assert written.read_text(encoding="utf-8").startswith("# Fleet overview")
    with pytest.raises(AdvisorError):  # never into the store it read
        overview.save(tmp_path / "store" / "overview.md")


def test_the_rich_display_keeps_the_report_out_of_the_notebooks_page():
    html = advisor.analyze(ROOT / "samples" / "mp2_energy" / "summary.json")._repr_html_()
    assert html.startswith('<iframe srcdoc="&lt;!DOCTYPE html&gt;') and html.endswith("</iframe>")
    assert "<style" not in html  # the stylesheet is the iframe page's, escaped in the attribute
