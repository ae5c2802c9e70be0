"""JSON arrays of event objects into compact columns (inputs/json_events.py), for any kind's fields: text
fields become codes, numbers float64 columns; an odd event keeps what it can; the streamed and the
whole-file ways give the same columns. The fields here are Chrome-trace-like, not any kind's."""

from __future__ import annotations

import json

import msgspec
import pytest

from advisor.core.errors import AdvisorError
from advisor.inputs import json_events, json_stream
from advisor.inputs.json_events import Percent, array_columns, check_strings, stream_columns
from advisor.inputs.json_stream import Reader, members, skip


class Event(msgspec.Struct, gc=False):
    ts: float = -1  # µs in a Chrome trace; a number column whatever its unit
    dur: float = -1
    name: str = ""
    cat: str = ""


class Trace(msgspec.Struct):
    traceEvents: msgspec.Raw = msgspec.Raw(b"[]")  # the format's own member name


EVENTS = [{"ts": 1.5, "dur": 2, "name": "gemm", "cat": "kernel", "args": {"stream": 7}},
          {"name": "cudaLaunchKernel", "ts": 0, "dur": 1.25, "cat": "cuda_runtime"},
          {"ts": 5, "dur": 3, "name": "gemm", "cat": "kernel"}]


def as_lists(columns: dict) -> dict:
    out = {}
    for key, column in columns.items():
        names = getattr(column, "names", None)
        out[key] = [names[c] for c in column.codes.tolist()] if names is not None else column.tolist()
    return out


def test_an_array_member_becomes_columns_with_texts_coded_once():
    raw = msgspec.json.decode(json.dumps({"traceEvents": EVENTS}).encode(), type=Trace).traceEvents
    seen: list[str] = []
    columns = array_columns(raw, "traceEvents", Event, "events", seen.append)
    assert as_lists(columns) == {"ts": [1.5, 0.0, 5.0], "dur": [2.0, 1.25, 3.0],  # µs, as written
                                 "name": ["gemm", "cudaLaunchKernel", "gemm"],
                                 "cat": ["kernel", "cuda_runtime", "kernel"]}
    assert columns["name"].names == ("gemm", "cudaLaunchKernel")  # each distinct text stored once
    assert seen[0] == "reading 3 events: 0 %" and seen[-1] == "reading 3 events: 100 %"


def test_an_odd_event_keeps_its_good_fields_and_defaults_the_rest():
    odd = [{"ts": "soon", "dur": None, "name": 5, "cat": "kernel"}, {"ts": True, "dur": 4}, "not an object"]
    raw = msgspec.Raw(json.dumps(EVENTS[:1] + odd).encode())
    columns = as_lists(array_columns(raw, "traceEvents", Event, "events", None))
    assert columns["ts"] == [1.5, -1.0, -1.0, -1.0]  # -1: absent (a bool is not a time)
    assert columns["dur"] == [2.0, -1.0, 4.0, -1.0]
    assert columns["name"] == ["gemm", "", "", ""] and columns["cat"] == ["kernel", "kernel", "", ""]


def test_a_member_that_is_not_an_array_is_named():
    with pytest.raises(msgspec.ValidationError, match=r"\$\.traceEvents"):
        array_columns(msgspec.Raw(b'{"a": 1}'), "traceEvents", Event, "events", None)


def test_streamed_events_give_the_same_columns(tmp_path, monkeypatch):
    monkeypatch.setattr(json_stream, "BLOCK", 4096)  # many runs of whole events
    odd = [{"ts": "soon", "dur": None, "name": 5, "cat": "kernel"}, "not an object"]
    path = tmp_path / "trace.json"
    path.write_text(json.dumps({"otherData": {"a": [1]}, "traceEvents": (EVENTS + odd) * 500}))
    read: list[int] = []
    with path.open("rb") as handle:
        reader = Reader(handle, 1 << 20, read.append)
        for key in members(reader):
            streamed = stream_columns(reader, key, Event) if key == "traceEvents" else skip(reader)
    raw = msgspec.json.decode(path.read_bytes(), type=Trace).traceEvents
    whole = array_columns(raw, "traceEvents", Event, "events", None)
    assert as_lists(streamed) == as_lists(whole) and len(streamed["ts"]) == 2_500
    assert read[-1] == path.stat().st_size  # bytes read so far, up to the whole file


def test_a_streamed_member_that_is_not_an_array_is_named(tmp_path):
    path = tmp_path / "trace.json"
    path.write_text('{"traceEvents": {"a": 1}}')
    with path.open("rb") as handle, pytest.raises(msgspec.ValidationError, match=r"`object` - at `\$\.traceEvents`"):
        reader = Reader(handle, 1 << 20)
        for key in members(reader):
            stream_columns(reader, key, Event)


def test_an_event_text_past_the_string_limit_is_refused(monkeypatch):
    monkeypatch.setattr(json_events, "MAX_STRING_CHARS", 10)
    columns = array_columns(msgspec.Raw(json.dumps([{"name": "x" * 11}]).encode()), "e", Event, "events", None)
    with pytest.raises(AdvisorError, match="an event's name of 11 characters"):
        check_strings("t.json", columns)


def test_progress_is_printed_only_when_the_percent_changes():
    seen: list[str] = []
    percent = Percent(seen.append, "reading")
    for done in (0, 1, 100, 101, 200):
        percent(done, 200)
    assert seen == ["reading: 0 %", "reading: 50 %", "reading: 100 %"]
    Percent(None, "quiet")(1, 2)  # no progress wanted: nothing happens
