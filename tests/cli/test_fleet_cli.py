"""`advisor fleet` from the command line: every output format, the overview from the store alone, and
one-line errors that leave nothing behind."""

from __future__ import annotations

import json

import pytest
from tests_support import SAMPLES

from advisor.cli import main
from advisor.fleet.store import Store

INPUTS = [str(SAMPLES / "weight_reload"), str(SAMPLES / "ncu_seed004" / "details.csv"), str(SAMPLES / "rbln_ranks")]


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    folder = tmp_path_factory.mktemp("fleet")
    assert main(["fleet", *INPUTS, "--store", str(folder / "store"), "--workers", "1", "--quiet", "--label", "n1",
                 "-o", str(folder / "fleet.json")]) == 0
    return folder


def test_every_format_from_the_run_and_from_the_store_alone(stored, capsys):
    summary = json.loads((stored / "fleet.json").read_text())
    assert json.dumps(summary).count("weight_reload") >= 1
    rows = Store.open(stored / "store").profiles()
    assert sorted(rows["kind"]) == ["ncu", "neuron", "rbln"] and set(rows["label"]) == {"n1"}
    for fmt in ("md", "html", "pdf", "json"):
        out = stored / f"again.{fmt}"
        assert main(["fleet", "--store", str(stored / "store"), "-o", str(out)]) == 0
        assert out.stat().st_size > 0
    assert (stored / "again.json").read_bytes() == (stored / "fleet.json").read_bytes()  # same store, same bytes
    assert (stored / "again.pdf").read_bytes().startswith(b"%PDF")
    assert "weight_reload" in (stored / "again.md").read_text()


def test_a_rerun_says_what_it_skipped(stored, capsys):
    assert main(["fleet", *INPUTS, "--store", str(stored / "store"), "--workers", "1", "-o",
                 str(stored / "rerun.md")]) == 0
    assert capsys.readouterr().err.strip().splitlines()[-2] == (  # before the closing `advisor: wrote` line
        "advisor: fleet: run 2: 3 profiles found; 0 analysed, 0 failed, 3 already stored, 3 other files skipped")


@pytest.mark.parametrize(("argv", "message"), [
    (["--store", "{tmp}/none", "-o", "{tmp}/x.md"], "{tmp}/none: no such store (run `advisor fleet PATH --store DIR` "
                                                    "first)"),
    (["{tmp}/absent", "--store", "{tmp}/new"], "{tmp}/absent: no such file or folder"),
    ([str(SAMPLES / "weight_reload"), "--store", "{tmp}/new", "--workers", "2", "--scheduler", "tcp://h:8786"],
     "--workers: sizes the local cluster; an existing cluster (--scheduler) has its own workers"),
    (["--store", str(SAMPLES), "-o", "{tmp}/x.md"], f"{SAMPLES}: a folder that is not an advisor fleet store "
                                                    "(no store.json) and not empty"),
])
def test_bad_usage_is_one_line_and_writes_nothing(tmp_path, capsys, argv, message):
    assert main(["fleet", *(a.replace("{tmp}", str(tmp_path)) for a in argv)]) == 2
    assert capsys.readouterr().err == f"advisor: error: {message.replace('{tmp}', str(tmp_path))}\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == []


@pytest.mark.parametrize("workers", ["0", "-3", "nan", "1e9"])
def test_a_worker_count_out_of_range_is_a_usage_error(tmp_path, capsys, workers):
    with pytest.raises(SystemExit) as exited:
        main(["fleet", str(SAMPLES / "weight_reload"), "--store", str(tmp_path / "new"), "--workers", workers])
    assert exited.value.code == 2 and sorted(tmp_path.iterdir()) == []
    assert "must be a whole number from 1 to 100000" in capsys.readouterr().err


def test_a_store_in_use_is_refused(stored, capsys):
    store = Store.open(stored / "store")
    with store.lock():
        assert main(["fleet", *INPUTS, "--store", str(stored / "store"), "--workers", "1", "--force"]) == 2
    assert capsys.readouterr().err == f"advisor: error: {stored / 'store'}: the store is in use by another advisor " \
                                      "fleet run\n"


def test_report_options_apply_to_every_profile(tmp_path):
    assert main(["fleet", str(SAMPLES / "weight_reload"), str(SAMPLES / "mp2_energy"), "--store", str(tmp_path / "s"),
                 "--workers", "1", "--quiet", "--select", "weight-reload", "--set", "weight-reload.min_ratio=1.5",
                 "--hardware", "trn2", "-o", str(tmp_path / "x.json")]) == 0
    store = Store.open(tmp_path / "s")
    assert set(store.findings()["rule"]) == {"weight-reload", "memory-bound"}  # and the rule it requires
    assert {store.analysis(h).hardware.name for h in store.profiles()["hash"]} == {"trn2"}


def test_a_run_without_output_only_fills_the_store(tmp_path, capsys):
    assert main(["fleet", str(SAMPLES / "weight_reload"), "--store", str(tmp_path / "s"), "--workers", "1"]) == 0
    out, err = capsys.readouterr()
    hint = f"advisor: fleet: the overview: advisor fleet --store {tmp_path / 's'} -o fleet.md"
    assert out == "" and err.splitlines()[-1] == hint
    assert main(["fleet", "--store", str(tmp_path / "s")]) == 0  # from the store alone: Markdown on stdout
    assert capsys.readouterr().out.startswith("# Fleet overview: 1 profile")
