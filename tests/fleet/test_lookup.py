"""`store:NAME@LABEL`: the label, the capture time, `run N`, first and latest, and the one-line errors."""

from __future__ import annotations

import pytest
from fleet.frames import frames, profile, write_store

from advisor.core.errors import AdvisorError
from advisor.fleet.lookup import attempts, parse, pick, resolve


def _rows():
    p, _ = frames([profile("gemm", "g1", 0.01, run=1, label="mon"),
                   profile("gemm", "g2", 0.01, run=2, label="tue"),
                   profile("gemm", "g3", 0.01, run=2, label="tue", path="/other/gemm.json"),
                   profile("conv", "c1", 0.01, run=1, captured="2026-11-20T10:00:00"),
                   profile("conv", "c2", 0.01, run=2, captured="2026-11-21T10:00:00")], [])
    return p


def _pick(spec: str) -> str:
    name, label = parse(spec)
    return pick(attempts(_rows(), name, spec), name, label, spec)["hash"]


def test_parse():
    assert parse("store:gemm@mon") == ("gemm", "mon")
    assert parse("store:gemm") == ("gemm", None)
    assert parse("store:a@b@c") == ("a@b", "c")
    with pytest.raises(AdvisorError, match="give a profile name"):
        parse("store:@x")


def test_labels_capture_times_runs_first_latest():
    assert _pick("store:conv") == "c2"
    assert _pick("store:conv@latest") == "c2"
    assert _pick("store:conv@first") == "c1"
    assert _pick("store:conv@run 1") == "c1"
    assert _pick("store:gemm@mon") == "g1"
    assert _pick("store:conv@2026-11-20T10:00:00") == "c1"


def test_ambiguous_lists_the_profiles():
    with pytest.raises(AdvisorError) as caught:
        _pick("store:gemm@tue")
    assert caught.value.problem == ("'tue' matches 2 profiles named 'gemm': /other/gemm.json, /p/gemm/g2.json; give a "
                                    "label or capture time that names one")
    with pytest.raises(AdvisorError, match="the latest point in time"):
        _pick("store:gemm")


def test_unknown_label_and_name():
    with pytest.raises(AdvisorError) as caught:
        _pick("store:gemm@wed")
    assert caught.value.problem == ("no attempt of 'gemm' is labelled 'wed'; known: mon, tue, first, latest")
    with pytest.raises(AdvisorError) as caught:
        _pick("store:conf")
    assert caught.value.where == "store:conf"
    assert caught.value.problem == "no profile named 'conf' in the store; known: conv, gemm; did you mean 'conv'?"


def test_resolve_gives_the_stored_analysis(tmp_path):
    store = write_store(tmp_path / "s", [profile("conv", "c" * 64, 0.01, run=1)], [])
    assert resolve("store:conv", store) == tmp_path / "s" / "analyses" / "cc" / f"{'c' * 64}.json"
