"""Issue 33 §2-§6: a Kineto trace is read one way at any --max-memory, and that way is bounded: nesting refused
before anything is built, columns held to their share of the budget, a gzip trace to its inflated cap, a key
written twice refused, only true top-level members read, and the values Python's json.dump writes that msgspec
refuses (NaN, Infinity, lone surrogates) costing only themselves."""

from __future__ import annotations

import gzip
import json
import tracemalloc

import numpy as np
import pytest
from tests_support import SAMPLES, SHARED_REFERENCE

from advisor.core.errors import AdvisorError
from advisor.inputs import limits
from advisor.kinds.base import LoadOptions
from advisor.profilers.torch import tables as T
from advisor.profilers.torch.adapters import load

BUDGETS = {"2 GiB": 2 << 30, "64 B": 64}


def _load(path, max_memory=2 << 30):
    return load(path, LoadOptions(max_memory=max_memory))[0]


def _refusal(path, max_memory=2 << 30) -> str:
    with pytest.raises(AdvisorError) as caught:
        _load(path, max_memory)
    assert "\n" not in str(caught.value)
    return caught.value.problem


@pytest.mark.parametrize("levels", [100, 30_000, 100_000])
def test_deep_nesting_before_the_events_is_refused_alike_at_any_budget_in_little_memory(write, kt, levels):
    head = b'{"schemaVersion": 1, "x": ' + b"[" * levels + b"]" * levels + b', "traceEvents": '
    path = write(head + json.dumps([kt.event(), kt.event(ts=20.0)]).encode() + b"}")
    outcomes = []
    for budget in BUDGETS.values():
        tracemalloc.start()
        try:
            outcomes.append(len(_load(path, budget).trace.tables[T.KERNEL]))
        except AdvisorError as exc:
            outcomes.append(exc.problem)
        finally:
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
        assert peak < 64 << 20  # ijson's prefixes were quadratic in depth: 2.23 GB at 30,000 levels
    assert outcomes[0] == outcomes[1]
    if levels > 1000:
        assert "nested too deeply" in outcomes[0]
    else:
        assert outcomes[0] == 2


def test_a_kept_member_nested_past_64_levels_is_refused_at_any_budget(write, kt):
    deep = json.loads("[" * 80 + "]" * 80)
    path = write(kt.trace([kt.event()], distributedInfo={"rank": 0, "x": deep}))
    for budget in BUDGETS.values():
        assert "past the nesting-depth limit of 64 levels" in _refusal(path, budget)


def test_columns_are_held_to_their_share_of_the_budget_and_the_advice_is_true(write, kt, monkeypatch):
    monkeypatch.setattr(limits, "COLUMN_FLOOR", 1 << 20)
    events = [kt.event(cat="cpu_op", ts=float(i), dur=1.0) for i in range(60_000)]  # 10 columns: 3.7 MiB
    path = write(kt.trace(events))
    said = _refusal(path, 8 << 20)  # columns may take 2 MiB
    assert said.startswith("the trace's events need more memory than --max-memory allows: the ")
    assert "of columns, over the 2 MiB they may take" in said and said.endswith("raise it with --max-memory SIZE")
    assert "smaller --max-memory" not in said
    assert len(_load(path, 64 << 20).trace.tables[T.CPU_OP]) == 60_000  # within a larger budget


def test_out_of_memory_advice_is_true_for_every_kind(capsys, monkeypatch):
    from advisor.cli import _exit_code

    assert _exit_code(MemoryError(), False, "t.json") == 2
    said = capsys.readouterr().err
    assert said.startswith("advisor: error: t.json: out of memory") and "streams large traces" not in said
    assert said.count("\n") == 1


def test_a_gzip_trace_is_refused_past_its_inflated_cap_while_inflating(write, kt, monkeypatch):
    monkeypatch.setattr(limits, "INFLATED_FLOOR", 1 << 20)
    text = json.dumps(kt.trace([kt.event()])).encode()
    bomb = write(gzip.compress(text[:-2] + b" " * (8 << 20) + text[-2:], 1), "bomb.json.gz")  # 8 MiB of spaces
    assert bomb.stat().st_size < 64 << 10
    said = _refusal(bomb, 1 << 20)
    assert said == ("the gzip trace inflates to more than 1 MiB, the most read of one trace (set by --max-memory; "
                    "raise it with --max-memory SIZE)")
    assert len(_load(bomb, 16 << 20).trace.tables[T.KERNEL]) == 1  # the same file within a larger cap


@pytest.mark.hang_guard
def test_whitespace_is_skipped_at_c_speed(write, kt):
    """Gigabytes of spaces used to be skipped a byte at a time in Python: 64 MiB of them must not be."""
    import time

    text = json.dumps(kt.trace([kt.event()])).encode() + b" " * (64 << 20)
    path = write(text)
    started = time.process_time()
    assert len(_load(path).trace.tables[T.KERNEL]) == 1
    assert time.process_time() - started < 120  # a hang guard, generous: it takes well under a second


