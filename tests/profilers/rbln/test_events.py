"""RBLN event analysis on small hand-built traces (the reader's output shape, no file) whose answers can be
worked out by hand. Times in the traces are ns; metrics are s, bytes, bytes/s, counts and fractions."""

import importlib.util
import math
from pathlib import Path

import numpy as np
import pytest

from advisor.profilers.rbln.events import summarize
from advisor.profilers.rbln.naming import family, parse

_spec = importlib.util.spec_from_file_location("rbln_traces", Path(__file__).with_name("rbln_traces.py"))
rbln_traces = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(rbln_traces)
S, make_trace = rbln_traces.S, rbln_traces.make_trace

NS = 1e-9


def ns(value):
    return pytest.approx(value * NS)


def run(slices, total_time=None, **kwargs):
    return summarize(make_trace(slices, **kwargs), total_time)


def test_busy_is_a_union_not_a_sum_and_the_category_table_shows_both():
    trace = [S("neural_engine", 0, 10, "0_a_0", track="rbln0 / Neural Engine Clusters 0"),
             S("neural_engine", 5, 10, "0_b_0", track="rbln0 / Neural Engine Clusters 1")]
    summary, m = run(trace)
    assert m["neural_engine_busy"] == ns(15) and m["device_span"] == ns(15) and m["neural_engine_commands"] == 2
    table = summary.breakdown("categories")
    assert [c.unit for c in table.columns] == ["s", "fraction", "count", "s", "ratio", "bytes", "bytes/s"]
    busy, share, commands, total, concurrency, moved, bandwidth = table.rows[0][1]
    assert table.rows[0][0] == "Neural Engine Clusters"
    assert (busy, share, commands, total) == (ns(15), pytest.approx(1.0), 2, ns(20))
    assert concurrency == pytest.approx(20 / 15) and moved is None and bandwidth is None
    engine = summary.engines[0]
    assert (engine.engine, engine.compute, engine.busy) == ("neural_engine", True, ns(15))
    assert set(engine.rows) == {"rbln0 / Neural Engine Clusters 0", "rbln0 / Neural Engine Clusters 1"}


def test_category_busy_is_the_mean_per_device_and_the_busiest_device_is_the_straggler():
    trace = [S("neural_engine", 0, 10, "0_a_0", device="rbln0"), S("neural_engine", 0, 30, "0_a_0", device="rbln1"),
             S("task_dma", 0, 5, "0_a_1", device="rbln1")]
    summary, m = run(trace)
    assert m["neural_engine_busy"] == ns(20) and m["mean_unit_busy"] == ns(20) and m["device_span"] == ns(30)
    # the device (any of its devices) is busy the whole span; the mean device idles 10 ns
    assert m["device_busy"] == ns(30) and m["device_idle_time"] == 0 and m["mean_unit_idle_time"] == ns(10)
    assert m["device_count"] == 2 and m["device_imbalance"] == pytest.approx(1.5) and m["straggler_device"] == 1
    assert m["chiplet_count"] is None and m["chiplet_imbalance"] is None
    devices = summary.breakdown("devices")
    assert [k for k, _ in devices.rows] == ["rbln0", "rbln1"]
    assert devices.value("rbln1", "relative") == pytest.approx(1.5) and devices.value("rbln0", "busy") == ns(10)
    assert devices.value("rbln1", "dma_busy") == ns(5) and devices.value("rbln0", "comm_busy") is None


def test_devices_in_natural_order_name_the_straggler_by_its_index():
    trace = [S("neural_engine", 0, 10, "0_a_0", device=f"rbln{d}") for d in (10, 2, 0)] + \
        [S("neural_engine", 10, 20, "0_a_1", device="rbln2")]
    summary, m = run(trace)
    assert [k for k, _ in summary.breakdown("devices").rows] == ["rbln0", "rbln2", "rbln10"]
    assert m["straggler_device"] == 1 and m["device_imbalance"] == pytest.approx(30 / (50 / 3))


