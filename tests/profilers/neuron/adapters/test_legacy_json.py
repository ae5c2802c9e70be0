"""The full event trace (legacy JSON): typed decoding, and numbers checked against the generator's
own bookkeeping (tests/fixtures/legacy_trace.stats.json, computed from the events it wrote)."""

import json

import numpy as np
import pytest
from tests_support import FIXTURES, SAMPLES

from advisor.core.errors import AdvisorError
from advisor.kinds.base import LoadOptions
from advisor.profilers.neuron.adapters import load_profiles
from advisor.profilers.neuron.events import summarize, union

TRACE = SAMPLES / "legacy_trace" / "profile.json"
STATS = json.loads((FIXTURES / "legacy_trace.stats.json").read_text())


def test_loads_summary_and_events():
    [profile] = load_profiles(TRACE)
    assert profile.source.format == "neuron-json-trace"
    assert profile.source.shape == "full trace: 1,270 instructions, 845 DMA transfers; read whole in memory"
    assert profile.values["total_time"] == pytest.approx(STATS["total_time_ns"] * 1e-9)
    assert len(profile.trace.tables["instruction"]) == STATS["instruction_count"]
    assert profile.trace.warnings  # the profiler's own caveats are kept


def test_event_numbers_match_the_generator():
    [profile] = load_profiles(TRACE)
    summary, metrics = summarize(profile.trace)
    rows = {row for e in summary.engines for row in e.rows}
    assert rows == set(STATS["busy_ns_by_label"])
    # per engine, the union over its rows is what the generator wrote as <engine>_engine_active_time
    busy_ns = {e.engine: round(e.busy * 1e9) for e in summary.engines}
    assert busy_ns == {e: round(profile.values[f"{e}_engine_active_time"] * 1e9) for e in busy_ns}
    assert next(e.rows for e in summary.engines if e.engine == "tensor") == ("TensorMatrix", "TensorE")
    assert round(summary.compute_busy * 1e9) == STATS["compute_busy_ns"]
    assert metrics["dma_exposed_time"] == pytest.approx(STATS["dma_exposed_ns"] * 1e-9)
    assert metrics["tensors_loaded_over_twice"] == STATS["tensors_loaded_over_twice"]
    assert metrics["tensor_max_load_repeat"] == pytest.approx(STATS["tensor_max_load_repeat"])
    assert metrics["tensor_reload_excess_bytes"] == STATS["tensor_reload_excess_bytes"]
    assert metrics["dma_small_transfer_fraction"] == pytest.approx(STATS["dma_share_under_4k"])
    assert metrics["dma_transfer_under_32k_fraction"] == pytest.approx(STATS["dma_share_under_32k"])
    # the generator idles warmup_ns before its first instruction; the first event may start a little later
    assert summary.gaps[0].start == 0
    assert STATS["warmup_ns"] * 1e-9 <= summary.gaps[0].duration <= STATS["warmup_ns"] * 1.02e-9
    assert sum(summary.dma_size_counts) == STATS["dma_count"]
    hlo = summary.breakdown("hotspots_hlo")
    assert hlo and hlo.rows[0][1][hlo.column("time")] >= hlo.rows[-1][1][hlo.column("time")]  # s, longest first


def test_union_of_intervals():
    start = np.array([0.0, 5.0, 2.0, 20.0, 21.0])
    duration = np.array([3.0, 5.0, 1.0, 1.0, 5.0])
    assert union(start, duration) == 3 + 5 + 6  # [0,3) [5,10) [20,26)
    assert union(np.array([]), np.array([])) == 0


def test_odd_events_are_ignored_not_fatal(write):
    data = {"summary": [{"total_time": 1e-3, "hbm_read_bytes": 100}],
            "instruction": [{"timestamp": 10, "duration": 5, "label": "Vector", "nki_source_location": None},
                            {"timestamp": -1, "duration": 5, "label": "Vector"},
                            {"timestamp": "12", "duration": 5, "label": "Scalar"},
                            {"label": "Scalar"}, 7],
            "dma": [{"timestamp": 0, "duration": 2, "transfer_size": 1024}]}
    for options in (None, LoadOptions(max_memory=16)):  # decoded whole, and streamed
        [profile] = load_profiles(write("t.json", data), options)
        summary, _ = summarize(profile.trace)
        assert summary.events["instruction"] == 1
        assert [(e.engine, e.rows, e.busy) for e in summary.engines] == [("vector", ("Vector",),
                                                                         pytest.approx(5e-9))]


