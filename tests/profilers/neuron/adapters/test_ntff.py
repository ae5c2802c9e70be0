"""The .ntff path, with a fake `neuron-profile` that honours the real command line."""

import json
import os

import pytest
from tests_support import FAKE_BIN

from advisor.core.errors import AdvisorError
from advisor.kinds.base import LoadOptions
from advisor.profilers.neuron.adapters import load_profiles


@pytest.fixture
def capture(tmp_path):
    (tmp_path / "kernel.neff").write_bytes(b"NEFF\x00fake")
    ntff = tmp_path / "profile.ntff"
    ntff.write_bytes(b"NTFF\x03" + bytes(64))
    return ntff


@pytest.fixture
def fake_on_path(monkeypatch, tmp_path):
    log = tmp_path / "calls.log"
    monkeypatch.setenv("PATH", f"{FAKE_BIN}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_NEURON_PROFILE_LOG", str(log))
    return log


def test_runs_neuron_profile_view_with_the_neff_beside_it(capture, fake_on_path):
    [profile] = load_profiles(capture)
    calls = [json.loads(line) for line in fake_on_path.read_text().splitlines()]
    assert calls == [["view", "-n", str(capture.parent.resolve() / "kernel.neff"), "-s", str(capture),
                      "--output-format", "summary-json"]]
    assert profile.source.format == "ntff"
    assert "neuron-profile view -n" in profile.source.converted_with
    assert profile.values["vector_engine_active_time_percent"] == pytest.approx(0.9645396092701302)
    assert profile.values["mfu_estimated_percent"] is None  # -1 sentinel from the tool


def test_explicit_tool_and_neff(capture, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    other = tmp_path / "sub"
    other.mkdir()
    neff = other / "model.neff"
    neff.write_bytes(b"NEFF")
    (capture.parent / "kernel.neff").unlink()
    [profile] = load_profiles(capture, LoadOptions(kind_options={
        "neuron_profile": str(FAKE_BIN / "neuron-profile"), "neff": str(neff)}))
    assert profile.values["total_time"] == pytest.approx(0.213808050051)


def test_without_the_tool_names_the_command_to_run(capture, monkeypatch):
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    monkeypatch.setattr("advisor.profilers.neuron.adapters.ntff.DEFAULT_TOOL_DIR", capture.parent / "none")
    with pytest.raises(AdvisorError) as info:
        load_profiles(capture)
    problem = info.value.problem
    assert "aws-neuronx-tools" in problem
    assert f"neuron-profile view -n {capture.parent.resolve() / 'kernel.neff'} -s {capture} " \
           "--output-format summary-json" in problem


def test_tool_failure_is_reported(capture, fake_on_path):
    capture.write_bytes(b"NTFF\x04" + bytes(64))
    with pytest.raises(AdvisorError, match=r"view failed \(exit 1\).*NTFF version 4"):
        load_profiles(capture)


def test_several_neffs_need_a_choice(capture, fake_on_path):
    (capture.parent / "other.neff").write_bytes(b"NEFF")
    with pytest.raises(AdvisorError, match="several NEFFs"):
        load_profiles(capture)


def test_no_neff(capture, fake_on_path):
    (capture.parent / "kernel.neff").unlink()
    with pytest.raises(AdvisorError, match="--neff"):
        load_profiles(capture)


def test_trace_asks_for_the_full_json_and_reads_its_events(capture, fake_on_path):
    [profile] = load_profiles(capture, LoadOptions(kind_options={"trace": True}))
    [call] = [json.loads(line) for line in fake_on_path.read_text().splitlines()]
    written = call[-1]
    assert call[:-1] == ["view", "-n", str(capture.parent.resolve() / "kernel.neff"), "-s", str(capture),
                         "--output-format", "json", "--output-file"] and written.endswith("/profile.json")
    assert not os.path.exists(written)  # the temporary trace is removed once read
    assert profile.source.format == "ntff" and profile.source.path == str(capture)
    assert profile.source.converted_with.endswith("--output-format json --output-file profile.json")
    assert profile.source.shape == "full trace: 2 instructions, 2 DMA transfers; read whole in memory"
    assert profile.values["total_time"] == pytest.approx(0.213808050051)
    assert [t.name for t in profile.trace.extra["tensors"]] == ["input0", "output0"]


def test_trace_with_neuron_explorer_asks_for_its_parquet_directory(tmp_path):
    from advisor.profilers.neuron.adapters.ntff import _output_arguments

    assert _output_arguments("/opt/aws/neuron/bin/neuron-explorer", tmp_path) == (
        ("--output-file", str(tmp_path / "explorer")), tmp_path / "explorer")
    assert _output_arguments("neuron-profile", None) == (("--output-format", "summary-json"), None)


def test_trace_without_the_tool_names_the_full_json_command(capture, monkeypatch):
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    monkeypatch.setattr("advisor.profilers.neuron.adapters.ntff.DEFAULT_TOOL_DIR", capture.parent / "none")
    with pytest.raises(AdvisorError, match=r"--output-format json --output-file profile.json` and then "
                                           r"`advisor report profile.json`"):
        load_profiles(capture, LoadOptions(kind_options={"trace": True}))


def test_trace_is_refused_for_an_input_that_is_not_an_ntff(tmp_path):
    from tests_support import SAMPLES

    with pytest.raises(AdvisorError, match=r"--trace converts an \.ntff"):
        load_profiles(SAMPLES / "mp2_energy" / "summary.json", LoadOptions(kind_options={"trace": True}))
