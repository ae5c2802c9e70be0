"""Fixtures for the Kineto reader's tests: `write` (a trace written to a file, plain or gzip) and `kt` (building
events and traces, the real traces of samples/torch_*, and `kt.same(a, b)`: two read traces equal table by table,
value by value)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from tests_support import SAMPLES

from advisor.core.events import Codes, EventTrace

REAL = {
    "a100_ddp": SAMPLES / "torch_a100_ddp" / "a100_ddp_rank0_of2.json.gz",
    "amd_mi250": SAMPLES / "torch_amd_mi250" / "amd_mi250_minitoy_train.json.gz",
    "mtia": SAMPLES / "torch_mtia_inference" / "mtia_inference_rank0.json.gz",
    "a100_cold_start": SAMPLES / "torch_a100_cold_start" / "a100_alexnet_cold_start.json.gz",
    "cpu_only": SAMPLES / "torch_cpu_only" / "cpu_only_rank34.pt.trace.json.gz",
    "rank0": SAMPLES / "torch_sampled_ranks" / "rank-0.json.gz",
    "rank1": SAMPLES / "torch_sampled_ranks" / "rank-1.json.gz",
}


def event(cat: str = "kernel", name: str = "k", ts: Any = 10.0, dur: Any = 2.0, ph: str = "X", **args: Any) -> dict:
    """One complete event; args as keyword arguments (spaces as underscores are not translated: pass a dict
    through `args=` for Kineto's spaced names)."""
    out: dict[str, Any] = {"ph": ph, "cat": cat, "name": name, "pid": 0, "tid": 7, "ts": ts, "dur": dur}
    out["args"] = args.pop("args", None) or dict(args)
    return out


def kineto(events: list, **members: Any) -> dict:
    return {"schemaVersion": 1, **members, "traceEvents": events}


@pytest.fixture
def write(tmp_path: Path):
    """write(obj_or_text, name="trace.json", gz=False) -> path."""

    def _write(content: Any, name: str = "trace.json", gz: bool = False) -> Path:
        data = content if isinstance(content, bytes) else (
            content if isinstance(content, str) else json.dumps(content)).encode()
        path = tmp_path / name
        path.write_bytes(gzip.compress(data) if gz else data)
        return path

    return _write


def _texts(codes: Codes) -> list[str]:
    return [codes.names[int(c)] for c in codes.codes]


def assert_same_trace(a: EventTrace, b: EventTrace) -> None:
    assert a.metadata == b.metadata
    assert a.warnings == b.warnings
    assert dict(a.extra) == dict(b.extra)
    assert list(a.tables) == list(b.tables)
    for name in a.tables:
        x, y = a.tables[name], b.tables[name]
        np.testing.assert_array_equal(x.start, y.start)
        np.testing.assert_array_equal(x.duration, y.duration)
        assert _texts(x.name) == _texts(y.name) and _texts(x.track) == _texts(y.track)
        assert (x.bytes is None) == (y.bytes is None)
        if x.bytes is not None:
            np.testing.assert_array_equal(x.bytes, y.bytes)
        assert list(x.extra) == list(y.extra)
        for column in x.extra:
            u, v = x.extra[column], y.extra[column]
            if isinstance(u, Codes):
                assert _texts(u) == _texts(v), (name, column)
            else:
                np.testing.assert_array_equal(u, v, err_msg=f"{name}.{column}")


@pytest.fixture
def kt() -> SimpleNamespace:
    return SimpleNamespace(event=event, trace=kineto, real=REAL, same=assert_same_trace)
