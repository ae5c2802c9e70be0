from pathlib import Path

import pytest
from tests_support import FIXTURES

from advisor.core.errors import AdvisorError
from advisor.kinds.base import LoadOptions
from advisor.profilers.ncu.adapters import load, text_output
from advisor.profilers.ncu.adapters.launches import entry_name, to_profile

REAL_LOG = (FIXTURES / "ncu-examples"
            / "ncu_text_fused_rmsnorm_T4_cc75.log")


def _profile(launch, entries=("0 x",)):
    return to_profile(launch, "t.log", text_output.NAME, "test", list(entries))


def padded(text: str) -> str:
    """Rule lines padded to 120 columns, as ncu prints them (kept out of the literals for ruff)."""
    return "\n".join(line.ljust(120) if line.startswith(("    OPT", "    INF", "    WRN", "    ERR", " " * 10))
                     else line for line in text.splitlines()) + "\n"


# Two launches of a default `ncu --section SpeedOfLight --section Occupancy --metrics …` run: ==PROF==
# lines and the application's output around, a failed second launch with `(!) nan`, `n/a`, an ERR
# block carrying a traceback, and two rules in one section separated by a dashed line.
TWO_LAUNCHES = padded("""\
==PROF== Connected to process 4242 (/opt/app/bench)
==PROF== Profiling "scale" - 0: 0%....50%....100% - 9 passes
==PROF== Profiling "reduce_sum" - 1: 0%....50%....100% - 9 passes
bench: 2 kernels ok
==PROF== Disconnected from process 4242
[4242] bench@node-7
  scale(int, float, float *) (4096, 1, 1)x(256, 1, 1), Context 1, Stream 13, Device 0, CC 8.6
    Section: GPU Speed Of Light Throughput
    ----------------------- ----------- ------------
    Metric Name             Metric Unit Metric Value
    ----------------------- ----------- ------------
    DRAM Frequency                  Ghz         7.00
    SM Frequency                    Ghz         1.39
    Elapsed Cycles                cycle       17,094
    Memory Throughput                 %        85.61
    DRAM Throughput                   %        85.61
    Duration                         us        12.35
    Compute (SM) Throughput           %        10.20
    ----------------------- ----------- ------------

    INF   This workload is utilizing greater than 80.0% of the available compute or memory performance of the device.
          To further improve performance, work will likely need to be shifted from the most utilized to another unit.
    ----- --------------------------------------------------------------------------------------------------------------
    OPT   Est. Speedup: 12.5%
          Memory is more heavily utilized than Compute: look at the Memory Workload Analysis section.

    Section: Command line profiler metrics
    ---------------------------- --------------- ------------
    Metric Name                      Metric Unit Metric Value
    ---------------------------- --------------- ------------
    dram__bytes_read.sum                   Mbyte        16.78
    flop_count_hp.sum                                     n/a
    launch__registers_per_thread register/thread           16
    ---------------------------- --------------- ------------

[4242] bench@node-7
  reduce_sum<float>(const float *, float *, int) (1, 1, 1)x(1024, 1, 1), Context 1, Stream 13, Device 0, CC 8.6
    Section: GPU Speed Of Light Throughput
    ----------------- ------------- ------------
    Metric Name         Metric Unit Metric Value
    ----------------- ------------- ------------
    Memory Throughput             %      (!) nan
    DRAM Throughput                          n/a
    Duration                usecond         3.10
    SM Frequency      cycle/nsecond         1.41
    ----------------- ------------- ------------

    ERR   Rule Bottleneck returned an error: Traceback (most recent call last):
            File "SpeedOfLight.py", line 84, in apply
          ValueError: math domain error

    Section: Occupancy
    --------------------- ----------- ------------
    Metric Name           Metric Unit Metric Value
    --------------------- ----------- ------------
    Theoretical Occupancy           %          100
    Achieved Occupancy              %         3.12
    --------------------- ----------- ------------

    WRN   Est. Local Speedup: 96.88%
          The difference between calculated theoretical (100.0%) and measured achieved occupancy (3.1%) can be the
          result of warp scheduling overheads or workload imbalances during the kernel execution.

bench: done
==PROF== Report: /tmp/bench.ncu-rep
""")

# `ncu -i x.ncu-rep --print-summary per-kernel`: Minimum/Maximum/Average columns, `Invocations N`.
SUMMARY = padded("""\
[77] train@gpu01
  scale(int, float, float *) (4096, 1, 1)x(256, 1, 1), Device 0, CC 8.0, Invocations 14
    Section: Launch Statistics
    -------------------- --------------- -------- -------- --------
    Metric Name              Metric Unit  Minimum  Maximum  Average
    -------------------- --------------- -------- -------- --------
    Block Size                             256.00   256.00   256.00
    Grid Size                            4,096.00 4,096.00 4,096.00
    Registers Per Thread register/thread    16.00    18.00    16.50
    -------------------- --------------- -------- -------- --------
""")