def test_exposed_dma_overlap_and_starved_neural_engine():
    # NE [0, 10); Task DMA [5, 20); External HDMA [25, 30); Neural DMA [0, 3)
    trace = [S("neural_engine", 0, 10), S("task_dma", 5, 15), S("external_hdma", 25, 5), S("neural_dma", 0, 3)]
    summary, m = run(trace)
    assert m["dma_busy"] == ns(18)  # [0, 3) and [5, 20)
    assert m["ne_only_time"] == ns(2) and m["dma_only_time"] == ns(10) and m["ne_dma_overlap_time"] == ns(8)
    assert m["ne_starved_time"] == ns(15)  # Task DMA [10, 20) and External HDMA [25, 30) while NE idles
    assert summary.dma_exposed == ns(10) and summary.compute_busy == ns(10) and summary.dma_busy == ns(18)
    assert summary.events == {"compute": 1, "dma": 2}  # Neural Engine commands; Neural and Task DMA commands


def test_host_time_splits_into_inside_and_between_sequences():
    trace = [S("neural_engine", 0, 10, "0_a_0"), S("neural_engine", 20, 10, "0_b_0"),  # sequence 0 spans [0, 30)
             S("host", 12, 6, "0_host_fallback_0"),  # inside sequence 0, device idle
             S("host", 30, 10, "1_host_preprocess_0"),  # between sequences
             S("neural_engine", 40, 10, "1_a_0"), S("host", 45, 3, "1_host_post_0")]  # under device work
    _, m = run(trace, total_time=60 * NS)
    assert m["host_busy"] == ns(19) and m["host_exposed_time"] == ns(16)
    assert m["host_in_sequence_time"] == ns(6) and m["host_between_sequences_time"] == ns(10)
    assert m["device_span"] == ns(50) and m["largest_gap"] == ns(10) and m["gap_count"] == 0  # holes < 1 µs


def test_host_split_is_unavailable_without_sequences_and_host():
    _, m = run([S("neural_engine", 0, 10, "relu"), S("host", 10, 5, "prepare")])
    assert m["host_exposed_time"] == ns(5)
    assert m["host_in_sequence_time"] is None and m["host_between_sequences_time"] is None
    _, m = run([S("neural_engine", 0, 10, "0_a_0")])
    assert m["host_exposed_time"] is None and m["host_busy"] is None


def test_first_command_barrier_and_output_tail_per_sequence():
    trace = [S("external_hdma", 0, 5, "0_input_0"), S("neural_engine", 5, 10, "0_a_0"),
             S("external_hdma", 15, 3, "0_out_0"),  # tail 3
             S("external_hdma", 20, 2, "1_input_0"), S("neural_engine", 21, 9, "1_a_0"),  # barrier 1
             S("external_hdma", 28, 1, "1_out_0")]  # ends before the last NE command: no tail
    _, m = run(trace)
    assert m["first_command_barrier_time"] == ns(5 + 1) and m["output_tail_time"] == ns(3)
    assert m["sequence_count"] == 2 and m["sequence_time_total"] == ns(18 + 10)


def test_transfer_bytes_and_bandwidth_over_busy_time_summed_over_units():
    trace = [S("task_dma", 0, 10, bytes=1000, track="rbln0 / Task DMA 0"),
             S("task_dma", 5, 10, bytes=1000, track="rbln0 / Task DMA 1"),
             S("task_dma", 0, 5, bytes=500, device="rbln1"), S("neural_engine", 0, 20), S("neural_dma", 0, 5)]
    summary, m = run(trace)
    assert m["task_dma_bytes"] == 2500 and m["task_dma_commands"] == 3
    assert m["task_dma_bandwidth"] == pytest.approx(2500 / (20 * NS))  # rbln0 busy 15 ns + rbln1 5 ns
    assert m["task_dma_busy"] == ns(10)  # mean of 15 and 5
    assert m["neural_dma_bytes"] is None and m["neural_dma_bandwidth"] is None  # no transfer arguments
    assert m["external_hdma_bytes"] is None and m["external_hdma_busy"] is None
    assert summary.breakdown("categories").value("Task DMA", "bytes") == 2500
    assert sum(summary.dma_size_counts) == 3