@pytest.mark.parametrize("key", ["traceEvents", "deviceProperties", "x"])
def test_a_top_level_key_written_twice_is_refused(write, kt, key):
    first = json.dumps(kt.trace([kt.event()]))[:-1]
    value = json.dumps([kt.event(ts=30.0)]) if key == "traceEvents" else "[]"
    again = f'{first}, "{key}": {value}}}' if key == "traceEvents" else f'{first}, "{key}": 1, "{key}": 2}}'
    for budget in BUDGETS.values():
        said = _refusal(write(again), budget)
        assert said.startswith(f"the top-level member '{key}' is written twice (the second at byte ")


def test_only_true_top_level_members_are_read(write, kt):
    inner = kt.event(args={"distributedInfo": {"rank": 77, "world_size": 1000}})
    trace = kt.trace([kt.event(), inner], traceName="t")
    trace["traceEvents"].append({"ph": "i", "name": "x", "args": {"baseTimeNanoseconds": 5, "traceName": "y"}})
    profile = _load(write(trace))
    assert profile.trace.metadata.get(T.META_RANK) is None  # the event's args are not the trace's members
    far = {"schemaVersion": 1, "big": "z" * (3 << 20), "distributedInfo": {"rank": 5, "world_size": 8},
           "traceEvents": [kt.event()]}  # a member more than 1 MiB before the events still counts
    for budget in BUDGETS.values():
        assert _load(write(far, "far.json"), budget).trace.metadata[T.META_RANK] == 5


@pytest.mark.parametrize("budget", BUDGETS.values(), ids=BUDGETS.keys())
def test_what_json_dump_writes_costs_the_value_not_the_trace(write, kt, budget):
    events = [kt.event(ts=10.0), kt.event(ts=11.0, dur=float("nan")), kt.event(ts=12.0, dur=float("inf")),
              kt.event(ts=13.0, dur=-float("inf")), kt.event(ts=14.0, name="bad \ud800 name"),
              kt.event(ts=15.0, dur=1e308), kt.event(ts=16.0, name="NaN \\ud800 Infinity")]
    text = json.dumps(kt.trace(events, deviceProperties=[{"totalMemory": float("nan"), "name": "A100"}]))
    assert "NaN" in text and "Infinity" in text and "\\ud800" in text
    text = text.replace('"dur": 2.0,', '"dur": 1e400,', 1)  # the first event: past float range
    profile = _load(write(text), budget)
    kernels = profile.trace.tables[T.KERNEL]
    names = [kernels.name.names[int(c)] for c in kernels.name.codes]
    assert names == ["bad \ufffd name", "NaN \\ud800 Infinity"]  # an escaped backslash is text, kept as it is
    assert np.all(np.isfinite(kernels.duration))
    assert profile.trace.extra["skipped"][T.KERNEL] == 5  # 1e400, NaN, Infinity, -Infinity, 1e308: no usable time


def test_invalid_json_is_still_refused_with_msgspecs_words_and_the_byte(write, kt):
    text = json.dumps(kt.trace([kt.event(), kt.event()])).replace('"dur": 2.0', '"dur": NaNx', 1)
    said = _refusal(write(text))
    assert said.startswith("invalid JSON: JSON is malformed: invalid character (byte ")


REAL_TRACES = sorted({*SAMPLES.glob("torch_*/**/*.json.gz"), *SHARED_REFERENCE.glob("torch-traces/**/*.json.gz")})


@pytest.mark.skipif(not SHARED_REFERENCE.is_dir(), reason="../shared/reference is not beside the project")
def test_every_real_trace_gives_the_same_analysis_at_any_budget_and_run_size(monkeypatch):
    """Every torch sample and every shared real trace: the analysis JSON at the default budget equals the one read
    in 4 KiB windows at the smallest budget (runs cut at other events, members split across windows)."""
    from advisor.api import AnalyzeOptions, analyze
    from advisor.core.serialize import to_dict
    from advisor.inputs import json_stream

    assert len(REAL_TRACES) >= 20
    for path in REAL_TRACES:
        wide = to_dict(analyze(path, AnalyzeOptions(load=LoadOptions(max_memory=2 << 30))))
        with monkeypatch.context() as patch:
            patch.setattr(json_stream, "BLOCK", 4096)
            narrow = to_dict(analyze(path, AnalyzeOptions(load=LoadOptions(max_memory=64 << 20))))
        assert json.dumps(wide, sort_keys=True) == json.dumps(narrow, sort_keys=True), path