# Older versions: a timestamp instead of launch dimensions, and `--metrics` tables with no header line.
OLD_METRICS = """\
[901] saxpy@host
  saxpy(int, float, float *, float *), 2021-Apr-21 13:45:01, Context 1, Stream 7
    Section: Command line profiler metrics
    ------------------------------------------------ ----------- ------------
    gpu__time_duration.sum                               usecond         4.16
    sm__throughput.avg.pct_of_peak_sustained_elapsed           %         1.05
    ------------------------------------------------ ----------- ------------
"""

# A section of rules only (no table), and a section holding two tables.
RULES_ONLY = padded("""\
  copy(float *) (8, 1, 1)x(64, 1, 1), Context 1, Stream 7, Device 0, CC 9.0
    Section: Memory Workload Analysis Tables
    OPT   Est. Speedup: 44.3%
          The memory access pattern for global loads might not be optimal.
    ----- --------------------------------------------------------------------------------------------------------------
    OPT   Est. Speedup: 33.25%
          The memory access pattern for global stores might not be optimal.

    Section: Occupancy
    --------------------- ----------- ------------
    Metric Name           Metric Unit Metric Value
    --------------------- ----------- ------------
    Theoretical Occupancy           %           50
    --------------------- ----------- ------------

    ------------------ ----------- ------------
    Metric Name        Metric Unit Metric Value
    ------------------ ----------- ------------
    Achieved Occupancy           %        48.75
    ------------------ ----------- ------------

    INF   Achieved occupancy is close to theoretical.
""")


@pytest.fixture
def real_log() -> Path:
    if not REAL_LOG.exists():
        pytest.skip(f"the real ncu text log is not here: {REAL_LOG.resolve()}")
    return REAL_LOG


def test_real_log_values_in_machine_units(real_log):
    text = real_log.read_text()
    assert text_output.sniff(text)
    [launch] = text_output.parse(text, str(real_log))
    assert launch.id == "0"
    assert launch.kernel == "void fused<float, 256>(const T1 *, const T1 *, const T1 *, T1 *, int, float)"
    assert launch.identity == {"process_name": "native", "host_name": "127.0.0.1", "context": "1", "stream": "7",
                               "device": "0", "compute_capability": "7.5", "grid_dims": "(3, 1, 1)",
                               "block_dims": "(256, 1, 1)"}
    assert len(launch.rows) == 43  # 10 + 15 + 8 + 10 rows in four sections
    p = _profile(launch)
    assert p.values["total_time"] == pytest.approx(5.66e-6)  # 5.66 us -> s
    assert p.units["total_time"] == "s"
    assert p.values["sm_frequency"] == pytest.approx(576.84e6)  # Mhz -> Hz
    assert p.values["dram_frequency"] == pytest.approx(4.88e9)  # Ghz -> Hz
    assert p.values["smem_config_size"] == pytest.approx(32770)  # 32.77 Kbyte, decimal -> bytes
    assert p.units["smem_config_size"] == "bytes"
    assert p.values["achieved_occupancy_percent"] == pytest.approx(0.2037)  # 20.37 % -> fraction
    assert p.values["theoretical_occupancy_percent"] == pytest.approx(1.0)
    assert p.values["elapsed_cycles"] == 3268  # "3,268" cycles
    assert p.values["grid_size"] == 3  # blocks
    assert p.values["block_size"] == 256  # threads
    assert p.values["registers_per_thread"] == 52
    assert p.values["dram_elapsed_cycles_total"] == 221184
    assert p.info["function_cache_config"] == "CachePreferNone"
    assert p.info["kernel_function"] == "fused"
    assert p.info["compute_capability"] == "7.5"


def test_real_log_rule_blocks(real_log):
    [launch] = text_output.parse(real_log.read_text(), str(real_log))
    assert [(r.rule, r.section, r.type) for r in launch.rules] == [
        ("", "GPU Speed Of Light Throughput", "OPT"), ("", "Launch Statistics", "OPT"), ("", "Occupancy", "OPT")]
    small_grid, launch_stats, occupancy = launch.rules
    assert small_grid.speedup is None and small_grid.speedup_scope == ""
    assert small_grid.message == ("This kernel grid is too small to fill the available resources on this device, "
                                  "resulting in only 0.0 full waves across all SMs. Look at Launch Statistics for "
                                  "more details.")
    assert launch_stats.speedup == pytest.approx(0.925)  # "Est. Speedup: 92.5%"
    assert launch_stats.speedup_scope == "global"
    assert launch_stats.message.startswith("The grid for this launch is configured to execute only 3 blocks")
    assert launch_stats.message.endswith("description for more details on launch configurations.")
    assert occupancy.speedup == pytest.approx(0.7963)  # "Est. Local Speedup: 79.63%"
    assert occupancy.speedup_scope == "local"
    assert "  " not in occupancy.message  # the 120-column padding is gone


