import pytest

from advisor.core.errors import AdvisorError
from advisor.metrics.hardware import for_profile, resolve, target_names
from advisor.profilers.neuron import KIND as NEURON


def _resolve(instance_type, override, metadata=None):
    return resolve(NEURON, {"instance_type": instance_type} if instance_type else {}, override, metadata)


def for_instance_type(instance_type):
    return for_profile(NEURON, {"instance_type": instance_type} if instance_type else {})


def test_targets():
    assert target_names(NEURON) == ["inf2", "trn1", "trn1n", "trn2", "trn3"]


@pytest.mark.parametrize(
    ("instance", "name", "peak", "hbm", "ridge"),
    [
        ("trn1.2xlarge", "trn1", 91.75e12, 410e9, 223.78),
        ("trn1n.32xlarge", "trn1n", 91.75e12, 410e9, 223.78),  # longest prefix wins over trn1
        ("inf2.xlarge", "inf2", 91.75e12, 410e9, 223.78),
        ("trn2.48xlarge", "trn2", 78.64e12, 716e9, 109.84),
    ],
)
def test_instance_prefixes_and_ridge(instance, name, peak, hbm, ridge):
    hw = for_instance_type(instance)
    assert hw.name == name
    assert hw.values["tensor_peak_flops_bf16"] == peak
    assert hw.values["hbm_bandwidth"] == hbm
    assert hw.values["tensor_peak_flops_bf16"] / hw.values["hbm_bandwidth"] == pytest.approx(ridge, abs=0.01)
    assert hw.chosen_by == f"instance_type {instance}"


def test_trn1_figures_match_the_reference():
    hw = for_instance_type("trn1.2xlarge")
    assert hw.values["base_clock_hz"] == 1.4e9
    assert hw.values["sbuf_bytes"] == 24 * 2**20
    assert hw.values["psum_bytes"] == 2 * 2**20
    assert hw.units["hbm_bandwidth"] == "bytes/s"


def test_unknown_instance_is_none():
    assert for_instance_type("p5.48xlarge") is None
    assert for_instance_type(None) is None


def test_override_by_name_wins():
    hw = _resolve("trn1.2xlarge", "trn2")
    assert hw.name == "trn2" and hw.chosen_by == "--hardware trn2"


def test_override_by_file_layers_on_base(write):
    path = write("hw.yaml", "name: my-trn1\nbase: trn1\nvalues:\n  hbm_bandwidth: 400e9\n")
    hw = _resolve(None, str(path))
    assert hw.values["hbm_bandwidth"] == 400e9
    assert hw.values["tensor_peak_flops_bf16"] == 91.75e12
    assert "file" in hw.chosen_by


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("values:\n  hbm_bandwith: 1\n", "unknown hardware figure"),
        ("values:\n  hbm_bandwidth: -5\n", "positive number"),
        ("base: trn9\nvalues: {}\n", "unknown base"),
        ("just text\n", "values"),
        ("a: &x [1]\nb: *x\nvalues: {}\n", "aliases"),
    ],
)
def test_bad_hardware_files(write, text, problem):
    with pytest.raises(AdvisorError, match=problem):
        _resolve(None, str(write("hw.yaml", text)))


def test_unknown_name():
    with pytest.raises(AdvisorError, match="neither a known AWS Neuron target"):
        _resolve(None, "tpu-v5")


