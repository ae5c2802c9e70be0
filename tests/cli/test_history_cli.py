"""`advisor history` and `advisor compare store:NAME@LABEL --store` on a store folder."""

from __future__ import annotations

import json

import pytest
from fleet.frames import finding, profile, saved_analysis, write_store
from tests_support import SAMPLES

from advisor.cli import main


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    before = profile("weight_reload", "a" * 64, 0.0004063, run=1, label="day1")
    after = profile("weight_reload", "b" * 64, 0.0002438, run=2, label="day2")
    analyses = {"a" * 64: saved_analysis(SAMPLES / "weight_reload" / "summary.json"),
                "b" * 64: saved_analysis(SAMPLES / "weight_reload_fixed" / "summary.json")}
    folder = tmp_path_factory.mktemp("store")
    write_store(folder, [before, after], [finding(before, "weight-reload")], analyses)
    return folder


def test_history_markdown_with_chart(store, tmp_path, capsys):
    output = tmp_path / "h.md"
    assert main(["history", "weight_reload", "--store", str(store), "-o", str(output)]) == 0
    text = output.read_text()
    assert "| 2 | day2 | 243.8 µs | 1.67× | 1.67× | better | `weight-reload` | — |" in text
    assert "](h_files/history-" in text and len(list((tmp_path / "h_files").glob("history-*.png"))) == 1


def test_history_json_and_pdf(store, tmp_path, capsys):
    assert main(["history", "weight_reload", "--store", str(store), "--format", "json"]) == 0
    assert [a["label"] for a in json.loads(capsys.readouterr().out)["attempts"]] == ["day1", "day2"]
    assert main(["history", "weight_reload", "--store", str(store), "-o", str(tmp_path / "h.pdf")]) == 0
    assert (tmp_path / "h.pdf").read_bytes().startswith(b"%PDF")


def test_history_unknown_name_is_one_line(store, capsys):
    assert main(["history", "weight_relod", "--store", str(store)]) == 2
    assert capsys.readouterr().err == ("advisor: error: weight_relod: no profile named 'weight_relod' in the store; "
                                       "known: weight_reload; did you mean 'weight_reload'?\n")


def test_compare_store_inputs(store, capsys):
    assert main(["compare", "store:weight_reload@day1", "store:weight_reload", "--store", str(store)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# Comparison: weight_reload@day1 → weight_reload\n")
    assert "**weight_reload is 1.67× faster** than weight_reload@day1" in out


def test_compare_store_input_errors(store, capsys):
    assert main(["compare", "store:weight_reload@day1", "store:weight_reload"]) == 2
    assert capsys.readouterr().err == ("advisor: error: store:weight_reload@day1: a store: input needs --store DIR "
                                       "(the fleet store that holds it)\n")
    assert main(["compare", "store:weight_reload@day9", "store:weight_reload", "--store", str(store)]) == 2
    assert capsys.readouterr().err == ("advisor: error: store:weight_reload@day9: no attempt of 'weight_reload' is "
                                       "labelled 'day9'; known: day1, day2, first, latest; did you mean 'day2'?\n")


def test_history_names_the_attempts_and_the_speedup(store, tmp_path, capsys):
    out = tmp_path / "h.md"
    assert main(["history", "weight_reload", "--store", str(store), "-o", str(out)]) == 0
    assert capsys.readouterr() == ("", f"advisor: wrote {out}: 2 attempts of weight_reload, last 1.67× faster "
                                       "than the first, 0 regressions\n")
    assert main(["history", "weight_reload", "--store", str(store), "-o", str(out), "--quiet"]) == 0
    assert capsys.readouterr() == ("", "")
