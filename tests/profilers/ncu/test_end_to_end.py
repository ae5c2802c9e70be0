"""The ncu kind end to end on the bundled samples: the seed 004 kernel's findings beside Nsight
Compute's, a run of many kernels ranked with Amdahl across them, --kernel, before/after matched by
kernel, the same analysis from the CSV and the text export, and failed profiles refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from advisor.api import AnalyzeOptions, analyze, compare_inputs
from advisor.cli import main
from advisor.core.errors import AdvisorError
from advisor.kinds.base import LoadOptions
from advisor.profilers.ncu.verdicts import ADVISOR_ONLY, SAME, verdicts

SAMPLES = Path(__file__).parents[3] / "samples"
SEED = SAMPLES / "ncu_seed004" / "details.csv"
RUN = SAMPLES / "ncu_multi_kernel" / "details.csv"
PAIR = SAMPLES / "ncu_before_after"


def finding(analysis, name):
    return next(f for f in analysis.findings if f.name == name)


def test_seed_004_gives_the_occupancy_finding_with_ncus_local_speedup_and_the_compute_verdict():
    analysis = analyze(SEED)
    occupancy = finding(analysis, "occupancy-limited-by-registers")
    assert occupancy.estimated_speedup == pytest.approx(2 / 3, abs=1e-4)  # 1 − 4/12 warps per scheduler
    assert occupancy.speedup_scope == "local"  # issue slots are busy (0.74), so ncu's estimate stays local
    assert "compute-bound" in {f.name for f in analysis.findings}
    assert "memory-bound" not in {f.name for f in analysis.findings}
    assert analysis.value("theoretical_occupancy_percent") == pytest.approx(1 / 3, abs=1e-4)
    assert analysis.value("waves_per_sm") == pytest.approx(85.84, abs=0.01)


def test_seed_004_verdicts_pair_every_ncu_result_and_agree_on_the_occupancy_estimate():
    analysis = analyze(SEED)
    rows = verdicts(analysis)
    assert {r.vendor for r in rows if r.vendor} == set(analysis.vendor_findings)  # none dropped
    occupancy = next(r for r in rows if r.vendor and r.vendor.rule == "TheoreticalOccupancy")
    assert occupancy.vendor.speedup == pytest.approx(0.6667) and occupancy.vendor.speedup_scope == "local"
    assert [f.name for f in occupancy.ours] == ["occupancy-limited-by-registers"]
    assert occupancy.status in (SAME, "advisor adds a root cause")
    assert "Estimates agree: ncu 66.67 % local, advisor 66.67 % local" in occupancy.note
    sol = next(r for r in rows if r.vendor and r.vendor.rule == "SOLBottleneck")
    assert [f.name for f in sol.ours] == ["compute-bound"]
    shown = {f.name for r in rows for f in r.ours}
    assert shown >= {f.name for f in analysis.findings}  # every advisor finding has a row
    assert all(r.vendor is None for r in rows if r.status == ADVISOR_ONLY)


def test_the_report_shows_both_verdicts(tmp_path):
    out = tmp_path / "seed.md"
    assert main(["report", str(SEED), "-o", str(out)]) == 0
    text = out.read_text()
    assert "TheoreticalOccupancy" in text and "66.67 % local" in text
    assert "occupancy-limited-by-registers" in text


def test_a_run_of_many_kernels_is_ranked_with_shares_and_amdahl(tmp_path):
    analysis = analyze(RUN)
    times = [e.total_time for e in analysis.entries]
    assert len(analysis.entries) == 7 and sum(times) == pytest.approx(1458.5e-6, rel=1e-3)
    analysed = next(e for e in analysis.entries if e.analysed)
    assert analysed.total_time == max(times)  # the slowest launch is analysed in full
    out = tmp_path / "run.md"
    assert main(["report", str(RUN), "-o", str(out)]) == 0
    text = out.read_text()
    assert "Share of run" in text and "Amdahl across the kernels" in text
    assert "`--kernel` analyses another" in text


def test_kernel_option_picks_by_id_or_name():
    by_id = analyze(RUN, AnalyzeOptions(load=LoadOptions(kind_options={"kernel": "5"})))
    assert by_id.source.entry == "5 ampere_sgemm_128x64_nn"
    by_name = analyze(RUN, AnalyzeOptions(load=LoadOptions(kind_options={"kernel": "ampere_sgemm_128x64_nn"})))
    assert by_name.source.entry == by_id.source.entry
    assert "tensor-cores-unused" in {f.name for f in by_name.findings}
    with pytest.raises(AdvisorError, match="--kernel nosuch: no such entry"):
        analyze(RUN, AnalyzeOptions(load=LoadOptions(kind_options={"kernel": "nosuch"})))


def test_csv_and_text_exports_of_one_run_give_the_same_analysis():
    csv, text = analyze(RUN), analyze(RUN.with_name("output.txt"))
    assert [f.name for f in csv.findings] == [f.name for f in text.findings]
    assert [e.name for e in csv.entries] == [e.name for e in text.entries]
    for name in ("total_time", "theoretical_occupancy_percent", "compute_throughput_percent", "waves_per_sm"):
        assert text.value(name) == pytest.approx(csv.value(name), rel=1e-3)


def test_before_after_matches_the_kernel_and_reports_fixed_findings():
    comparison = compare_inputs([PAIR / "before.csv", PAIR / "after.csv"], ["before", "after"])
    assert comparison.before.source.entry.split(" ", 1)[1] == comparison.after.source.entry.split(" ", 1)[1]
    assert comparison.speedup == pytest.approx(1.6, rel=0.01)
    fixed = {f.name for f in comparison.findings if f.status == "fixed"}
    assert "uncoalesced-global-access" in fixed
    matched = [e for e in comparison.entries if e.before and e.after]
    assert len(matched) == 2 and all(e.speedup for e in matched)


@pytest.mark.parametrize("content, problem", [
    ("==PROF== Connected to process 1\n==ERROR== The application returned an error code (1).\n",
     "ncu reported an error and no results: The application returned an error code (1)."),
    ('"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size",'
     '"Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"\n'
     '"0","1","app","h","k(int)","1","7","(32, 1, 1)","(1, 1, 1)","0","8.0","GPU Speed Of Light Throughput",'
     '"Duration","","n/a"\n'
     '"0","1","app","h","k(int)","1","7","(32, 1, 1)","(1, 1, 1)","0","8.0","GPU Speed Of Light Throughput",'
     '"Compute (SM) Throughput","%","nan"\n',
     "no usable metric (2 fields, none numeric)"),
])
def test_a_failed_profile_is_one_error_line(tmp_path, capsys, content, problem):
    path = tmp_path / "failed.csv"
    path.write_text(content)
    assert main(["report", str(path), "-o", str(tmp_path / "x.md")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"advisor: error: {path}: ") and problem in err and "Traceback" not in err
    assert not (tmp_path / "x.md").exists()
