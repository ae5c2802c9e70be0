"""Issue 26: the raw appendix of an Nsight Compute report lists the fields advisor's rules and the report's sections
used, and points to the analysis JSON, which keeps every field; ncu's near-identical could-not-evaluate results
are one row with their count."""

from __future__ import annotations

import json
import shlex

import pytest
from tests_support import ROOT, SAMPLES

from advisor.cli import main

SEED = SAMPLES / "ncu_seed004" / "details.csv"
T4_REPORT = ROOT / "tests" / "fixtures" / "ncu-examples" / "ncu_rep_T4_matrix_add2d_uncoalesced.ncu-rep"


def _appendix(markdown: str) -> tuple[str, dict]:
    """(the appendix's first paragraph, its fields)."""
    raw = markdown.split("## Raw profile data\n\n", 1)[1]
    intro, block = raw.split("\n\n```json\n", 1)
    return intro, json.loads(block.split("\n```", 1)[0])


@pytest.fixture(scope="module")
def seed_outputs(tmp_path_factory):
    out = tmp_path_factory.mktemp("seed")
    for name in ("report.md", "report.html", "analysis.json"):
        assert main(["report", str(SEED), "-o", str(out / name)]) == 0
    return out


def test_appendix_lists_the_fields_used(seed_outputs):
    """Seed 004's details CSV: 86 fields (ncu's own uncoalesced-access estimate, from a rule result, and the
    busiest pipe's name among them), 61 of them used. A fired rule's input (registers_per_thread), a declared input
    only a rule that passed read (active_threads_per_warp: thread-divergence), a field only a section shows
    (mem_busy_percent, the memory table) and the kernel's identity stay; fields neither the packs nor the sections
    read (executed_instructions, ncu's PM Sampling rows) leave the appendix."""
    _, fields = _appendix((seed_outputs / "report.md").read_text())
    assert len(fields) == 61
    for kept in ("registers_per_thread", "active_threads_per_warp", "mem_busy_percent", "total_time",
                 "theoretical_occupancy_percent", "kernel_name", "compute_capability"):
        assert kept in fields, kept
    for left_out in ("executed_instructions", "branch_instructions", "sm_busy_percent", "PM Sampling: Dropped Samples",
                     "Source Counters: Branch Instructions Ratio", "warp_cycles_per_executed_instruction"):
        assert left_out not in fields, left_out
    assert fields["registers_per_thread"] == 128


def test_appendix_points_to_the_json_which_keeps_every_field(seed_outputs):
    intro, _ = _appendix((seed_outputs / "report.md").read_text())
    assert intro.startswith("The 61 of the profile's 86 fields that advisor's rules and this report's sections read")
    assert intro.endswith(f"All of them are in the analysis JSON: `advisor report {shlex.quote(str(SEED))} -o "
                          "analysis.json`.")
    saved = json.loads((seed_outputs / "analysis.json").read_text())
    reported = {n for n, m in saved["metrics"].items() if m["source"] == "reported"}
    assert len(reported) + len(saved["source"]["info"]) == 86  # 84 exported, ncu's estimate, busiest pipe
    assert {"executed_instructions", "PM Sampling: Dropped Samples", "registers_per_thread"} <= reported
    assert saved["metrics"]["executed_instructions"]["value"] == 73267984


def test_html_appendix_is_the_same_list(seed_outputs):
    html = (seed_outputs / "report.html").read_text()
    section = html.split('<section id="raw-used">', 1)[1].split("</section>", 1)[0]
    assert "<p>The 61 of the profile's 86 fields" in section
    assert f"<code>advisor report {shlex.quote(str(SEED))} -o analysis.json</code>" in section
    assert "&#34;active_threads_per_warp&#34;: 32," in section
    assert "executed_instructions" not in section


# ------------------------------------------------------------------ ncu results it could not evaluate, grouped
_HEADER = ('"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size",'
           '"Device","CC","Section Name","Metric Name","Metric Unit","Metric Value","Rule Name","Rule Type",'
           '"Rule Description","Estimated Speedup Type","Estimated Speedup"')
_ROWS = [("Command line profiler metrics", "gpu__time_duration.sum", "us", "16.4"),
         ("GPU Speed Of Light Throughput", "Memory Throughput", "%", "nan"),
         ("GPU Speed Of Light Throughput", "Compute (SM) Throughput", "%", "nan"),
         ("Launch Statistics", "Registers Per Thread", "", "40")]
_RULES = [("SpeedOfLight", "SOLBottleneck"), ("Occupancy", "TheoreticalOccupancy"), ("Occupancy", "AchievedOccupancy"),
          ("SchedulerStats", "IssueSlotUtilization"), ("WarpStateStats", "CPIStall"),
          ("MemoryWorkloadAnalysis", "MemoryCacheAccessPattern"), ("LaunchStats", "LaunchConfiguration")]


def _quote(fields) -> str:
    return ",".join(f'"{f}"' for f in fields)


