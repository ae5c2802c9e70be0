"""Odd and broken Kineto files: a bad file is one AdvisorError line, an odd event is left out and counted (or its
odd value unavailable), and nothing raises anything else — at any --max-memory."""

from __future__ import annotations

import gzip
import json

import numpy as np
import pytest

from advisor.core.errors import AdvisorError
from advisor.kinds.base import LoadOptions
from advisor.profilers.torch import tables as T
from advisor.profilers.torch.adapters import load

MODES = {"memory": LoadOptions(), "streamed": LoadOptions(max_memory=64)}  # one pass either way: two budgets


def read(path, mode="memory"):
    return load(path, MODES[mode])[0]


def error(path, mode="memory") -> str:
    with pytest.raises(AdvisorError) as caught:
        load(path, MODES[mode])
    text = str(caught.value)
    assert "\n" not in text and "Traceback" not in text
    return text


@pytest.mark.parametrize("mode", MODES)
def test_a_truncated_or_corrupt_gzip_is_one_line(write, kt, mode):
    data = json.dumps(kt.trace([kt.event(ts=float(i)) for i in range(2000)])).encode()
    packed = gzip.compress(data)
    assert "truncated gzip file" in error(write(packed[:len(packed) // 2], "t.json.gz"), mode)
    broken = bytearray(packed)
    broken[len(broken) // 2:len(broken) // 2 + 64] = bytes(64)
    assert "gzip" in error(write(bytes(broken), "b.json.gz"), mode)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("content", "says"), [
    ('[{"ph": "X", "cat": "cpu_op", "name": "a", "ts": 1, "dur": 1}]', "not a Kineto trace"),
    ('{"schemaVersion": 1, "traceEvents": {"ph": "X"}}', "traceEvents is not a list"),
    ('{"schemaVersion": 1, "traceEvents": 7}', "traceEvents is not a list"),
    ('{"schemaVersion": 1}', "no traceEvents"),
    ('{"schemaVersion": 1, "traceEvents": [', "invalid JSON"),
    ('{"schemaVersion": 1, "traceEvents": []}', "without usable complete events"),
    ('{"traceEvents": [{"ph": "B", "cat": "cpu_op", "name": "a", "ts": 1}]}', "without usable complete events"),
])
def test_a_file_that_is_not_a_trace_is_one_line(write, mode, content, says):
    assert says in error(write(content), mode)


def test_empty_files_are_one_line(write):
    assert "file is empty" in error(write(""))
    assert "holds no text" in error(write(b"", "e.json.gz", gz=True))


@pytest.mark.parametrize("mode", MODES)
def test_events_without_a_usable_time_are_left_out_and_counted(write, kt, mode):
    events = [kt.event(ts=100.0, dur=5.0), kt.event(ts="abc"), kt.event(ts=None), kt.event(dur=-1.0),
              kt.event(ts=1e300), kt.event(dur=1e200), kt.event(ts=-5.0), kt.event(ts=[1]),
              kt.event(ts="102.5", dur="1.5"),  # a number written as text is read as the number
              kt.event(cat="cpu_op", ts=101.0)]
    profile = read(write(kt.trace(events)), mode)
    kernels = profile.trace.tables[T.KERNEL]
    assert kernels.start.tolist() == [0.0, 2500.0] and kernels.duration.tolist() == [5000.0, 1500.0]
    assert profile.trace.extra["skipped"][T.KERNEL] == 7
    assert any(w.startswith("7 kernel events without a usable ts or dur") for w in profile.trace.warnings)


@pytest.mark.parametrize("mode", MODES)
def test_out_of_range_numbers_are_skipped_at_any_budget(write, kt, mode):
    text = json.dumps(kt.trace([kt.event(ts=10.0), kt.event(ts=11.0), kt.event(ts=12.0, dur=3.0)]))
    text = text.replace('"ts": 11.0', '"ts": 1e400').replace('"dur": 3.0', '"dur": 123456789012345678901234567890')
    profile = read(write(text), mode)
    assert len(profile.trace.tables[T.KERNEL]) == 1 and profile.trace.extra["skipped"][T.KERNEL] == 2


@pytest.mark.parametrize("mode", MODES)
def test_entries_that_are_not_events_are_counted(write, kt, mode):
    events = [kt.event(), 3, "x", None, [1, 2], {"ph": 1, "cat": "kernel"}, {"ph": "X", "cat": ["kernel"]},
              {"ph": "X", "cat": "kernel", "name": 5, "ts": 1, "dur": 1}]
    profile = read(write(kt.trace(events)), mode)
    assert len(profile.trace.tables[T.KERNEL]) == 1 and profile.trace.extra["malformed"] == 7
    assert "7 entries of traceEvents are not Kineto events" in profile.trace.warnings[0]


@pytest.mark.parametrize("mode", MODES)
def test_odd_args_cost_the_value_not_the_event(write, kt, mode):
    events = [
        kt.event(args=[1, 2]), kt.event(args="x"), kt.event(args=None),
        kt.event(args={"device": "0x1", "stream": "stream 9", "grid": [4, 2], "block": [[1]], "correlation": True,
                       "registers per thread": "many", "est. achieved occupancy %": 250,
                       "Collective name": 7, "In msg nelems": "10", "dtype": "Half", "Group size": -3}),
        kt.event(args={"device": {"a": 1}, "stream": 1e30, "grid": {"x": 1}, "est. achieved occupancy %": "50"}),
    ]
    k = read(write(kt.trace(events)), mode).trace.tables[T.KERNEL]
    assert len(k) == 5
    assert k.extra[T.DEVICE].tolist() == [0, 0, 0, 1, 0]  # "0x1"; the others from pid 0
    assert k.extra[T.STREAM].tolist() == [7, 7, 7, 9, 7]  # "stream 9"; the others from tid 7 (1e30: not an id)
    assert [k.extra[T.GRID].value(i) for i in range(5)] == ["", "", "", "4,2", ""]
    assert [k.extra[T.BLOCK].value(i) for i in range(5)] == ["", "", "", "", ""]
    assert np.isnan(k.extra[T.REGISTERS]).all()
    assert np.isnan(k.extra[T.OCCUPANCY][3]) and k.extra[T.OCCUPANCY][4] == 0.5  # 250 % is no occupancy
    assert k.extra[T.COLLECTIVE].value(3) == "" and k.extra[T.MESSAGE_BYTES][3] == 20  # 10 Half elements
    assert np.isnan(k.extra[T.GROUP_SIZE]).all()


@pytest.mark.parametrize("mode", MODES)
def test_many_categories_are_counted_within_a_bound(write, kt, mode):
    events = [kt.event(cat=f"cat{i}") for i in range(300)] + [kt.event()]
    other = read(write(kt.trace(events)), mode).trace.extra["other"]
    assert len(other) <= 64 and sum(other.values()) == 300


def test_a_name_past_the_string_limit_is_refused(write, kt):
    assert "string-length limit" in error(write(kt.trace([kt.event(name="k" * (1 << 20 + 1))])))


def test_deep_nesting_is_one_line_or_a_lost_value(write, kt):
    deep = "[" * 100_000 + "]" * 100_000
    text = json.dumps(kt.trace([kt.event(), kt.event()])).replace('"args": {}', f'"args": {{"device": {deep}}}', 1)
    try:
        profile = read(write(text))
    except AdvisorError as exc:
        assert "nested too deeply" in str(exc) or "invalid JSON" in str(exc)
    else:
        assert len(profile.trace.tables[T.KERNEL]) + profile.trace.extra["malformed"] == 2
    text = json.dumps({"schemaVersion": 1, "distributedInfo": json.loads("[" * 200 + "]" * 200),
                       "traceEvents": [kt.event()]})
    assert "nested too deeply" in error(write(text, "d.json"))


def test_concatenated_gzip_members_are_one_file(write, kt):
    data = json.dumps(kt.trace([kt.event(), kt.event(ts=20.0)])).encode()
    path = write(gzip.compress(data[:40]) + gzip.compress(data[40:]), "c.json.gz")
    assert len(read(path).trace.tables[T.KERNEL]) == 2


def test_odd_metadata_is_left_out(write, kt):
    members = {"deviceProperties": "x", "distributedInfo": {"rank": -1, "world_size": "many", "backend": 3},
               "baseTimeNanoseconds": "soon", "traceName": ["a"]}
    trace = read(write(kt.trace([kt.event()], **members), "rank-7.json")).trace
    # no vendor (no runtime call, no device name), the rank from the file name, the time base from the ts alone
    assert trace.metadata == {T.META_RANK: 7, T.META_RANK_SOURCE: "file name", T.META_TIME_BASE: 10_000}


def test_the_command_line_says_one_line(tmp_path, capsys, kt):
    from tests_support import one_line_error

    path = tmp_path / "rank0.pt.trace.json.gz"
    path.write_bytes(gzip.compress(json.dumps(kt.trace([kt.event(ts=float(i)) for i in range(3000)])).encode())[:-40])
    assert "truncated gzip file" in one_line_error(capsys, path)
    path = tmp_path / "bad.json"
    path.write_text('{"schemaVersion": 1, "traceEvents": [{"ph": "X", "cat": "cpu_op", "ts": 1, "dur": ')
    assert "invalid JSON" in one_line_error(capsys, path)
