"""Recognising RBLN Perfetto traces by content, and folders of per-rank traces."""

from __future__ import annotations

import gzip
import random
from pathlib import Path

import pytest
from tests_support import SAMPLES

from advisor.inputs.text import read_head
from advisor.profilers.rbln.adapters import detect, members

HEAD = 1 << 20


def claims(path: Path) -> bool:
    return detect(path, read_head(path, HEAD))


def test_a_trace_is_claimed_whatever_its_name(tmp_path, reference_trace):
    data = reference_trace().bytes()
    for name in ("trace.pb", "trace.pftrace", "trace", "rbln_20261123_101500_0.pb", "trace.bin"):
        (tmp_path / name).write_bytes(data)
        assert claims(tmp_path / name), name
    (tmp_path / "trace.pb.gz").write_bytes(gzip.compress(data))
    assert claims(tmp_path / "trace.pb.gz")


@pytest.mark.parametrize("content", [
    b'{"traceEvents": [{"name": "x", "ph": "X", "ts": 1, "dur": 2}]}',  # a JSON trace renamed .pb
    b"\n{\n  \"summary\": []\n}\n",  # JSON after a newline (0x0A, the packet key)
    b"ID,Kernel Name,Metric Name,Metric Value\n1,gemm,dram__bytes,100\n",
    b"\n\n==PROF== Connected to process 1\n",
    b"NVR\x00" + bytes(200),  # an Nsight Compute report
    b"\x08\x01\x12\x04node",  # another protobuf (a TF SavedModel starts with field 1, varint)
    b"\x0a\x05abc",  # one packet, cut
    b"",
])
def test_other_files_are_not_claimed(tmp_path, content):
    path = tmp_path / "input.pb"
    path.write_bytes(content)
    assert not claims(path)


def test_random_bytes_are_not_claimed(tmp_path):
    rng = random.Random(13)
    path = tmp_path / "random.pb"
    for _ in range(300):
        data = bytearray(rng.randbytes(rng.choice((16, 300, 4096))))
        data[0] = 0x0A  # even starting like a packet
        path.write_bytes(bytes(data))
        assert not claims(path)


def test_other_kinds_captures_are_not_claimed(tmp_path, reference_trace):
    path = tmp_path / "profile.ntff"  # Neuron's binary capture: its kind reads it by name
    path.write_bytes(reference_trace().bytes())
    assert not claims(path)
    others = [p for p in SAMPLES.rglob("*") if p.is_file() and p.suffix in (".json", ".txt", ".csv", ".parquet")]
    assert others
    for other in others:
        assert not claims(other), other


def test_other_kinds_do_not_claim_a_trace(tmp_path, reference_trace):
    from advisor.profilers.ncu.adapters import detect as ncu_detect
    from advisor.profilers.neuron.adapters import detect as neuron_detect

    path = reference_trace().write(tmp_path / "trace.pb")
    head = read_head(path, HEAD)
    assert not neuron_detect(path, head) and not ncu_detect(path, head)


def test_folder_of_rank_traces(tmp_path, reference_trace):
    data = reference_trace().bytes()
    for name in ("rank10.pb", "rank2.pb", "rank1.pftrace", "rank0.pb.gz"):
        (tmp_path / name).write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    (tmp_path / "notes.txt").write_text("a note")
    (tmp_path / "sub").mkdir()
    assert detect(tmp_path, b"")
    assert [name for name, _ in members(tmp_path)] == ["rank0.pb.gz", "rank1.pftrace", "rank2.pb", "rank10.pb"]
    assert members(tmp_path / "rank2.pb") is None


def test_folders_without_traces_are_not_claimed(tmp_path):
    (tmp_path / "summary.json").write_text("{}")
    assert not detect(tmp_path, b"") and members(tmp_path) == []
    (tmp_path / "saved_model.pb").write_bytes(b"\x08\x01\x12\x04node")  # a .pb that is not a trace
    assert not detect(tmp_path, b"")


def test_the_samples_are_claimed():
    traces = sorted(SAMPLES.glob("rbln_*/*.pb"))
    if not traces:
        pytest.skip("no RBLN samples generated")
    for path in traces:
        assert claims(path), path
    ranks = SAMPLES / "rbln_ranks"
    if ranks.is_dir():
        assert detect(ranks, b"")
        assert [name for name, _ in members(ranks)] == sorted(p.name for p in ranks.glob("*.pb"))


def test_a_trace_with_garbage_after_its_packets_is_claimed(tmp_path, reference_trace):
    """Read up to the garbage, with a note (not refused as an unknown format)."""
    path = tmp_path / "damaged.pb"
    path.write_bytes(reference_trace().bytes() + b"\x0f\xff\x00garbage")
    assert claims(path)
