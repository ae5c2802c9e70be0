"""Rule names per kind on the command line and in the settings file (issue 24): a bare name is the analysed
profile's kind's rule; KIND/NAME names one kind's rule and matches nothing on another kind's profile; the
former names of Nsight Compute's speed-of-light rules still work; a settings file, which applies to every
kind, refuses a bare name rules of several kinds answer to (KIND/NAME there names one kind's rule)."""

import json

import pytest
from tests_support import SAMPLES, installed_kinds

from advisor.cli import main

NCU = SAMPLES / "ncu_seed004" / "output.txt"  # fires compute-bound (ncu: "Compute is more heavily utilized")
NEURON = SAMPLES / "weight_reload" / "summary.json"  # fires memory-bound (Neuron's own)


@pytest.fixture
def findings(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no settings file but the test's own

    def run(sample, *args):
        out = tmp_path / "a.json"
        assert main(["report", str(sample), *args, "-o", str(out)]) == 0
        return {f["name"] for f in json.loads(out.read_text())["findings"]}

    return run


def test_bare_names_are_the_profiles_kinds(findings):
    assert "compute-bound" in findings(NCU) and "memory-bound" in findings(NEURON)
    assert "compute-bound" not in findings(NCU, "--ignore", "compute-bound")
    assert "memory-bound" not in findings(NEURON, "--ignore", "memory-bound")
    assert "compute-bound" in findings(NCU, "--ignore", "memory-bound")  # ncu's memory-bound did not fire anyway


def test_former_names_still_work(findings):
    assert "compute-bound" not in findings(NCU, "--ignore", "compute-throughput-bound")
    assert "compute-bound" not in findings(NCU, "--set", "compute-throughput-bound.min_gap=0.9")
    assert findings(NCU, "--select", "compute-throughput-bound") == {"compute-bound"}


def test_kind_qualified_names_apply_to_that_kinds_profiles_only(findings):
    assert "compute-bound" not in findings(NCU, "--ignore", "ncu/compute-bound")
    assert "compute-bound" in findings(NCU, "--ignore", "neuron/compute-bound")
    assert "memory-bound" in findings(NEURON, "--ignore", "ncu/memory-bound")
    assert "memory-bound" not in findings(NEURON, "--ignore", "neuron/memory-bound")
    assert "compute-bound" not in findings(NCU, "--set", "ncu/compute-bound.min_gap=0.9")
    assert "memory-bound" in findings(NEURON, "--set", "ncu/compute-bound.min_gap=0.9")
    assert findings(NCU, "--select", "ncu/*") == findings(NCU)


def test_a_misspelt_kind_or_name_is_still_an_error(findings, capsys):
    with pytest.raises(AssertionError):
        findings(NCU, "--ignore", "nuron/memory-bound")
    assert capsys.readouterr().err == ("advisor: error: --ignore: 'nuron/memory-bound': no profile kind 'nuron' "
                                       f"(installed: {installed_kinds()}); did you mean 'neuron'?\n")
    with pytest.raises(AssertionError):
        findings(NCU, "--ignore", "ncu/memory-bund")
    assert "matches no rule, id, alias, category or pack" in capsys.readouterr().err


def test_a_settings_file_refuses_a_name_of_several_kinds(tmp_path, findings, capsys):
    settings = tmp_path / "advisor.toml"
    settings.write_text('ignore = ["memory-bound"]\n')
    assert main(["report", str(NEURON), "-o", str(tmp_path / "a.json")]) == 2
    assert capsys.readouterr().err == (
        f"advisor: error: {settings}: ignore: 'memory-bound' is ambiguous: rules of several profile kinds answer "
        "to it (ncu/memory-bound, neuron/memory-bound); name one as KIND/NAME\n")
    settings.write_text('[set]\n"compute-bound.min_gap" = 0.9\n')
    assert main(["report", str(NCU), "-o", str(tmp_path / "a.json")]) == 2
    assert "set: 'compute-bound' is ambiguous" in capsys.readouterr().err

    settings.write_text('ignore = ["neuron/memory-bound", "ncu/compute-throughput-bound"]\n')
    assert "memory-bound" not in findings(NEURON) and "compute-bound" not in findings(NCU)
    settings.write_text('ignore = ["*-bound"]\n')  # a pattern means every kind's rules it matches
    assert "memory-bound" not in findings(NEURON) and "compute-bound" not in findings(NCU)
