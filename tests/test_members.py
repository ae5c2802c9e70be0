"""Cross-member metrics and the straggler findings (issue 23): the profiles of one input (cores of one
file, a folder of rank files) are members of one step, so the slowest one's excess is a finding with its
cause where the data shows one."""

import json
import statistics

import pytest
from tests_support import SAMPLES

from advisor.api import AnalyzeOptions, analyze
from advisor.core import serialize
from advisor.core.model import Metric
from advisor.engine.evaluate import Selection
from advisor.inputs.limits import saved_analysis_limit
from advisor.kinds.base import LoadOptions
from advisor.metrics.members import MemberSpec, member_metrics, member_spec

MS = 1e-3


def _finding(analysis, name):
    return next((f for f in analysis.findings if f.name == name), None)


def _outcome(analysis, name):
    return next(o.outcome for o in analysis.outcomes if o.name == name)


def _metrics(**values):
    return {n: Metric(n, v, "s", "reported") for n, v in values.items()}


def test_multi_core_straggler_is_dma_with_the_same_tensor_engine_time():
    a = analyze(SAMPLES / "multi_core" / "summary.json")
    assert a.value("member_count") == 4
    assert a.value("member_median_time") == pytest.approx(48.34701 * MS)  # of all four, seconds
    assert a.value("straggler_excess_time") == pytest.approx(7.23 * MS, abs=0.005 * MS)  # over 48.2 ms, the others'
    assert a.value("straggler_excess_percent") == pytest.approx(7.23 / 55.43, abs=1e-4)
    assert a.value("straggler_dma_active_time_excess") == pytest.approx(7.23 * MS, abs=0.005 * MS)
    assert a.value("straggler_tensor_engine_active_time_excess") == pytest.approx(0.0, abs=0.001 * MS)
    assert a.value("straggler_cc_op_active_time_excess") == pytest.approx(-0.675 * MS, abs=0.001 * MS)
    assert a.metrics["straggler_dma_active_time_excess"].unit == "s"
    assert a.metrics["straggler_excess_time"].source == "derived"
    assert a.metrics["straggler_excess_time"].formula == "total_time − median(total_time of the other members)"
    dma, straggler = _finding(a, "straggler-dma"), _finding(a, "straggler")
    assert dma.root_cause and not straggler.root_cause  # the cause explains the straggler
    assert "its DMA is active 7.23 ms longer" in dma.message and "its Tensor Engine is active 0 s longer" in dma.message
    assert "7.23 ms longer than the median of the others" in straggler.message
    assert "13.04 % of its own time" in straggler.message
    assert straggler.estimated_speedup == pytest.approx(a.value("straggler_excess_percent"))
    assert dma.estimated_speedup == pytest.approx(a.value("straggler_excess_percent"))
    assert dma.claims == straggler.claims == "straggler"  # one piece of time, counted once
    assert _outcome(a, "straggler-compute") == "passed" and _outcome(a, "straggler-collectives") == "passed"
    analysed = next(e for e in a.entries if e.analysed)
    assert "straggler-dma" in analysed.root_causes  # the overview's row of it shows the new findings


def test_multi_rank_folder_gives_the_same_straggler_as_the_file():
    a = analyze(SAMPLES / "multi_rank", jobs=1)
    assert next(e.name for e in a.entries if e.analysed) == "rank 2"
    assert a.value("straggler_dma_active_time_excess") == pytest.approx(7.23 * MS, abs=0.005 * MS)
    assert _finding(a, "straggler-dma").root_cause
    assert _finding(a, "straggler").estimated_speedup == pytest.approx(0.1304, abs=1e-4)


def test_rbln_ranks_straggler_is_its_neural_engine():
    a = analyze(SAMPLES / "rbln_ranks", jobs=1)
    assert next(e.name for e in a.entries if e.analysed) == "rank1.pb"
    ranks = [analyze(SAMPLES / "rbln_ranks" / f"rank{i}.pb") for i in range(4)]  # each trace on its own
    others = [r for i, r in enumerate(ranks) if i != 1]
    excess = ranks[1].value("total_time") - statistics.median(r.value("total_time") for r in others)
    ne = ranks[1].value("neural_engine_busy") - statistics.median(r.value("neural_engine_busy") for r in others)
    assert a.value("straggler_excess_time") == pytest.approx(excess)
    assert a.value("straggler_excess_time") == pytest.approx(1.045 * MS, abs=0.001 * MS)  # 7.177 ms vs 6.132 ms
    assert a.value("straggler_neural_engine_busy_excess") == pytest.approx(ne)
    assert a.value("straggler_neural_engine_busy_excess") == pytest.approx(1.117 * MS, abs=0.001 * MS)
    assert abs(a.value("straggler_neural_dma_busy_excess")) < 0.01 * MS  # the same transfers
    assert a.value("straggler_comm_busy_excess") is None  # one device per rank: no communication, not 0
    cause, straggler = _finding(a, "rank-straggler-ne"), _finding(a, "rank-straggler")
    assert cause.root_cause and not straggler.root_cause
    assert "its Neural Engine is busy 1.117 ms longer" in cause.message
    assert straggler.estimated_speedup == pytest.approx(excess / ranks[1].value("total_time"))
    # the Neural Engine's excess overlaps other work: capped by the straggler's own excess, never above it
    assert cause.estimated_speedup == pytest.approx(min(excess, ne) / ranks[1].value("total_time"))
    assert _outcome(a, "rank-straggler-dma") == "passed"
    assert _outcome(a, "rank-straggler-comm") == "not_applicable"


