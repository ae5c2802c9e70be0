"""A profile kind added from outside the package: the toy kind in tests/kinds/toy_kind/ is declared
under the `advisor.kinds` entry-point group by a distribution made here, exactly as an organisation's
package would declare its profiler, and runs end to end through `advisor report`."""

import json
import os
import subprocess
from pathlib import Path

import pytest
from conftest import advisor_command
from tests_support import SAMPLES

from advisor.cli import main

HERE = Path(__file__).parent
SAMPLE = HERE / "sample.toy"


def _distribution(folder: Path) -> Path:
    """A minimal installed distribution (dist-info) that declares the toy kind's entry point."""
    info = folder / "toy_kind-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-kind\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[advisor.kinds]\ntoy = toy_kind\n")
    return folder


@pytest.fixture
def toy(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(_distribution(tmp_path / "site")))
    monkeypatch.syspath_prepend(str(HERE))
    return tmp_path


def test_report_on_the_toy_kind(toy, capsys):
    out = toy / "findings.md"
    assert main(["report", str(SAMPLE), "-o", str(out)]) == 0
    text = out.read_text()
    assert "(toyprof-csv) · Toy-1 · report by advisor" in text  # the machine, named by the kind's field
    assert "## Toy utilisation" in text  # the kind's own section
    assert "| Device | Toy-1 |" in text  # its setup row
    assert "Toy-1 accelerator — chosen by device Toy-1" in text  # its hardware table, matched by device name
    assert "`toy-dram-bound`" in text and "DRAM throughput 90 GB/s is over 60.00 % of the peak." in text
    assert "**SM busy 42.50 %** of 100 µs." in text  # 42.5 as printed (0..100) is the fraction 0.425
    assert "Tensor Engine" not in text and "weight-reload" not in text  # nothing of Neuron's


def test_toy_analysis_json_keeps_units_and_vendor_names(toy):
    out = toy / "analysis.json"
    assert main(["report", str(SAMPLE), "-o", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["kind"] == "toy"
    metrics = data["metrics"]
    assert metrics["total_time"] == {**metrics["total_time"], "value": pytest.approx(1e-4), "unit": "s",
                                     "raw_name": "kernel__time.sum"}
    assert metrics["dram_bytes"]["value"] == 9e6 and metrics["dram_bytes"]["unit"] == "bytes"
    assert metrics["sm_busy_percent"]["value"] == pytest.approx(0.425)
    assert [f["name"] for f in data["findings"]] == ["toy-dram-bound"]
    assert data["packs"] == {"toy": "1.0.0"}  # the Neuron pack does not apply to a toy profile


def test_neuron_reports_never_mention_the_toy_kind(toy):
    out = toy / "neuron.md"
    assert main(["report", str(SAMPLES / "mp2_energy" / "summary.json"), "-o", str(out)]) == 0
    text = out.read_text()
    assert "toy" not in text.lower() and "dram_throughput" not in text


def test_rules_list_shows_kinds_and_filters(toy, capsys):
    assert main(["rules", "list"]) == 0
    listing = capsys.readouterr().out
    assert "toy-dram-bound" in listing and "weight-reload" in listing
    assert main(["rules", "list", "--kind", "toy"]) == 0
    only = capsys.readouterr().out
    assert "toy-dram-bound" in only and "weight-reload" not in only


def test_toy_pack_examples_pass(toy, capsys):
    assert main(["rules", "test", str(HERE / "toy_kind" / "rules")]) == 0
    assert "2 passed, 0 failed" in capsys.readouterr().out


def test_unrecognised_input_lists_every_kind_tried(toy, tmp_path, capsys):
    odd = tmp_path / "odd.csv"
    odd.write_text("a;b;c\n1;2;3\n")
    assert main(["report", str(odd)]) == 2
    error = capsys.readouterr().err.strip()
    assert error.startswith(f"advisor: error: {odd}: unknown format: no profile kind reads it; tried AWS Neuron (")
    assert "; Toy Profiler (toyprof CSV (first line `toyprof,1`))" in error


def test_the_installed_cli_finds_the_kind_by_entry_point(toy):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(toy / "site"), str(HERE)])}
    done = subprocess.run([*advisor_command(), "report", str(SAMPLE)], capture_output=True, text=True, env=env,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert "## Toy utilisation" in done.stdout


def test_an_organisation_pack_for_every_kind_still_runs_on_the_toy_kind(toy, tmp_path):
    """A pack without `kinds:` that reads a Neuron metric: on a toy profile its rule is not evaluated
    (the metric is missing there), and the report is written."""
    pack = tmp_path / "team.yaml"
    pack.write_text("""\
pack: team
version: 1.0.0
rules:
  - id: TEAM001
    name: team-weight-reload
    title: Weights reloaded too often
    severity: low
    when: weight_reload_ratio > 4
    message: Reloaded.
    recommendation: Keep weights resident.
""")
    out = tmp_path / "toy.md"
    assert main(["report", str(SAMPLE), "--rules", str(pack), "-o", str(out)]) == 0
    text = out.read_text()
    assert "## Rules not evaluated" in text
    assert "| `team-weight-reload` | Weights reloaded too often | `weight_reload_ratio` |" in text


def test_another_kinds_option_is_refused(toy, capsys):
    assert main(["report", str(SAMPLE), "--neff", "k.neff"]) == 2
    assert capsys.readouterr().err == (f"advisor: error: {SAMPLE}: --neff: not an option of Toy Profiler inputs, "
                                       "which this is\n")


def test_a_section_under_a_misspelt_place_is_an_error_naming_the_kind(toy, monkeypatch, capsys):
    """Issue 24: a kind's section under a place the report does not have used to disappear silently."""
    import toy_kind.report as toy_report

    real = toy_report.sections
    monkeypatch.setattr(toy_report, "sections", lambda analysis: {"utilization": real(analysis)["utilisation"]})
    out = toy / "findings.md"
    assert main(["report", str(SAMPLE), "-o", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("advisor: error: profile kind 'toy' (") and "toy_kind/report.py" in err
    assert "sections placed under 'utilization', which its PLACES (utilisation) do not declare" in err
    assert "did you mean 'utilisation'" in err and not out.exists()
