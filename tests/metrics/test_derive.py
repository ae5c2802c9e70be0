import pytest

from advisor.api import analyze_profile
from advisor.packs.load import load_packs
from advisor.profilers.neuron.adapters import load_profiles


@pytest.fixture(scope="module")
def ruleset():
    return load_packs()


def analysis_of(path, ruleset, hardware=None):
    [profile] = load_profiles(path)
    return analyze_profile(profile, ruleset, hardware)


def test_seed_002_numbers(write, mp2, ruleset):
    a = analysis_of(write("mp2.json", mp2), ruleset)
    m = a.metrics
    assert m["vector_engine_active_time_percent"].value == pytest.approx(0.9645, abs=1e-4)
    assert m["vector_engine_active_time_percent"].source == "reported"
    # ~30.8 GB/s effective read bandwidth, decimal, as seed 002 says
    assert m["hbm_read_bandwidth"].value == pytest.approx(30.79e9, rel=1e-3)
    assert m["hbm_read_bandwidth"].unit == "bytes/s"
    assert m["hbm_read_bandwidth"].source == "derived"
    assert m["hbm_read_bandwidth"].inputs == ("hbm_read_bytes", "total_time")
    # Active times derived from the reported fractions (seed 002's table: 0.2062 s, 0.0565 s)
    assert m["vector_engine_active_time"].value == pytest.approx(0.2062, abs=1e-4)
    assert m["dma_active_time"].value == pytest.approx(0.0565, abs=1e-4)
    assert m["peak_flops_bandwidth_ratio"].value == pytest.approx(223.78, abs=0.01)
    assert m["dma_transfer_average_bytes"].value == pytest.approx(3288352768 / 18935)
    assert m["vector_engine_mean_instruction_time"].value == pytest.approx(0.224051265651 / 403039)
    assert m["engine_overlap"].value == pytest.approx(0.2915, abs=1e-3)


def test_missing_inputs_are_unavailable_never_zero(write, mp2, ruleset):
    a = analysis_of(write("mp2.json", mp2), ruleset)
    ai = a.metrics["mm_arithmetic_intensity"]
    assert ai.value is None
    assert set(ai.missing) == {"hardware_flops", "transpose_flops"}
    assert a.metrics["weight_reload_ratio"].value is None


def test_division_by_zero_is_unavailable(write, ruleset):
    a = analysis_of(write("z.json", {"total_time": 0, "hbm_read_bytes": 100, "weight_queue_bytes": 5,
                                     "weight_size_bytes": 0, "instance_type": "trn1.2xlarge"}), ruleset)
    assert a.metrics["hbm_read_bandwidth"].value is None
    assert a.metrics["weight_reload_ratio"].value is None


def test_reported_value_kept_and_cross_checked(write, ruleset):
    profile = {"total_time": 0.1, "hardware_flops": 2.0e12, "transpose_flops": 0.0, "hbm_read_bytes": 9.0e9,
               "hbm_write_bytes": 1.0e9, "mm_arithmetic_intensity": 250.0, "instance_type": "trn1.2xlarge"}
    a = analysis_of(write("x.json", profile), ruleset)
    ai = a.metrics["mm_arithmetic_intensity"]
    assert ai.value == 250.0 and ai.source == "reported"
    assert ai.check.derived_value == pytest.approx(200.0)
    assert ai.check.agrees is False
    assert any("mm_arithmetic_intensity: reported 250" in n for n in a.notes)


def test_humanised_text_ai_cross_check_within_one_percent(write, ruleset):
    text = (
        "time     total_time               53.78 ms\n"
        "compute  hardware_flops           654.344 GFLOPS\n"
        "compute  transpose_flops          12.5 GFLOPS\n"
        "memory   hbm_read_bytes           4.1 GiB\n"
        "memory   hbm_write_bytes          340.347 KiB\n"
        "memory   mm_arithmetic_intensity  145.77\n"
        "system   instance_type            inf2.xlarge\n"
    )
    a = analysis_of(write("s.txt", text), ruleset)
    ai = a.metrics["mm_arithmetic_intensity"]
    assert ai.source == "reported"
    assert ai.check.relative_difference < 0.01
    assert ai.check.agrees is True


def test_hardware_override_changes_derivations(write, mp2, ruleset):
    a = analysis_of(write("mp2.json", mp2), ruleset, hardware="trn2")
    assert a.hardware.name == "trn2"
    assert a.metrics["peak_flops_bandwidth_ratio"].value == pytest.approx(109.84, abs=0.01)


def test_unknown_hardware_makes_peak_metrics_unavailable(write, mp2, ruleset):
    del mp2["instance_type"]
    a = analysis_of(write("mp2.json", mp2), ruleset)
    assert a.hardware is None
    assert a.metrics["mbu_estimated_percent"].value is None
    assert "hw_hbm_bandwidth" in a.metrics["mbu_estimated_percent"].missing
    assert any("Hardware unknown" in n for n in a.notes)


def test_reported_unavailable_but_derivable(write, ruleset):
    profile = {"total_time": 0.5, "dma_transfer_total_bytes": 4096.0, "dma_transfer_count": 2,
               "dma_transfer_average_bytes": -1}
    a = analysis_of(write("x.json", profile), ruleset)
    avg = a.metrics["dma_transfer_average_bytes"]
    assert avg.value == 2048 and avg.source == "derived"
    assert "reported it as unavailable" in avg.note


def test_units_of_reported_fields(write, mp2, ruleset):
    a = analysis_of(write("mp2.json", mp2), ruleset)
    units = {n: a.metrics[n].unit for n in ("total_time", "hbm_read_bytes", "dma_active_time_percent",
                                             "vector_engine_instruction_count", "neuroncore_cycle_count")}
    assert units == {"total_time": "s", "hbm_read_bytes": "bytes", "dma_active_time_percent": "fraction",
                     "vector_engine_instruction_count": "count", "neuroncore_cycle_count": "cycles"}