@pytest.mark.parametrize(("content", "problem"), [
    ('{"summary": [{"total_time": 1}], "instruction": [{"timestamp": 1', "invalid JSON: Input data was truncated"),
    ('{"summary": [{"total_time": 1}], "instruction": [{"timestamp": 1}, {"timestamp": tru}]}',
     r"invalid JSON: JSON is malformed: invalid character \(byte 8\d\)"),  # where either parser stops
    ('{"summary": [{"total_time": 1}], "instruction": [{"timestamp": 1}]} trailing',
     r"invalid JSON: JSON is malformed: trailing characters \(byte 69\)"),
    ('{"summary": [{"total_time": 1}], "instruction": {"not": "a list"}}',
     r"not a Neuron full JSON trace: Expected `array`, got `object` - at `\$\.instruction`"),
    ('{"instruction": [{"timestamp": 1, "duration": 2}]}', "events but no summary metrics"),
    ('{"summary": [{"total_time": 1, "deep": ' + "[" * 100 + "]" * 100 + '}], "dma": [{"timestamp": 1}]}',
     "nested too deeply"),
])
@pytest.mark.parametrize("max_memory", [None, 16])  # decoded whole, and streamed: the same one-line error
def test_malformed_traces(write, content, problem, max_memory):
    options = LoadOptions(max_memory=max_memory) if max_memory else None
    with pytest.raises(AdvisorError, match=problem):
        load_profiles(write("t.json", content), options)


def test_streaming_gives_the_same_trace():
    [whole] = load_profiles(TRACE)
    [streamed] = load_profiles(TRACE, LoadOptions(max_memory=1024))  # budget far below the file: streamed
    assert streamed.values == whole.values
    assert summarize(streamed.trace) == summarize(whole.trace)
    for name, table in whole.trace.tables.items():  # the same columns, value for value
        other = streamed.trace.tables[name]
        for field in ("start", "duration", "bytes"):  # ns, ns, bytes (None: instructions move none)
            assert np.array_equal(getattr(table, field), getattr(other, field)) or getattr(table, field) is None
        for field in ("track", "name"):
            assert getattr(table, field).names == getattr(other, field).names
            assert np.array_equal(getattr(table, field).codes, getattr(other, field).codes)
    assert streamed.trace.extra == whole.trace.extra and streamed.trace.warnings == whole.trace.warnings
    assert streamed.source.shape == ("full trace: 1,270 instructions, 845 DMA transfers; streamed: 1.0 MiB is "
                                     "over half of the --max-memory budget of 1 KiB")


def test_the_streamed_analysis_is_the_in_memory_one_byte_for_byte_but_the_format_row(tmp_path, monkeypatch):
    monkeypatch.setattr("advisor.inputs.limits.MEMORY_MINIMUM", 1)  # a budget under --max-memory's floor
    from advisor.cli import main

    whole, streamed = tmp_path / "whole.json", tmp_path / "streamed.json"
    assert main(["report", str(TRACE), "-o", str(whole), "--quiet"]) == 0
    assert main(["report", str(TRACE), "-o", str(streamed), "--quiet", "--max-memory", "1KiB"]) == 0
    differ = [(a, b) for a, b in zip(whole.read_text().splitlines(), streamed.read_text().splitlines(), strict=True)
              if a != b]
    assert differ == [('    "shape": "full trace: 1,270 instructions, 845 DMA transfers; read whole in memory",',
                       '    "shape": "full trace: 1,270 instructions, 845 DMA transfers; streamed: 1.0 MiB is over '
                       'half of the --max-memory budget of 1 KiB",')]