def test_missing_categories_are_unavailable_not_zero():
    _, m = run([S("neural_engine", 0, 10, "0_a_0")])
    for name in ("comm_busy", "comm_exposed_time", "device_hdma_busy", "device_sync_commands", "task_dma_bytes",
                 "ne_starved_time", "task_dma_exposed_time", "dma_only_time", "ne_cycles", "ne_efficiency_median",
                 "sync_wait_skew",
                 "device_imbalance", "weight_stream_share", "first_command_barrier_time", "warmup_span",
                 "sequence_span_cv", "unmatched_slices", "trace_truncated", "dropped_packets"):
        assert m[name] is None, name
    assert m["device_count"] == 1 and m["unknown_category_share"] == 0 and m["unparsed_name_share"] == 0


def test_an_empty_trace_and_a_zero_length_one_divide_nothing():
    summary, m = summarize(make_trace([]), None)
    assert summary.span == 0 and summary.busy_union is None and summary.timeline == {}
    assert all(v is None for k, v in m.items() if k not in ("slice_count",)), \
        {k: v for k, v in m.items() if v is not None}
    summary, m = run([S("neural_engine", 5, 0, "0_a_0"), S("task_dma", 5, 0, "0_a_1", bytes=64)], total_time=0.0)
    assert m["device_span"] == 0 and m["device_busy"] == 0 and m["task_dma_bandwidth"] is None
    assert m["top_layer_share"] is None and m["sequence_span_cv"] is None
    assert summary.breakdown("categories").value("Neural Engine Clusters", "share") is None


def test_nan_durations_are_left_out_and_counted():
    trace = [S("neural_engine", 0, 10, "0_a_0"), S("neural_engine", 20, math.nan, "0_a_1"),
             S("task_dma", 0, math.nan, "0_a_2")]
    summary, m = run(trace)
    assert m["neural_engine_busy"] == ns(10) and m["neural_engine_commands"] == 1 and m["device_span"] == ns(10)
    assert m["task_dma_busy"] is None and m["slice_count"] == 3
    assert summary.skipped == {"compute": 1, "dma": 1}


def test_quality_counts_are_read_by_attribute_and_tolerated_when_absent():
    quality = {"unclosed_begins": 2, "unmatched_ends": 1, "dropped_packets": 4, "truncated": True,
               "unknown_tracks": ("Mystery",)}
    trace = [S("neural_engine", 0, 10, "0_a_0"), S("other", 0, 30, "x"), S("neural_engine", 10, 10, "relu")]
    _, m = run(trace, quality=quality)
    assert (m["unmatched_slices"], m["dropped_packets"], m["trace_truncated"]) == (3, 4, 1)
    assert m["unknown_category_share"] == pytest.approx(30 / 50) and m["unparsed_name_share"] == pytest.approx(2 / 3)
    _, m = run(trace, quality={"truncated": False})
    assert m["unmatched_slices"] is None and m["trace_truncated"] == 0


@pytest.mark.parametrize(("name", "inst", "seq", "layer"), [
    ("0_fused(bn1+conv1+relu)_1", -1, 0, "fused(bn1+conv1+relu)"),
    ("0_causal_lm.model_0", -1, 0, "causal_lm.model"),
    ("12_linear_196_0", -1, 12, "linear_196"),
    ("i1_3_W2_fused(a+b)_5", 1, 3, "fused(a+b)"),
    ("5_relu", -1, -1, "5_relu"),
])
def test_names_follow_both_conventions(name, inst, seq, layer):
    parsed = parse((name,))
    assert (int(parsed.inst[0]), int(parsed.seq[0]), parsed.layers[parsed.layer[0]]) == (inst, seq, layer)


def test_a_w_prefix_is_the_workload_only_when_most_names_carry_it():
    parsed = parse(("0_W1_a_0", "0_b_0", "0_c_0"))
    assert parsed.layers == ("W1_a", "b", "c") and not parsed.workload_read
    parsed = parse(("0_W1_a_0", "0_W1_b_0", "0_c_0"))
    assert parsed.layers == ("a", "b", "c") and parsed.workload_read


