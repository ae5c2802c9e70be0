"""Compare, CI gates and fleets on PyTorch-profiler traces: two traces and two rank folders, per-step time first,
kernel-class and top-kernel deltas, fixed and new findings, comparability warnings (device model, world size,
step count), `--fail-on`, `--fail-on-regression`, `--fail-on-new`, and `advisor fleet` over torch traces."""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path

import pandas as pd
import pytest
from tests_support import SAMPLES

from advisor.api import analyze
from advisor.cli import main
from advisor.comparing.diff import compare
from advisor.fleet.store import Store
from advisor.report.render import render_comparison

BEFORE = SAMPLES / "torch_before_after" / "before.pt.trace.json.gz"
AFTER = SAMPLES / "torch_before_after" / "after.pt.trace.json.gz"
STRAGGLER = SAMPLES / "torch_straggler_ranks"


def _generator():
    spec = importlib.util.spec_from_file_location("make_torch_traces", SAMPLES / "make_torch_traces.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def pair():
    return compare(analyze(BEFORE), analyze(AFTER))


def test_two_traces_per_step_time_first(pair):
    assert pair.warnings == ()  # same device, same five steps, no process group on either side
    assert pair.speedup_of == "step_time_median"  # the headline is per step, not the windows' ratio
    assert pair.speedup == pytest.approx(4.356e-3 / 1.831e-3, rel=1e-3)
    median = pair.metrics["step_time_median"]
    assert median.group == "per step" and median.unit == "s" and median.verdict == "better"
    assert (median.before, median.after) == (pytest.approx(4.356e-3, abs=1e-6), pytest.approx(1.831e-3, abs=1e-6))
    groups = list(dict.fromkeys(m.group for m in sorted(pair.metrics.values(), key=lambda m: m.name)))
    assert "per step" in groups
    text = render_comparison(pair, "md", Path("diff.md")).main.decode()
    assert text.index("*per step*") < text.index("*time*") < text.index("*idle*")  # per-step time leads
    assert ("**after is 2.38× faster per step** than before (median step time 4.356 ms → "
            "1.831 ms; windows 21.83 ms → 9.175 ms)") in text


def test_two_traces_fixed_and_new_findings(pair):
    status = {f.name: f.status for f in pair.findings}
    assert status == {"launch-overhead": "fixed", "host-bound": "fixed", "sync-in-step": "new"}
    assert pair.root_cause_before == ("launch-overhead",) and pair.root_cause_after == ("sync-in-step",)
    host_wait = pair.metrics["idle_host_wait_fraction"]
    assert host_wait.unit == "fraction" and (host_wait.before, host_wait.after) == (
        pytest.approx(0.6284, abs=1e-4), pytest.approx(0.0989, abs=1e-4))
    # counts: the .item() copies block, so they are not launches
    assert pair.metrics["launch_count"].before == 950 and pair.metrics["launch_count"].after == 35


def test_two_traces_kernel_class_and_top_kernel_deltas(pair):
    tables = {b.name: b for b in pair.breakdowns}
    # and the operators (issue 35): tied to kernels, though these generated traces record no shapes
    assert set(tables) == {"kernel_classes", "top_kernels", "idle_breakdown", "operator_families", "top_operators"}
    classes = {r.key: r for r in tables["kernel_classes"].rows}
    assert tables["kernel_classes"].unit == "s"
    assert classes["GEMM"].verdict == "unchanged"  # the same matrix multiplies, compiled or not
    assert (classes["GEMM"].before, classes["GEMM"].after) == (pytest.approx(4.407e-3, abs=1e-6),
                                                               pytest.approx(4.394e-3, abs=1e-6))
    assert classes["Other"].verdict == "only before"  # the eager loss kernels, fused away
    idle = {r.key: r for r in tables["idle_breakdown"].rows}
    assert idle["host wait"].verdict == "better" and idle["host wait"].before == pytest.approx(13.72e-3, abs=1e-5)
    top = {r.key: r for r in tables["top_kernels"].rows}
    assert any(k.startswith("void pytorch_flash::flash_fwd_kernel") and r.verdict == "unchanged"
               for k, r in top.items())


def test_two_rank_folders_match_ranks(tmp_path):
    """The straggler folder against the same job with rank 2's GPU at full clock and rank 3's storage fast."""
    gen = _generator()
    fixed = tmp_path / "fixed"
    fixed.mkdir()
    for name, rank in gen.scn_straggler_ranks(throttle=1.0, starved=150.0).items():
        (fixed / name).write_bytes(gen.kineto(rank, name))
    slow, fast = analyze(STRAGGLER), analyze(fixed)
    c = compare(slow, fast)
    assert c.warnings == ()  # world size 4 on both sides, the same device and six steps
    entries = {e.name: e for e in c.entries}
    assert set(entries) == {"rank 0", "rank 1", "rank 2", "rank 3"}
    assert entries["rank 2"].before == pytest.approx(293.2e-3, abs=0.1e-3)  # s
    assert entries["rank 2"].speedup == pytest.approx(1.265, abs=0.01)
    assert entries["rank 3"].speedup == pytest.approx(1.147, abs=0.01)
    assert entries["rank 0"].speedup == pytest.approx(1.0, abs=0.01)
    assert {f.name: f.status for f in c.findings} == {"straggler-rank": "fixed", "straggler-rank-device": "fixed",
                                                      "device-bound": "fixed"}  # rank 2 computed 91 % of its window
    # the headline compares the analysed ranks: each side's slowest, named by their files (folders have no entry)
    assert (slow.value("rank"), c.speedup) == (2, pytest.approx(slow.value("step_time_median")
                                                                / fast.value("step_time_median")))
    text = render_comparison(c, "md", None).main.decode()
    analysed = f"the analysed profile ({Path(slow.source.path).name} → {Path(fast.source.path).name})."
    assert analysed in text and "( → )" not in text


def test_comparability_warnings_for_world_size_and_step_count():
    c = compare(analyze(STRAGGLER), analyze(SAMPLES / "torch_ddp_imbalance"))
    assert c.warnings[0].startswith("Different amounts of work: step_count 6 → 5 (-16.7 %).")
    assert "Different world sizes: 4 → 2." in c.warnings  # numbers from distributedInfo, shown as counts
    # per step, the two windows still compare: the headline is the median step, not the windows' ratio
    slow, other = analyze(STRAGGLER), analyze(SAMPLES / "torch_ddp_imbalance")
    assert c.speedup == pytest.approx(slow.value("step_time_median") / other.value("step_time_median"))
    headline = render_comparison(c, "md", None).main.decode().split("## Headline")[1].split("\n- ")[1]
    assert " per step** than " in headline and "not like-for-like" not in headline


def test_a_side_without_steps_compares_by_its_window():
    c = compare(analyze(SAMPLES / "torch_a100_cold_start"), analyze(AFTER))  # the cold start has no ProfilerStep
    assert c.speedup_of == "total_time" and c.speedup_title == "Total time"
    assert c.speedup == pytest.approx(c.metrics["total_time"].before / c.metrics["total_time"].after)


def test_comparability_warnings_for_device_model_and_missing_distributed_info():
    c = compare(analyze(SAMPLES / "torch_a100_ddp" / "a100_ddp_rank0_of2.json.gz"),
                analyze(SAMPLES / "torch_host_bound" / "host_bound.pt.trace.json.gz"))
    assert "Different device models: NVIDIA A100-PG509-200 → NVIDIA A100-SXM4-80GB." in c.warnings
    assert "Different world sizes: 2 → unknown." in c.warnings  # a single-GPU run has no distributedInfo
    assert "Different distributed backends: nccl → unknown." in c.warnings


def test_report_fail_on_severity(tmp_path, capsys):
    assert main(["report", str(BEFORE), "-o", str(tmp_path / "r.md"), "--quiet", "--fail-on", "high"]) == 1
    assert "2 finding(s) at or above high: launch-overhead (high), host-bound (high)" in capsys.readouterr().err
    assert main(["report", str(BEFORE), "-o", str(tmp_path / "r.md"), "--quiet", "--fail-on", "critical"]) == 0
    # after: the per-step loss.item() is left, a cause of the host waits as severe as they are
    assert main(["report", str(AFTER), "-o", str(tmp_path / "r.md"), "--quiet", "--fail-on", "high"]) == 1
    assert "1 finding(s) at or above high: sync-in-step (high)" in capsys.readouterr().err


def test_compare_fail_on_regression_and_on_new(tmp_path, capsys):
    out = str(tmp_path / "c.md")
    assert main(["compare", str(BEFORE), str(AFTER), "-o", out, "--quiet", "--fail-on-regression", "5"]) == 0
    assert main(["compare", str(AFTER), str(BEFORE), "-o", out, "--quiet", "--fail-on-regression", "5"]) == 1
    assert ("median step time +137.9 % (after.pt.trace.json → before.pt.trace.json), more than 5 %"
            in capsys.readouterr().err)
    assert main(["compare", str(AFTER), str(BEFORE), "-o", out, "--quiet", "--fail-on-regression", "138"]) == 0
    assert main(["compare", str(BEFORE), str(AFTER), "-o", out, "--quiet", "--fail-on-new", "medium"]) == 1
    assert "sync-in-step (high)" in capsys.readouterr().err
    assert main(["compare", str(BEFORE), str(AFTER), "-o", out, "--quiet", "--fail-on-new", "critical"]) == 0


def test_fleet_over_torch_traces_and_a_rerun(tmp_path, capsys):
    fleet = tmp_path / "traces"
    fleet.mkdir()
    for path in (BEFORE, AFTER, SAMPLES / "torch_host_bound" / "host_bound.pt.trace.json.gz"):
        shutil.copy(path, fleet / path.name)
    shutil.copytree(STRAGGLER, fleet / "ranks", ignore=shutil.ignore_patterns("*.md", "*.yaml"))
    args = ["fleet", str(fleet), "--store", str(tmp_path / "store"), "--workers", "1", "--quiet"]
    assert main([*args, "-o", str(tmp_path / "overview.md")]) == 0
    rows = Store.open(tmp_path / "store").profiles().set_index("name")
    assert list(rows["kind"].unique()) == ["torch"] and len(rows) == 4  # three traces and one folder of ranks
    assert rows.loc["ranks", "total_time"] == pytest.approx(293.2e-3, abs=0.1e-3)  # s: the slowest rank's window
    assert rows.loc["ranks", "root_causes"] == "straggler-rank-device,device-bound"
    assert rows.loc["before.pt.trace.json", "step_time_median"] == pytest.approx(4.356e-3, abs=1e-6)  # s
    # s: the idle launching explains (issue 34 class 7), no longer the launch calls' own 6.671 ms, nor the 59 µs of
    # untraced host work (a stretch of 1 ms or more outside any operator) in it
    assert rows.loc["before.pt.trace.json", "recoverable_time"] == pytest.approx(13.511e-3, abs=1e-6)
    assert rows.loc["after.pt.trace.json", "comm_exposed_fraction"] == 0  # fraction: measured, no collective
    assert not pd.isna(rows.loc["ranks", "device_busy_fraction"])
    overview = (tmp_path / "overview.md").read_text()
    assert "| torch | 4 | 4 | 0 | 356.4 ms |" in overview and "`step_time_median`" in overview
    capsys.readouterr()
    assert main([*args[:-1], "-o", str(tmp_path / "again.md")]) == 0  # a rerun analyses nothing again
    assert "4 profiles found; 0 analysed, 0 failed, 4 already stored" in capsys.readouterr().err
