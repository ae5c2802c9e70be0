import pytest

from advisor.core.errors import AdvisorError
from advisor.kinds.base import LoadOptions
from advisor.profilers.ncu.adapters import details_csv, load, raw_csv, text_output
from advisor.profilers.ncu.adapters.launches import entry_name, to_profile

# `ncu --csv --page raw` of two launches: the 11 identity columns, metric names sorted, the units
# row under the header (identity cells empty), thousands separators, `n/a`, a text metric, and
# ==PROF== lines and application output around the CSV block.
RAW = """\
==PROF== Connected to process 108 (/work/two_kernels)
==PROF== Profiling "saxpy" - 0: 0%....50%....100% - 9 passes
==PROF== Profiling "scale" - 1: 0%....50%....100% - 9 passes
two_kernels: ok
==PROF== Disconnected from process 108
"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC",\
"device__attribute_display_name","dram__bytes_read.sum","gpu__time_duration.sum","launch__func_cache_config",\
"launch__grid_size","launch__registers_per_thread","sm__throughput.avg.pct_of_peak_sustained_elapsed",\
"smsp__sass_thread_inst_executed_op_hadd_pred_on.sum"
"","","","","","","","","","","","","Mbyte","us","","","register/thread","%","inst"
"0","108","two_kernels","127.0.0.1","saxpy(int, float, float *, float *)","1","7","(256, 1, 1)","(4096, 1, 1)",\
"0","8.9","NVIDIA GeForce RTX 4090","1,073.74","12.50","CachePreferNone","4,096","32","61.35","n/a"
"1","108","two_kernels","127.0.0.1","scale(int, float *)","1","7","(128, 1, 1)","(1, 1, 1)",\
"0","8.9","NVIDIA GeForce RTX 4090","0.52","3.20","CachePreferNone","1","16","0.41","0"
==PROF== Report: /tmp/two.ncu-rep
"""

# `--print-units base`: base units, no separators.
RAW_BASE = """\
"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC",\
"gpu__time_duration.sum","launch__shared_mem_config_size","sm__warps_active.avg.pct_of_peak_sustained_active"
"","","","","","","","","","","","ns","byte","%"
"0","9","app","h","k()","1","7","(32, 1, 1)","(1, 1, 1)","0","9.0","3995313115.40","233472","12.5"
"""


def _profiles(text: str):
    launches = raw_csv.parse(text, "raw.csv")
    names = [entry_name(launch) for launch in launches]
    return launches, [to_profile(launch, "raw.csv", raw_csv.NAME, "test", names) for launch in launches]


def test_raw_page_is_recognised_and_not_taken_for_details_or_text():
    assert raw_csv.sniff(RAW)
    assert not details_csv.sniff(RAW)
    assert not text_output.sniff(RAW)


def test_two_launches_with_units_row_separators_and_na():
    launches, (saxpy, scale) = _profiles(RAW)
    assert [launch.id for launch in launches] == ["0", "1"]
    first = launches[0]
    assert first.kernel == "saxpy(int, float, float *, float *)"
    assert first.identity["grid_dims"] == "(4096, 1, 1)" and first.identity["compute_capability"] == "8.9"
    assert first.identity["process_name"] == "two_kernels"
    assert all(row.section == "" for row in first.rows)
    assert len(first.rows) == 8  # one per metric column; identity columns are not rows
    assert first.rules == []  # the raw page has no rule results
    assert {row.name: row.unit for row in first.rows}["gpu__time_duration.sum"] == "us"

    assert saxpy.values["dram_read_bytes"] == pytest.approx(1073.74e6)  # "1,073.74" Mbyte -> bytes
    assert saxpy.values["total_time"] == pytest.approx(12.5e-6)  # us -> s
    assert saxpy.values["grid_size"] == 4096  # "4,096" blocks
    assert saxpy.values["registers_per_thread"] == 32
    assert saxpy.values["compute_throughput_percent"] == pytest.approx(0.6135)  # % -> fraction
    assert saxpy.values["fp16_add_thread_instructions"] is None  # n/a: unavailable, never 0
    assert saxpy.info["device_name"] == "NVIDIA GeForce RTX 4090"
    assert saxpy.info["function_cache_config"] == "CachePreferNone"
    assert saxpy.source.entry == "0 saxpy"

    assert scale.values["total_time"] == pytest.approx(3.2e-6)
    assert scale.values["fp16_add_thread_instructions"] == 0
    assert scale.values["grid_size"] == 1


def test_base_units_without_separators():
    _, [p] = _profiles(RAW_BASE)
    assert p.values["total_time"] == pytest.approx(3.9953131154)  # 3,995,313,115.40 ns -> s
    assert p.values["smem_config_size"] == 233472  # bytes
    assert p.values["achieved_occupancy_percent"] == pytest.approx(0.125)


def test_without_units_row_values_keep_their_names_units():
    text = "\n".join(line for line in RAW_BASE.splitlines() if not line.startswith('"",'))
    [launch] = raw_csv.parse(text, "raw.csv")
    assert [row.unit for row in launch.rows] == ["", "", ""]
    assert launch.rows[0].value == "3995313115.40"


def test_through_the_kind_loader(write):
    profiles = load(write("raw.csv", RAW), LoadOptions())
    assert [p.source.format for p in profiles] == ["ncu-csv-raw", "ncu-csv-raw"]
    assert profiles[0].source.shape == "2 kernel launches"
    assert profiles[1].values["total_time"] == pytest.approx(3.2e-6)


def test_details_header_is_not_raw():
    details = '"ID","Kernel Name","Section Name","Metric Name","Metric Unit","Metric Value"\n'
    assert not raw_csv.sniff(details)
    assert not raw_csv.sniff('"ID","Kernel Name","Context"\n"0","k()","1"\n')  # no metric-name column
    with pytest.raises(AdvisorError, match="no ncu raw CSV header"):
        raw_csv.parse(details, "d.csv")