@pytest.mark.parametrize("sample", ["weight_reload/summary.json", "rbln_atom_cnn/trace.pb"])
def test_a_single_profile_has_no_straggler(sample):
    a = analyze(SAMPLES / sample)
    assert not [f for f in a.findings if "straggler" in f.name]
    assert "straggler_excess_time" not in a.metrics and "member_count" not in a.metrics
    assert any(n.name in ("straggler", "rank-straggler") for n in a.not_applicable)


def test_members_with_equal_times_give_no_straggler(tmp_path):
    entries = json.loads((SAMPLES / "multi_core" / "summary.json").read_text())
    first = next(iter(entries.values()))
    path = tmp_path / "summary.json"
    path.write_text(json.dumps({name: first for name in entries}))
    a = analyze(path)
    assert a.value("straggler_excess_time") == 0.0 and a.value("straggler_dma_active_time_excess") == 0.0
    assert _outcome(a, "straggler") == "passed"
    assert not [f for f in a.findings if "straggler" in f.name]


def test_a_fast_member_chosen_with_entry_is_no_straggler():
    options = AnalyzeOptions(load=LoadOptions(entry="n_772924cfdec99b7a1875272754270dc04abd893a"))
    a = analyze(SAMPLES / "multi_core" / "summary.json", options)
    assert a.value("straggler_excess_time") == pytest.approx(-0.5495 * MS, abs=0.001 * MS)  # 47.94 vs 48.49 ms
    assert _outcome(a, "straggler") == "passed"


def test_member_metrics_survive_save_and_reload(tmp_path):
    a = analyze(SAMPLES / "multi_core" / "summary.json")
    path = tmp_path / "analysis.json"
    path.write_text(serialize.dumps(a))
    saved = serialize.read_if_analysis(path, *saved_analysis_limit())
    assert saved is not None
    for name in ("member_count", "straggler_excess_percent", "straggler_dma_active_time_excess"):
        assert saved.metrics[name] == a.metrics[name]
    assert [f.name for f in saved.findings] == [f.name for f in a.findings]


def test_ignoring_the_straggler_hides_its_causes():
    a = analyze(SAMPLES / "multi_core" / "summary.json", AnalyzeOptions(selection=Selection(ignore=("straggler",))))
    assert _finding(a, "straggler-dma") is None
    assert any(h.name == "straggler-dma" for h in a.settings.hidden)  # what --ignore hid, on the new metrics


def test_kernels_of_an_nsight_compute_run_are_not_members():
    assert member_spec("ncu") is None
    a = analyze(SAMPLES / "ncu_multi_kernel" / "details.csv")
    assert len(a.entries) > 1 and "straggler_excess_time" not in a.metrics


def test_member_metrics_take_the_median_of_the_others_and_keep_missing_unavailable():
    members = [_metrics(total_time=10.0, dma_active_time=4.0), _metrics(total_time=12.0, dma_active_time=None),
               _metrics(total_time=16.0, dma_active_time=9.0)]
    out = member_metrics(members, 2, MemberSpec(causes=("dma_active_time", "cc_op_active_time")))
    assert out["member_median_time"].value == 12.0
    assert out["straggler_excess_time"].value == 5.0  # 16 s against the median 11 s of the other two
    assert out["straggler_excess_percent"].value == pytest.approx(5.0 / 16.0)
    assert out["straggler_dma_active_time_excess"].value == 5.0  # the one other known value: 4 s
    missing = out["straggler_cc_op_active_time_excess"]
    assert (missing.value, missing.missing, missing.unit) == (None, ("cc_op_active_time",), "s")
    unknown = member_metrics(members, 1, MemberSpec(causes=("dma_active_time",)))["straggler_dma_active_time_excess"]
    assert (unknown.value, unknown.missing) == (None, ("dma_active_time",))  # its own value is unavailable, not 0


@pytest.mark.parametrize("kind", ["neuron", "rbln"])
def test_every_member_metric_is_declared_by_the_kinds_pack(kind):
    """Rules read only declared names: each metric the stage measures is an input of the kind's pack, in seconds
    (counts and shares aside), and each cause is a metric the pack knows."""
    from advisor.metrics.members import member_metric_names
    from advisor.packs.load import load_packs

    ruleset = load_packs(kind=kind)
    spec = member_spec(kind)
    names = member_metric_names(spec)
    assert set(names) <= set(ruleset.inputs)
    assert {ruleset.inputs[n].unit for n in names} == {"count", "s", "fraction"}
    known = set(ruleset.inputs) | {m.name for m in ruleset.metrics}
    assert set(spec.causes) <= known