def test_a_traces_metadata_takes_precedence_over_the_table():
    legacy = {"hbm_ddr_bandwidth": 400e9, "pe_num_rows": 128, "pe_num_cols": 128, "pe_clock_freq": 2.8}
    hw = _resolve("trn1.2xlarge", None, legacy)
    assert hw.values["hbm_bandwidth"] == 400e9 and hw.values["sbuf_bytes"] == 24 * 2**20  # the rest from trn1
    assert hw.values["tensor_peak_flops_bf16"] == pytest.approx(91.75e12, rel=1e-3)  # 2 x 128 x 128 x 2.8 GHz
    assert hw.chosen_by.endswith("with hbm_bandwidth, tensor_clock_hz, tensor_peak_flops_bf16, tensor_peak_flops_fp32, "
                                 "tensor_peak_flops_fp8 from the profile's metadata")
    assert [n for n in hw.notes if "hbm_bandwidth 4e+11 bytes/s" in n]  # differs from the table's 410 GB/s: said
    explorer = {"hbm_ddr_bandwidth": 716e9, "tensor_engine_num_rows": 128, "tensor_engine_num_cols": "bad"}
    assert _resolve(None, None, explorer).values == {"hbm_bandwidth": 716e9}  # no instance type: what it says
    assert _resolve("trn1.2xlarge", "trn2", legacy).values["hbm_bandwidth"] == 716e9  # --hardware still wins
    assert _resolve("trn1.2xlarge", None, {"hbm_ddr_bandwidth": -1}) == for_instance_type("trn1.2xlarge")


def test_metadata_figures_that_cannot_be_one_stack_are_not_used():
    hw = _resolve("trn2.48xlarge", None, {"hbm_ddr_bandwidth": 2.9e12})  # the whole chip's, not one stack's
    assert hw.values["hbm_bandwidth"] == 716e9 and any("use one HBM stack" in n for n in hw.notes)
    slower = _resolve("trn2.48xlarge", None, {"tensor_engine_num_rows": 128, "tensor_engine_num_cols": 128,
                                              "tensor_engine_clock_freq": 1.2})  # half the table's 2.4 GHz
    assert slower.values["tensor_peak_flops_bf16"] == pytest.approx(78.64e12 / 2, rel=1e-3)
    bf16 = slower.values["tensor_peak_flops_bf16"]
    assert slower.values["tensor_peak_flops_fp8"] == pytest.approx(2 * bf16, rel=1e-3)


def test_a_table_can_match_a_numeric_field_exactly(tmp_path):
    from advisor.kinds.base import ProfileKind

    (tmp_path / "hardware.yaml").write_text(
        "match: {field: compute_capability, how: equals}\nunits: {dram_bandwidth: bytes/s}\n"
        "targets:\n  a100: {matches: ['8'], values: {dram_bandwidth: 1.555e12}}\n"
        "  h100: {matches: ['9'], values: {dram_bandwidth: 3.35e12}}\n"
        "  sm86: {matches: ['8.6'], values: {dram_bandwidth: 9.36e11}}\n")
    gpu = ProfileKind(name="gpu", title="GPU", formats="", package="none", folder=tmp_path)
    assert for_profile(gpu, {"compute_capability": 8.0}).name == "a100"
    assert for_profile(gpu, {"compute_capability": 8.6}).name == "sm86"
    assert for_profile(gpu, {"compute_capability": "9"}).chosen_by == "compute_capability 9"
    assert for_profile(gpu, {"compute_capability": 7.5}) is None


@pytest.mark.parametrize("how", ["regex", "equal"])
def test_an_unknown_match_mode_is_refused_by_the_kinds_check_too(tmp_path, how):
    """`how: equal` passed kinds.check() and was refused only at run time (review 4, §3): the table's shape is
    checked wherever it is read, the check included."""
    from advisor.kinds.base import ProfileKind
    from advisor.kinds.check import check_data

    (tmp_path / "hardware.yaml").write_text(f"match: {{field: device, how: {how}}}\nunits: {{}}\ntargets: {{}}\n")
    gpu = ProfileKind(name="gpu", title="GPU", formats="", package="none", folder=tmp_path)
    expected = rf"profile kind 'gpu' \(.*hardware.yaml\): match.how: '{how}' is not one of prefix, equals"
    with pytest.raises(AdvisorError, match=expected):
        for_profile(gpu, {"device": "x"})
    with pytest.raises(AdvisorError, match=expected):
        check_data(gpu)
