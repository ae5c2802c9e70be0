import pytest

from advisor.core.errors import AdvisorError
from advisor.profilers.neuron.adapters import load_profiles

HUMANISED = """\
Group     Metric                              Value
time      total_time                          53.78 ms
time      total_active_time_percent           91.2 %
compute   tensor_engine_active_time_percent   13.26 %
compute   tensor_engine_active_time           7.131 ms
compute   vector_engine_instruction_count     403,039
compute   hardware_flops                      654.344 GFLOPS
compute   transpose_flops                     0 FLOPS
memory    hbm_read_bytes                      4.334 GiB
memory    hbm_write_bytes                     340.347 KiB
memory    mm_arithmetic_intensity             140.582
dma       dma_transfer_time                   412.5 us
system    instance_type                       inf2.xlarge
system    runtime_version                     2.31.24 (0b044)
"""

RAW = """\
nc_idx      1
nd_idx      2
total_time  0.017
hbm_read_bytes  1048576
tensor_engine_active_time_percent  0.1047
instance_type  trn1.2xlarge
"""


def test_humanised_units_become_machine_units(write):
    [p] = load_profiles(write("s.txt", HUMANISED))
    assert p.source.format == "summary-text"
    assert p.source.shape == "humanised layout with group column"
    assert p.values["total_time"] == pytest.approx(0.05378)
    assert p.values["tensor_engine_active_time_percent"] == pytest.approx(0.1326)  # % -> fraction
    assert p.values["tensor_engine_active_time"] == pytest.approx(7.131e-3)
    assert p.values["hbm_read_bytes"] == pytest.approx(4.334 * 2**30)  # binary GiB
    assert p.values["hbm_write_bytes"] == pytest.approx(340.347 * 1024)
    assert p.values["hardware_flops"] == pytest.approx(654.344e9)
    assert p.values["transpose_flops"] == 0
    assert p.values["vector_engine_instruction_count"] == 403039
    assert p.values["dma_transfer_time"] == pytest.approx(412.5e-6)
    assert p.values["mm_arithmetic_intensity"] == pytest.approx(140.582)
    assert p.info["instance_type"] == "inf2.xlarge"
    assert p.info["runtime_version"] == "2.31.24 (0b044)"


def test_humanised_without_group_column_or_header(write):
    text = "\n".join(line.split(None, 1)[1] for line in HUMANISED.splitlines()[1:])
    [p] = load_profiles(write("s.txt", text))
    assert p.source.shape == "humanised layout"
    assert p.values["total_time"] == pytest.approx(0.05378)
    assert p.values["tensor_engine_active_time_percent"] == pytest.approx(0.1326)


def test_raw_layout_is_machine_units(write):
    [p] = load_profiles(write("s.txt", RAW))
    assert p.source.shape == "raw layout"
    assert p.values["total_time"] == 0.017
    assert p.values["tensor_engine_active_time_percent"] == 0.1047  # raw layout prints the fraction
    assert p.values["nc_idx"] == 1


def test_grep_output_of_three_lines(write):
    [p] = load_profiles(write("s.txt", "nc_idx      1\nnd_idx      2\ntotal_time  0.017\n"))
    assert p.values["total_time"] == 0.017


def test_prose_is_not_a_profile(write):
    with pytest.raises(AdvisorError, match="unknown format"):
        load_profiles(write("notes.txt", "This is a note about the kernel.\nIt is slow.\n"))


def test_unavailable_markers(write):
    [p] = load_profiles(write("s.txt", "total_time  0.5\nmfu_estimated_percent  N/A\nhbm_read_bytes -1\n"))
    assert p.values["mfu_estimated_percent"] is None
    assert p.values["hbm_read_bytes"] is None


def test_text_without_one_usable_number_is_not_a_profile(write):
    with pytest.raises(AdvisorError) as info:
        load_profiles(write("s.txt", "total_time  fast\nhbm_read_bytes  N/A\ninstance_type  trn1.2xlarge\n"))
    assert info.value.problem == "no usable metric (3 fields, none numeric)"