def test_families_weights_and_inline_operations():
    assert [family(x) for x in ("causal_lm.model.0.self_attn.q_proj", "linear_196", "mlp.down_proj", "layer1.2")] \
        == ["q_proj", "linear", "down_proj", "layer1"]
    parsed = parse(("0_linear_196_0", "0_fused(fc+relu)_0", "0_relu_0", "0_add_1", "0_model.relu_0", "7_relu"))
    by_layer = dict(zip(parsed.layers, zip(parsed.weight.tolist(), parsed.unattributable.tolist(), strict=True),
                        strict=True))
    assert by_layer == {"linear_196": (True, False), "fused(fc+relu)": (True, False), "relu": (False, True),
                        "add": (False, True), "model.relu": (False, False), "7_relu": (False, True)}


def test_layers_keep_fused_groups_whole_and_rank_by_device_time():
    fused = "fused(bn1+conv1+relu)"
    trace = [S("neural_engine", 0, 30, f"0_{fused}_0"), S("neural_engine", 30, 10, f"0_{fused}_2"),
             S("task_dma", 40, 30, "0_fc_0", bytes=4096), S("neural_engine", 70, 10, "0_fc_1"),
             S("neural_engine", 80, 20, "0_relu_0")]
    summary, m = run(trace)
    layers = summary.breakdown("layers")
    assert [k for k, _ in layers.rows] == [fused, "fc", "relu"] and layers.total_rows == 3
    assert layers.value(fused, "ne_time") == ns(40) and layers.value(fused, "commands") == 2
    assert layers.value("fc", "time") == ns(40) and layers.value("fc", "dma_ratio") == pytest.approx(3.0)
    assert layers.value("fc", "bytes") == 4096 and layers.value(fused, "bytes") is None
    assert layers.value(fused, "share") == pytest.approx(40 / 70) and layers.value(fused, "dma_time") == ns(0)
    assert m["layer_count"] == 3
    assert m["top_layer_share"] == pytest.approx(40 / 70) and m["top3_layer_share"] == pytest.approx(1.0)
    assert m["dma_bound_layer_time"] == ns(40)  # fc: DMA 30 ns >= 1.5 × NE 10 ns
    assert m["unattributable_ne_share"] == pytest.approx(20 / 70) and m["repeated_layer_share"] == 0
    assert m["task_dma_weight_share"] == pytest.approx(1.0)  # fc is a weight family


def test_a_layer_at_two_places_of_one_sequence_is_repeated():
    trace = [S("neural_engine", 0, 10, "0_block.relu_0"), S("neural_engine", 10, 10, "0_block.conv_0"),
             S("neural_engine", 20, 20, "0_block.relu_1"),
             S("neural_engine", 50, 10, "1_block.relu_0"), S("neural_engine", 60, 10, "1_block.conv_0")]
    _, m = run(trace)
    assert m["repeated_layer_share"] == pytest.approx(40 / 60) and m["unattributable_ne_share"] == 0


def test_weight_stream_share_of_neural_dma():
    trace = [S("neural_dma", 0, 30, "0_causal_lm.model.0.mlp.up_proj_0"), S("neural_dma", 30, 10, "0_paged_attn_0"),
             S("neural_engine", 0, 40, "0_causal_lm.model.0.mlp.up_proj_1")]
    _, m = run(trace)
    assert m["weight_stream_share"] == pytest.approx(0.75)


