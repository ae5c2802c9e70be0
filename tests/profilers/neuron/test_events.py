"""Event-derived analysis on small hand-made traces whose answers can be worked out by hand."""

import numpy as np
import pytest

from advisor.core.events import Interner
from advisor.profilers.neuron.adapters.columns import neuron_trace
from advisor.profilers.neuron.events import summarize, trace_rules
from advisor.profilers.neuron.tables import TensorDecl


def _codes(values):
    interner = Interner()
    return interner.codes(np.array([interner[v] for v in values], dtype=np.int32))


def _trace(instructions=(), dmas=(), tensors=()):
    """instructions: (row, start ns, duration ns); dmas: (start, duration, bytes, variable)."""
    rows = [r for r, _, _ in instructions]
    return neuron_trace(
        {"start": np.array([s for _, s, _ in instructions], dtype=float),
         "duration": np.array([d for _, _, d in instructions], dtype=float),
         "engine": _codes(rows), "hlo": _codes([""] * len(rows)), "nki": _codes([""] * len(rows))},
        {"start": np.array([s for s, *_ in dmas], dtype=float), "duration": np.array([d for _, d, *_ in dmas],
                                                                                        dtype=float),
         "size": np.array([b for _, _, b, _ in dmas], dtype=float), "variable": _codes([v for *_, v in dmas])},
        {}, {}, (), tuple(tensors))


@pytest.mark.parametrize(("row", "engine"), [
    ("TensorMatrix", "tensor"), ("TensorE", "tensor"), ("tensor", "tensor"), ("PE", "tensor"),
    ("Vector", "vector"), ("DVE", "vector"), ("Scalar", "scalar"), ("Act", "scalar"), ("GpSimd", "gpsimd"),
    ("Pool", "gpsimd"), ("Sync", "sync"), ("SP", "sync"), ("Spill", None), ("Actuator", None), ("qSyncIO0", None),
])
def test_timeline_rows_map_to_engines(row, engine):
    rule = trace_rules().engine_of(row)
    assert (rule.engine if rule else None) == engine


def test_rows_of_one_engine_are_one_union_and_unknown_rows_stand_alone():
    trace = _trace([("TensorMatrix", 0, 10), ("TensorE", 5, 10), ("Mystery", 0, 3)])
    summary, _ = summarize(trace)
    tensor, mystery = summary.engines
    assert (tensor.engine, tensor.rows, tensor.busy) == ("tensor", ("TensorMatrix", "TensorE"), pytest.approx(15e-9))
    assert (mystery.engine, mystery.title, mystery.compute) == ("", "Mystery", False)
    assert set(summary.timeline) == {"Tensor Engine", "Mystery", "DMA"}


def test_dma_exposed_time_is_dma_while_no_compute_engine_runs():
    # compute [0, 10) and [30, 40); DMA [5, 35); Sync [12, 20) is not compute: exposed = [10, 30) = 20 ns
    trace = _trace([("Vector", 0, 10), ("Scalar", 30, 10), ("Sync", 12, 8)], [(5, 30, 4096, "x")])
    summary, metrics = summarize(trace)
    assert metrics["dma_exposed_time"] == pytest.approx(20e-9)
    assert summary.compute_busy == pytest.approx(20e-9) and summary.dma_busy == pytest.approx(30e-9)


def test_no_dma_or_no_compute_leaves_dma_wait_unavailable():
    assert summarize(_trace([("Vector", 0, 10)]))[1]["dma_exposed_time"] is None
    assert summarize(_trace([("Sync", 0, 10)], [(0, 5, 64, "x")]))[1]["dma_exposed_time"] is None