def test_a_truncated_streamed_trace_is_one_error_line_and_exit_2(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr("advisor.inputs.limits.MEMORY_MINIMUM", 1)  # a budget under --max-memory's floor
    from advisor.cli import main

    cut = tmp_path / "cut.json"
    cut.write_bytes(TRACE.read_bytes()[:700_000])  # inside the dma array
    assert main(["report", str(cut), "-o", str(tmp_path / "r.md"), "--max-memory", "1KiB"]) == 2
    assert capsys.readouterr().err == f"advisor: error: {cut}: invalid JSON: Input data was truncated\n"
    assert not (tmp_path / "r.md").exists()


def test_streaming_reads_pretty_printed_traces_with_odd_strings_alike(write, monkeypatch):
    from advisor.inputs import json_stream

    monkeypatch.setattr(json_stream, "BLOCK", 4096)  # many runs, cut at every kind of boundary
    data = json.loads(TRACE.read_text())
    for i, event in enumerate(data["instruction"][:50]):
        event["hlo_name"] = ['a"},{"b', "c}]", "\\", "x,{y"][i % 4]  # brackets and quotes inside strings
    for indent in (None, 1):
        path = write("t.json", json.dumps(data, indent=indent))
        [whole], [streamed] = load_profiles(path), load_profiles(path, LoadOptions(max_memory=16))
        assert summarize(streamed.trace) == summarize(whole.trace)
        assert streamed.trace.tables["instruction"].name.names == whole.trace.tables["instruction"].name.names


def test_neff_node_sizes_are_read_from_strings(write):
    data = {"summary": [{"total_time": 1e-3, "hbm_read_bytes": 100}],
            "dma": [{"timestamp": 0, "duration": 2, "transfer_size": 1024, "variable": "input0"}],
            "neff_node": [{"variable_name": "input0", "shape": "[1 512]", "size": "1024", "type": "IN"},
                          {"variable_name": "input1", "size": "not a size", "type": "IN"},
                          {"id": 3, "name": "a node that is not a tensor"}]}
    for options in (None, LoadOptions(max_memory=16)):  # decoded whole, and streamed
        [profile] = load_profiles(write("t.json", data), options)
        assert [(t.name, t.kind, t.size) for t in profile.trace.extra["tensors"]] == [("input0", "IN", 1024.0),
                                                                            ("input1", "IN", None)]


def test_odd_supplementary_members_never_sink_the_trace(write):
    data = {"summary": {"total_time": 1e-3, "hbm_read_bytes": 100}, "metadata": {"hbm_ddr_bandwidth": 2e11},
            "warnings": [{"category": None, "message": "m"}, 3],
            "dma": [{"timestamp": 0, "duration": 2, "transfer_size": 1024, "variable": "a"}],
            "neff_node": [7, {"variable_name": "a", "size": 512, "type": "IN"}]}
    whole, streamed = (load_profiles(write("t.json", data), options)[0]
                       for options in (None, LoadOptions(max_memory=16)))
    for profile in (whole, streamed):
        assert [t.name for t in profile.trace.extra["tensors"]] == ["a"] and profile.trace.warnings == ("m",)
        assert profile.trace.metadata == {"hbm_ddr_bandwidth": 2e11}  # an object, not a list: kept by both paths
    data["neff_node"] = {"not": "a list"}
    assert load_profiles(write("u.json", data))[0].trace.extra["tensors"] == ()


def test_a_large_file_without_events_is_read_as_a_summary():
    summary = SAMPLES / "sbuf_spill" / "summary.json"  # {"summary": [...], "instruction": []}
    [streamed] = load_profiles(summary, LoadOptions(max_memory=16))
    assert streamed.trace is None and streamed.values == load_profiles(summary)[0].values


def test_progress_reaches_100_percent_in_both_paths():
    seen: list[str] = []
    load_profiles(TRACE, LoadOptions(progress=seen.append))
    assert seen[0] == "reading 1,270 instructions: 0 %" and seen[-1] == "reading 845 DMA transfers: 100 %"
    assert len(seen) == len(set(seen))  # a line only when the percent changes
    seen.clear()
    load_profiles(TRACE, LoadOptions(max_memory=1024, progress=seen.append))  # streamed: one pass
    assert seen[-1] == "streaming 1 MiB: 100 %" and len(seen) == len(set(seen))


def test_streaming_reports_broken_json_as_one_error(tmp_path):
    path = tmp_path / "t.json"
    path.write_text('{"summary": [{"total_time": 1}], "instruction": [{"timestamp": 1, "duration": ')
    with pytest.raises(AdvisorError, match="invalid JSON"):
        load_profiles(path, LoadOptions(max_memory=16))


@pytest.mark.parametrize("budget", [None, "1KiB"], ids=["in memory", "streamed"])
def test_a_key_given_twice_in_the_summary_is_refused_on_both_paths(tmp_path, capsys, monkeypatch, budget):
    """Issue 33 §12: `total_time` twice in the summary was analysed with the second value (msgspec keeps the last)."""
    monkeypatch.setattr("advisor.inputs.limits.MEMORY_MINIMUM", 1)  # a budget under --max-memory's floor
    from advisor.cli import main

    text = TRACE.read_text()
    at = text.index('"total_time"')
    path = tmp_path / "twice.json"
    path.write_text(text[:at] + '"total_time": 9.0, ' + text[at:])
    options = ["--max-memory", budget] if budget else []
    assert main(["report", str(path), "-o", str(tmp_path / "r.md"), *options]) == 2
    err = capsys.readouterr().err
    assert err == (f'advisor: error: {path}: the key "total_time" appears twice in summary[0]: only one value would '
                   "be read\n")
