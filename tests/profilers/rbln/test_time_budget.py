"""Issue 23, the RBLN pack's time budget: the bounds of rules/rbln/metrics.yaml worked out by hand on small
traces, the rules they cap, the claims findings share, and the hot layer that claims no saving. Times in the
traces are ns; bounds and estimates are shares of total_time (fractions 0..1)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from advisor import kinds
from advisor.api import analyze_profile
from advisor.core.model import Profile, SourceInfo
from advisor.engine.budget import bound_values, claimed_together
from advisor.packs.load import load_packs

_spec = importlib.util.spec_from_file_location("rbln_traces", Path(__file__).with_name("rbln_traces.py"))
rbln_traces = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(rbln_traces)
S, make_trace = rbln_traces.S, rbln_traces.make_trace

NS = 1e-9
RULESET = load_packs(kind=kinds.get("rbln").name)


def analysis_of(slices, total_ns):
    profile = Profile(SourceInfo("test", "perfetto-pb", "test"), {"total_time": total_ns * NS}, {},
                      trace=make_trace(slices), kind="rbln")
    return analyze_profile(profile, RULESET)


def finding(analysis, name):
    return next(f for f in analysis.findings if f.name == name)


def starved_trace():
    """Four sequences, 60 ns apart: Task DMA 30 ns, then the Neural Engine 20 ns on the same layer. Device
    span 230 ns, busy 200 ns; Task DMA 120 ns, Neural Engine 80 ns; total_time 240 ns."""
    slices = []
    for seq in range(4):
        t = 60 * seq
        slices += [S("task_dma", t, 30, f"{seq}_fc_0", bytes=1 << 20), S("neural_engine", t + 30, 20, f"{seq}_fc_1")]
    return analysis_of(slices, 240)


def test_the_bounds_of_a_starved_trace_worked_out_by_hand():
    values = bound_values(starved_trace().bounds)
    assert values["host_side_time"] == pytest.approx(40 / 240)  # 1 - 200 ns busy / 240 ns
    assert values["pipeline_floor"] == pytest.approx(110 / 240)  # 230 ns span - 120 ns of Task DMA
    assert values["neural_engine_fix"] == pytest.approx(80 / 240)  # the Neural Engine's 80 ns (room: 110 ns)
    assert values["dma_fix"] == pytest.approx(120 / 240)  # DMA's 120 ns (room above the NE's 80 ns: 150 ns)
    assert values["transfer_wait"] == pytest.approx(120 / 240)  # the NE idles the 4 × 30 ns of Task DMA
    assert values["sequence_jitter"] == pytest.approx(0.0)  # every sequence 50 ns
    # no External HDMA, communication, second device, chiplet or other rank: those bounds are unavailable, not 0
    for name in ("external_io", "comm_time", "device_balance", "chiplet_balance", "rank_excess"):
        assert values[name] is None, name


def test_overlap_and_byte_fixes_are_capped_by_different_floors_and_claim_the_same_wait():
    """ne-starved-by-transfers hides the same transfers (perfect pipeline: 110 ns of 240); dma-bound-layers
    also moves fewer bytes, so the busiest unit does not bound it, only DMA's own time (120 ns). Both shorten
    the Neural Engine's wait on transfers: counted once together, 50 %, not 95.8 %."""
    analysis = starved_trace()
    starved, layers = finding(analysis, "ne-starved-by-transfers"), finding(analysis, "dma-bound-layers")
    assert starved.estimated_speedup == pytest.approx(110 / 240) and starved.bound == "pipeline_floor"
    assert layers.estimated_speedup == pytest.approx(120 / 240) and layers.capped_by == ("dma_fix",)
    assert starved.claim == layers.claim == "ne-waits-on-transfers"
    assert claimed_together(analysis.findings, bound_values(analysis.bounds)) == pytest.approx(120 / 240)


def test_dma_bound_layers_explain_the_neural_engine_idle_under_neural_dma():
    """Per 100 ns: fc's Neural DMA 45 ns, then its Neural Engine command 30 ns (DMA 1.5× compute), then conv
    25 ns on the Neural Engine. The Neural Engine idles 45 % of the span under Neural DMA alone: the layers
    are the root cause, the idle time their symptom, and the two claim the same 45 % once."""
    slices = []
    for seq in range(4):
        t = 100 * seq
        slices += [S("neural_dma", t, 45, f"{seq}_fc_0", bytes=65536), S("neural_engine", t + 45, 30, f"{seq}_fc_1"),
                   S("neural_engine", t + 75, 25, f"{seq}_conv_0")]
    analysis = analysis_of(slices, 400)
    order = [f.name for f in analysis.findings]
    idle, layers = finding(analysis, "ne-idle-under-neural-dma"), finding(analysis, "dma-bound-layers")
    assert layers.root_cause and not idle.root_cause
    assert order.index("dma-bound-layers") < order.index("ne-idle-under-neural-dma")
    assert "ne-idle-under-neural-dma" in layers.explains
    # 180 ns of NE idle under Neural DMA; perfect pipeline 400 - 220 ns of NE = 180 ns: all of it recoverable
    assert idle.estimated_speedup == pytest.approx(0.45) and layers.estimated_speedup == pytest.approx(0.45)
    assert claimed_together(analysis.findings, bound_values(analysis.bounds)) == pytest.approx(0.45)


def test_chiplet_imbalance_claims_the_straggler_chiplets_excess_over_the_mean():
    """Chiplet 0 busy 80 ns (two 40 ns commands), chiplet 1 busy 50 ns, span 100 ns: balanced, chiplet 0 would
    be busy the 65 ns mean, 15 % of the run, not (1 - 1/1.23) of the whole span (18.75 %)."""
    slices = [S("neural_engine", 0, 40, "0_a_0", chiplet="Chiplet 0"), S("neural_engine", 60, 40, "0_b_0",
                                                                          chiplet="Chiplet 0"),
              S("neural_engine", 0, 50, "0_c_0", chiplet="Chiplet 1")]
    analysis = analysis_of(slices, 100)
    assert analysis.metrics["chiplet_imbalance"].value == pytest.approx(80 / 65)
    imbalance = finding(analysis, "chiplet-imbalance")
    assert imbalance.estimated_speedup == pytest.approx(0.15) and imbalance.bound == "chiplet_balance"


def test_a_hot_layer_points_where_to_look_and_claims_no_saving():
    """Deleting a layer is not a fix: the hot layer is context (info, never a root cause) with no estimate."""
    slices = [S("neural_engine", 0, 80, "0_lm_head_0"), S("neural_engine", 80, 20, "0_norm_0")]
    hot = finding(analysis_of(slices, 100), "hot-layer")
    assert hot.estimated_speedup is None and hot.severity == "info" and not hot.root_cause