def test_tensor_loads_count_full_copies_of_inputs_and_weights():
    tensors = [TensorDecl("w", "WEIGHT", 1000.0), TensorDecl("x", "IN", 500.0), TensorDecl("y", "OUT", 500.0)]
    dmas = [(0, 1, 1000, "w"), (1, 1, 1000, "w"), (2, 1, 500, "w"), (3, 1, 500, "x"), (4, 1, 500, "y"),
            (5, 1, 300, "unknown")]
    summary, metrics = summarize(_trace([("Vector", 0, 10)], dmas, tensors))
    loads = summary.breakdown("tensor_loads")
    assert [(key, values[loads.column("repeat")], values[loads.column("loads")]) for key, values in loads.rows] == [
        ("w", 2.5, 3), ("x", 1.0, 1)]  # copies (ratio), transfers (count)
    assert (loads.value("w", "size"), loads.value("w", "loaded_bytes")) == (1000, 2500)  # bytes
    assert (loads.text("w", "kind"), loads.text("w", "source")) == ("WEIGHT", "measured")
    assert metrics == {**metrics, "tensors_loaded_over_twice": 1, "tensor_max_load_repeat": 2.5,
                       "tensor_reload_excess_bytes": 1500}
    assert loads.figure("unnamed_fraction") == pytest.approx(300 / 3800)  # fraction of DMA bytes
    assert loads.figure("declared") == 3 and loads.note == ""  # tensors


@pytest.mark.parametrize(("tensors", "variable", "note"), [
    ((), "w", "declares no tensor sizes"),
    ((TensorDecl("y", "OUT", 100.0),), "y", "declares no input or weight tensors"),
    ((TensorDecl("w", "WEIGHT", 100.0),), "unknown", "--enable-dge-notifs"),
])
def test_tensor_loads_unavailable_say_why(tensors, variable, note):
    summary, metrics = summarize(_trace([("Vector", 0, 10)], [(0, 1, 100, variable)], tensors))
    loads = summary.breakdown("tensor_loads")
    assert note in loads.note and not loads.rows
    assert metrics["tensor_max_load_repeat"] is None and metrics["tensors_loaded_over_twice"] is None


def test_events_without_a_usable_time_are_counted_not_silently_dropped():
    trace = _trace([("Vector", 0, 10), ("Vector", -1, 5), ("Scalar", float("nan"), 5)], [(0, -3, 64, "x")])
    summary, _ = summarize(trace)
    assert (summary.events["instruction"], summary.skipped["instruction"]) == (1, 2)
    assert (summary.events["dma"], summary.skipped["dma"], summary.dma_busy) == (0, 1, None)  # no DMA: not 0 s


def test_the_run_is_the_summarys_total_time_and_its_tail_is_an_idle_gap():
    summary, metrics = summarize(_trace([("Vector", 10, 40)]), total_time=100e-9)
    assert summary.span == pytest.approx(100e-9) and summary.last_event_end == pytest.approx(50e-9)
    assert [(g.start, g.duration) for g in summary.gaps] == [(pytest.approx(50e-9), pytest.approx(50e-9)),
                                                             (0, pytest.approx(10e-9))]  # longest first
    assert metrics["trace_busy_fraction"] == pytest.approx(0.4)
    assert metrics["warmup_idle_fraction"] == pytest.approx(0.1)
    assert summarize(_trace())[0].busy_union is None  # no events at all: unavailable, not 0 s


def test_a_tensor_declared_once_per_core_counts_once():
    # Explorer lists a tensor once per physical core (pcore_idx) of a logical core
    measured = (TensorDecl("w", "WEIGHT", 1000.0), TensorDecl("w", "WEIGHT", 1000.0))
    dmas = [(0, 1, 1000, "w"), (1, 1, 1000, "w"), (2, 1, 1000, "w")]
    summary, metrics = summarize(_trace([("Vector", 0, 10)], dmas, measured))
    assert [(key, values[-1]) for key, values in summary.breakdown("tensor_loads").rows] == [("w", 3.0)]
    assert metrics["tensor_reload_excess_bytes"] == 2000
    reported = (TensorDecl("w", "WEIGHT", 1000.0, 2.0, 2000.0, 4.0),
                TensorDecl("w", "WEIGHT", 1000.0, 1.0, 1000.0, 2.0))
    summary, _ = summarize(_trace([("Vector", 0, 10)], dmas, reported))
    loads = summary.breakdown("tensor_loads")
    assert [(*values[1:], loads.text(key, "source")) for key, values in loads.rows] == [(3000, 6, 3.0, "reported")]