def test_real_log_through_the_kind_loader(real_log):
    [p] = load(real_log, LoadOptions())
    assert p.source.format == "ncu-text"
    assert p.source.shape == "1 kernel launch"
    assert p.values["total_time"] == pytest.approx(5.66e-6)
    assert len(p.vendor_findings) == 3


def test_two_launches_with_noise_nan_and_several_rules():
    assert text_output.sniff(TWO_LAUNCHES)
    first, second = text_output.parse(TWO_LAUNCHES, "t.log")
    assert [first.id, second.id] == ["0", "1"]
    assert [entry_name(first), entry_name(second)] == ["0 scale", "1 reduce_sum"]
    assert second.identity["grid_dims"] == "(1, 1, 1)" and second.identity["block_dims"] == "(1024, 1, 1)"
    assert first.identity["process_name"] == "bench" and first.identity["host_name"] == "node-7"
    assert first.identity["stream"] == "13" and first.identity["compute_capability"] == "8.6"

    entries = [entry_name(first), entry_name(second)]
    p = _profile(first, entries)
    assert p.values["total_time"] == pytest.approx(12.35e-6)  # s
    assert p.values["sm_frequency"] == pytest.approx(1.39e9)  # Hz
    assert p.values["elapsed_cycles"] == 17094
    assert p.values["memory_throughput_percent"] == pytest.approx(0.8561)
    assert p.values["dram_read_bytes"] == pytest.approx(16.78e6)  # --metrics row, Mbyte -> bytes
    assert p.values["registers_per_thread"] == 16
    assert p.values["fp16_flops"] is None  # n/a: unavailable, never 0
    assert p.source.entry == "0 scale"

    info, opt = first.rules
    assert (info.type, info.section, info.speedup) == ("INF", "GPU Speed Of Light Throughput", None)
    assert info.message.endswith("shifted from the most utilized to another unit.")
    assert (opt.type, opt.speedup, opt.speedup_scope) == ("OPT", pytest.approx(0.125), "global")
    assert opt.message == "Memory is more heavily utilized than Compute: look at the Memory Workload Analysis section."

    q = _profile(second, entries)
    assert q.values["memory_throughput_percent"] is None  # "(!) nan"
    assert q.values["dram_throughput_percent"] is None  # "n/a"
    assert q.values["total_time"] == pytest.approx(3.10e-6)  # usecond -> s
    assert q.values["sm_frequency"] == pytest.approx(1.41e9)  # cycle/nsecond -> Hz
    assert q.values["achieved_occupancy_percent"] == pytest.approx(0.0312)
    error, warning = second.rules
    assert (error.type, error.section) == ("ERR", "GPU Speed Of Light Throughput")
    assert error.message == ('Rule Bottleneck returned an error: Traceback (most recent call last): '
                             'File "SpeedOfLight.py", line 84, in apply ValueError: math domain error')
    assert (warning.type, warning.section, warning.speedup, warning.speedup_scope) == (
        "WRN", "Occupancy", pytest.approx(0.9688), "local")
    assert warning.message.endswith("during the kernel execution.")  # the trailing app output is not part of it


def test_print_summary_reads_the_average_column():
    [launch] = text_output.parse(SUMMARY, "s.log")
    assert launch.identity["invocations"] == "14"
    assert launch.identity["compute_capability"] == "8.0"
    assert "context" not in launch.identity
    p = _profile(launch)
    assert p.values["registers_per_thread"] == pytest.approx(16.5)  # the Average column, not Minimum 16
    assert p.values["grid_size"] == 4096  # blocks
    assert p.info["kernel_function"] == "scale"


def test_older_headerless_metrics_table_and_timestamp_header():
    [launch] = text_output.parse(OLD_METRICS, "o.log")
    assert launch.kernel == "saxpy(int, float, float *, float *)"
    assert launch.identity == {"process_name": "saxpy", "host_name": "host", "context": "1", "stream": "7"}
    p = _profile(launch)
    assert p.values["total_time"] == pytest.approx(4.16e-6)  # s
    assert p.values["compute_throughput_percent"] == pytest.approx(0.0105)


def test_rules_without_a_table_and_two_tables_in_one_section():
    [launch] = text_output.parse(RULES_ONLY, "r.log")
    assert [(r.section, r.type, r.speedup) for r in launch.rules] == [
        ("Memory Workload Analysis Tables", "OPT", pytest.approx(0.443)),
        ("Memory Workload Analysis Tables", "OPT", pytest.approx(0.3325)),
        ("Occupancy", "INF", None)]
    assert launch.rules[1].message == "The memory access pattern for global stores might not be optimal."
    p = _profile(launch)
    assert p.values["theoretical_occupancy_percent"] == pytest.approx(0.5)  # fraction
    assert p.values["achieved_occupancy_percent"] == pytest.approx(0.4875)


def test_no_launch_header_is_one_line_error():
    assert not text_output.sniff("==PROF== Connected to process 1\nhello\n")
    with pytest.raises(AdvisorError, match="no ncu launch header"):
        text_output.parse("    Section: Occupancy\n", "x.log")