def test_sequence_statistics_gaps_and_warmup():
    spans = [40, 10, 10, 12, 8]  # sequence i starts at 100 i; the first is the warm-up
    trace = []
    for i, span in enumerate(spans):
        trace += [S("neural_engine", 100 * i, span / 2, f"{i}_a_0"), S("task_dma", 100 * i + span / 2, span / 2,
                                                                         f"{i}_a_1")]
    trace += [S("external_hdma", 0, 30, "0_weights_0"), S("external_hdma", 200, 4, "2_input_0")]
    summary, m = run(trace)
    assert m["sequence_count"] == 5 and m["sequence_time_total"] == ns(80)
    assert m["sequence_span_mean"] == ns(16) and m["sequence_span_p50"] == ns(10) and m["sequence_span_max"] == ns(40)
    assert m["sequence_span_p95"] == ns(np.percentile(spans, 95))
    assert m["sequence_span_cv"] == pytest.approx(np.std(spans, ddof=1) / 16)
    assert m["sequence_excess_time"] == ns(30 + 2)
    assert m["warmup_span"] == ns(40) and m["after_warmup_span"] == ns(408 - 40)
    assert m["external_hdma_after_warmup_time"] == ns(4)
    table = summary.breakdown("sequences")
    assert [k for k, _ in table.rows] == [f"seq {i}" for i in range(5)] and table.total_rows == 5
    assert table.value("seq 0", "gap_before") is None and table.value("seq 1", "gap_before") == ns(60)
    assert table.value("seq 3", "ne_busy") == ns(6)


def test_multi_stream_sequences_are_instance_and_sequence():
    trace = [S("neural_engine", 0, 10, "i0_0_a_0"), S("neural_engine", 10, 10, "i1_0_a_0"),
             S("neural_engine", 20, 10, "i0_1_a_0")]
    summary, m = run(trace)
    assert m["sequence_count"] == 3
    assert [k for k, _ in summary.breakdown("sequences").rows] == ["i0 seq 0", "i1 seq 0", "i0 seq 1"]


def test_chiplets_are_units_and_device_level_tracks_count_in_each():
    trace = [S("neural_engine", 0, 10 if c < 3 else 13, "0_a_0", chiplet=f"Chiplet {c}") for c in range(4)]
    trace += [S("ccl", 20, 5, "0_allreduce_0"), S("device_workload", 0, 25, "prefill")]
    summary, m = run(trace)
    assert m["chiplet_count"] == 4 and m["straggler_chiplet"] == 3
    assert m["chiplet_imbalance"] == pytest.approx(18 / ((15 * 3 + 18) / 4))  # CCL counts in every chiplet
    assert m["neural_engine_busy"] == ns(10.75) and m["ccl_busy"] == ns(5) and m["device_workload_busy"] == ns(25)
    assert m["device_count"] == 1 and m["device_imbalance"] is None
    devices = summary.breakdown("devices")
    assert [k for k, _ in devices.rows] == [f"rbln0 / Chiplet {c}" for c in range(4)]
    assert m["comm_exposed_time"] == ns(5) and m["device_span"] == ns(25)  # Device Workload is not device work
    assert summary.breakdown("categories").value("CCL", "concurrency") == 1  # counted once for its device


def test_sync_wait_skew_across_devices_at_one_sync_point():
    trace = [S("device_sync", 0, 10, "0_sync_0", device="rbln0"), S("device_sync", 0, 4, "0_sync_0", device="rbln1"),
             S("device_sync", 20, 3, "0_sync_1", device="rbln0"), S("device_sync", 20, 2, "0_sync_1", device="rbln1"),
             S("device_sync", 30, 50, "0_sync_9", device="rbln0"), S("neural_engine", 0, 30, "0_a_0")]
    _, m = run(trace)
    assert m["sync_wait_skew"] == ns(6)  # 0_sync_9 is on one device only
    _, m = run([S("device_sync", 0, 10, "0_sync_0"), S("neural_engine", 0, 30, "0_a_0")])
    assert m["sync_wait_skew"] is None