@pytest.fixture
def launch_with_errors(tmp_path):
    """A launch ncu timed (16.4 µs) but could not measure otherwise: NaN throughputs and 35 ERR rule results,
    33 "Rule <id> returned an error: metric is NaN" and 2 naming the metric each missed."""
    identity = ("0", "9", "python3", "127.0.0.1", "flash_fwd_kernel", "1", "7", "(128, 1, 1)", "(132, 1, 1)", "0",
                "9.0")
    lines = [_HEADER] + [_quote((*identity, *row)) + "," for row in _ROWS]
    for i in range(33):
        section, rule = _RULES[i % len(_RULES)]
        lines.append(_quote((*identity, section, "", "", "", rule, "ERR", f"Rule {rule} returned an error: metric "
                             "is NaN", "", "")))
    for metric in ("sm__throughput.avg.pct_of_peak_sustained_elapsed", "dram__cycles_active.avg"):
        lines.append(_quote((*identity, "SpeedOfLight", "", "", "", "SOLFPRoofline", "WRN",
                             f"The optional metric {metric} could not be found.", "", "")))
    path = tmp_path / "errors.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


def _verdict_rows(markdown: str) -> list[str]:
    table = markdown.split("## Nsight Compute's own verdicts beside advisor's", 1)[1].split("\n## ", 1)[0]
    return [line for line in table.splitlines() if line.startswith("| ") and "could not evaluate" in line]


def test_repeated_error_results_are_one_row_with_their_count(launch_with_errors, tmp_path):
    """33 ERR results saying the same of 7 rules are one row naming the rules; the 2 WRN results that differ in the
    metric stay two rows (a group starts at three); the summary still counts all 35."""
    out = tmp_path / "report.md"
    assert main(["report", str(launch_with_errors), "-o", str(out)]) == 0
    text = out.read_text()
    rows = _verdict_rows(text)
    assert len(rows) == 3
    assert rows[0].startswith("| ERR × 33: `SOLBottleneck`, `TheoreticalOccupancy`, `AchievedOccupancy`, "
                              "`IssueSlotUtilization`, `CPIStall`, `MemoryCacheAccessPattern` and 1 more: "
                              "Rule … returned an error: metric is NaN | — | none | ncu could not evaluate | "
                              "Nsight Compute reported it could not evaluate these rules;")
    assert rows[1].startswith("| WRN `SOLFPRoofline`: The optional metric sm\\_\\_throughput")
    assert "In all: 35 ncu could not evaluate" in text


def test_a_group_differing_in_the_metric_names_them(launch_with_errors, tmp_path):
    """Three WRN results that differ only in the metric named: one row, the metrics listed in its note."""
    identity = launch_with_errors.read_text().splitlines()[1].split('","')[:11]
    extra = _quote((*(f.strip('"') for f in identity), "SpeedOfLight", "", "", "", "SOLFPRoofline", "WRN",
                    "The optional metric lts__t_sectors.sum could not be found.", "", ""))
    launch_with_errors.write_text(launch_with_errors.read_text() + extra + "\n")
    out = tmp_path / "report.md"
    assert main(["report", str(launch_with_errors), "-o", str(out)]) == 0
    rows = _verdict_rows(out.read_text())
    assert len(rows) == 2
    assert rows[1].startswith("| WRN × 3: `SOLFPRoofline`: The optional metric … could not be found. |")
    assert rows[1].endswith("The metrics ncu named: `sm__throughput.avg.pct_of_peak_sustained_elapsed`, "
                            "`dram__cycles_active.avg`, `lts__t_sectors.sum`. |")


# ------------------------------------------------------------------ the real .ncu-rep (1,131 metrics)
def test_real_report_appendix_and_grouped_notes(tmp_path):
    """The T4 report: 1,106 metrics and 26 text fields read; about a tenth are used. ncu's section metadata
    (`group:…`, `breakdown:…` text fields) and metrics no rule or section reads leave the appendix; the 40 notes on
    units advisor does not know are 4 bullets, each with its count."""
    pytest.importorskip("ncu_report")
    out = tmp_path / "report.md"
    assert main(["report", str(T4_REPORT), "-o", str(out)]) == 0
    text = out.read_text()
    intro, fields = _appendix(text)
    assert intro.startswith(f"The {len(fields)} of the profile's 1,132 fields")
    assert 100 <= len(fields) <= 140
    assert "kernel_name" in fields and "dram_throughput_percent" in fields
    assert not [f for f in fields if f.startswith(("group:", "breakdown:", "lts__t_sectors"))]
    notes = text.split("## Data notes\n\n", 1)[1].split("\n\n## ", 1)[0].splitlines()
    assert "- 16 fields (`lts__t_sectors.avg.peak_sustained`, `lts__t_sectors.avg.per_cycle_elapsed`, " \
           "`lts__t_sectors_data_ecc.avg.peak_sustained`, `lts__t_sectors_data_ecc.avg.per_cycle_elapsed` and 12 " \
           "more): unit 'sector/cycle' is not one advisor knows; the value is kept as printed" in notes
    assert len(notes) == 5  # one note on a text value, the four groups


def test_a_saved_analysis_renders_the_same_appendix(seed_outputs, tmp_path):
    """Re-rendered from the analysis JSON (which keeps every field and the packs' descriptions), the appendix is the
    same list."""
    again = tmp_path / "again.md"
    assert main(["report", str(seed_outputs / "analysis.json"), "-o", str(again)]) == 0
    assert _appendix(again.read_text()) == _appendix((seed_outputs / "report.md").read_text())