def test_critical_path_follows_the_latest_arrival_through_flows_and_tracks():
    # ids: 0 EHDMA [0, 5) -> 1 Task DMA [6, 10) -> 2 NE [12, 20); 3 Task DMA [8, 16) -> 2 as well;
    # 4 NE [22, 30) follows 2 on its track; 5 EHDMA [31, 35) <- 4; 6 Neural DMA [0, 34) has no flow.
    trace = [S("external_hdma", 0, 5), S("task_dma", 6, 4, track="rbln0 / Task DMA 0"),
             S("neural_engine", 12, 8), S("task_dma", 8, 8, track="rbln0 / Task DMA 1"),
             S("neural_engine", 22, 8), S("external_hdma", 31, 4), S("neural_dma", 0, 34), S("host", 40, 10)]
    summary, m = run(trace, flows=[(0, 1), (1, 2), (3, 2), (4, 5)])
    # 5 <- 4 (flow; 0 on its track ends earlier) <- 2 (track) <- 3 (ends at 16, after 1's 10); 3 has none
    assert m["critical_path_nodes"] == 4
    assert m["critical_path_time"] == ns(4 + 8 + 8 + 4)  # Task DMA 3 counts until NE 2 starts
    assert m["critical_path_wait"] == ns(2 + 1)
    table = summary.breakdown("critical_path")
    assert [k for k, _ in table.rows] == ["Neural Engine Clusters", "Task DMA", "External HDMA",
                                          "waiting between commands"]  # a tie in time: tracks.yaml order
    assert table.value("Task DMA", "time") == ns(4) and table.value("Neural Engine Clusters", "commands") == 2
    assert table.value("waiting between commands", "share") == pytest.approx(3 / 27)
    assert "lower bound" in table.note


def test_critical_path_without_flows_follows_a_track():
    _, m = run([S("neural_engine", 0, 10), S("neural_engine", 15, 10), S("task_dma", 0, 40)])
    assert m["critical_path_nodes"] == 1 and m["critical_path_time"] == ns(40)
    _, m = run([S("neural_engine", 0, 10), S("neural_engine", 15, 10)])
    assert m["critical_path_nodes"] == 2 and m["critical_path_wait"] == ns(5)


def test_neural_engine_cycle_density_is_relative_to_the_p90():
    trace = [S("neural_engine", 10 * i, 10, f"0_a_{i}", cycles=c) for i, c in enumerate([10, 10, 5, 2, 10])]
    _, m = run(trace)
    assert m["ne_cycles"] == 37 and m["ne_efficiency_median"] == pytest.approx(1.0)
    trace = [S("neural_engine", 10 * i, 10, f"0_a_{i}", cycles=c) for i, c in enumerate([10, 2, 2, 2])]
    _, m = run(trace)
    assert m["ne_efficiency_median"] == pytest.approx(2 / np.percentile([1, .2, .2, .2], 90) / 10)


def test_timeline_and_gaps_are_over_the_device_span():
    trace = [S("host", 0, 100, "prepare"), S("neural_engine", 100, 10, "0_a_0"), S("neural_engine", 150, 10, "0_a_1"),
             S("task_dma", 105, 10, "0_a_2")]
    summary, m = run(trace, warnings=("a reader note",))
    assert summary.span == ns(60) and summary.timeline_edges[0] == ns(100) and summary.timeline_edges[-1] == ns(160)
    assert set(summary.timeline) == {"Host", "Neural Engine Clusters", "Task DMA"}
    assert len(summary.timeline["Host"]) == 60 and summary.timeline["Host"] == (0.0,) * 60
    gap = summary.gaps[0]
    assert (gap.start, gap.duration) == (ns(115), ns(35)) and len(summary.gaps) == 1
    assert summary.warnings == ("a reader note",) and summary.last_event_end == ns(160)
    assert m["largest_gap"] == ns(35) and m["gap_count"] == 0
    assert summary.breakdown("categories").value("Host", "share") == pytest.approx(100 / 160)


def test_tables_sharing_one_name_table_give_the_same_figures():
    trace = [S("task_dma", 0, 30, "0_fc_0", bytes=64), S("neural_engine", 30, 20, "0_fc_1"),
             S("neural_engine", 50, 10, "1_relu_0"), S("external_hdma", 60, 5, "1_out_0")]
    shared = summarize(make_trace(trace, shared_names=True), None)
    separate = summarize(make_trace([S(**vars(sl)) for sl in trace]), None)
    assert shared[1] == separate[1] and shared[0].breakdowns == separate[0].breakdowns


def test_gap_count_counts_holes_of_a_microsecond_or_more():
    trace = [S("neural_engine", 0, 1000), S("neural_engine", 1500, 1000), S("neural_engine", 4000, 1000),
             S("task_dma", 6000, 100)]
    _, m = run(trace)
    assert m["gap_count"] == 2 and m["largest_gap"] == ns(1500)  # 500 ns is under the 1 µs floor
    assert m["device_idle_time"] == ns(500 + 1500 + 1000) and m["mean_unit_idle_time"] == ns(3000)


def test_a_name_holding_a_newline_is_parsed_one_by_one():
    parsed = parse(("0_a_0", "1_b\nc_2", "plain"))
    assert parsed.seq.tolist() == [0, -1, -1] and parsed.layers == ("a", "1_b\nc_2", "plain")
    assert parse(()).layers == ()


@pytest.mark.parametrize("offset", [2**32, -2**40])
def test_critical_path_matches_ids_beyond_32_bits_exactly(offset):
    # the ids of the flow test moved past int32, with a decoy whose id agrees in its low 32 bits only
    base = [S("external_hdma", 0, 5), S("task_dma", 6, 4, track="rbln0 / Task DMA 0"),
            S("neural_engine", 12, 8), S("task_dma", 8, 8, track="rbln0 / Task DMA 1"),
            S("neural_engine", 22, 8), S("external_hdma", 31, 4), S("neural_dma", 0, 34), S("host", 40, 10)]
    flows = [(0, 1), (1, 2), (3, 2), (4, 5)]
    _, expected = run(base, flows=flows)
    moved = [S(sl.category, sl.start, sl.duration, track=sl.track, id=i + offset) for i, sl in enumerate(base)]
    moved.append(S("task_dma", 9, 10, track="rbln0 / Task DMA 2", id=2))  # would win as 2's predecessor
    _, m = run(moved, flows=[(a + offset, b + offset) for a, b in flows] + [(2 + 2**32 * 3, 2 + offset)])
    for key in ("critical_path_nodes", "critical_path_time", "critical_path_wait"):
        assert m[key] == expected[key]


def test_unions_per_unit_and_group_match_a_plain_reference():
    from advisor.metrics.grouped import union
    from advisor.profilers.rbln.slices import Part, build
    from advisor.profilers.rbln.unions import per_unit_groups

    rng = np.random.default_rng(7)
    n = 400
    start = np.round(rng.uniform(0, 1000, n))
    duration = np.round(rng.uniform(0, 60, n))
    chiplet = rng.integers(0, 3, n)  # 0: a device-level track, counted in each of the device's chiplets
    device = rng.integers(0, 2, n)
    part = Part("neural_engine", start, duration, np.zeros(n, dtype=np.int32), ("x",), np.zeros(n, dtype=np.int32),
                ("t",), device, ("rbln0", "rbln1"), chiplet, ("", "Chiplet 1", "Chiplet 2"), None,
                np.full(n, np.nan), np.full(n, np.nan))
    s = build([part])
    order = np.argsort(start, kind="stable")
    assert np.array_equal(s.end(), (start + duration)[order]) and s.last_end() == float((start + duration).max())
    group = rng.integers(0, 4, n)
    mask = rng.random(n) < 0.7

    def covered(rows):  # union length of the rows' intervals, by brute force
        spans = sorted((float(s.start[r]), float(s.end([r])[0])) for r in rows)
        total, at = 0.0, -np.inf
        for a, b in spans:
            total += max(0.0, b - max(a, at))
            at = max(at, b)
        return total

    got = per_unit_groups(s, mask, group, 4)
    for u, (d, c) in enumerate(s.units):
        in_unit = (s.device == d) & ((s.chiplet == c) | (s.chiplet == 0))
        for g in range(4):
            assert got[g, u] == pytest.approx(covered(np.flatnonzero(mask & in_unit & (group == g))))
    rows = np.flatnonzero(mask)
    assert union(s, rows, np.zeros(len(rows), dtype=np.int8), 1)[0] == pytest.approx(covered(rows))
