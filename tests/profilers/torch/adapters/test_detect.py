"""Recognising Kineto traces by content (plain or gzip, whatever the name), refusing other Chrome traces, and
folders of per-rank traces in rank order."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from tests_support import SAMPLES

from advisor.core.errors import AdvisorError
from advisor.inputs.text import read_head
from advisor.kinds import _head, available
from advisor.profilers.torch.adapters import detect, members

HEAD = 1 << 20
# the real traces (HTA's test data; the generated samples are plain JSON from samples/make_torch_traces.py)
TRACES = sorted(p for p in SAMPLES.glob("torch_*/*.json.gz"))


def claims(path: Path) -> bool:
    return detect(path, read_head(path, HEAD))


def test_the_real_samples_are_seven_traces():
    assert len([p for p in TRACES if "Meta Platforms" in (p.parent / "README.md").read_text()]) == 7


@pytest.mark.parametrize("path", TRACES, ids=lambda p: p.name)
def test_a_real_trace_is_claimed_gzip_or_plain_whatever_its_name(tmp_path, path):
    assert claims(path)
    text = gzip.decompress(path.read_bytes())
    for name in ("trace.json", "trace", "x.pt.trace.json", "trace.txt"):
        (tmp_path / name).write_bytes(text)
        assert claims(tmp_path / name), name


@pytest.mark.parametrize("members_", [
    {"schemaVersion": 1}, {"deviceProperties": []}, {"distributedInfo": {"rank": 0}},
    {"baseTimeNanoseconds": 1700000000000000000}])
def test_a_kineto_member_marks_a_trace(tmp_path, kt, members_):
    path = tmp_path / "t.json"
    path.write_text(json.dumps({**members_, "traceEvents": [kt.event()]}))
    assert claims(path)


@pytest.mark.parametrize("cat", ["cpu_op", "cuda_runtime", "gpu_memcpy", "user_annotation", "mtia_ccp_events", "ac2g"])
def test_a_kineto_category_marks_a_trace_stripped_of_its_members(tmp_path, kt, cat):
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"traceEvents": [kt.event(cat=cat)]}))
    assert claims(path)


@pytest.mark.parametrize("content", [
    '{"traceEvents": []}',  # a Chrome trace with nothing Kineto's: not claimed (it could be any tool's)
    '{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 2}]}',  # `kernel` is anyone's word
    '{"displayTimeUnit": "ns", "metadata": {"highres-ticks": true}, "traceEvents": [{"ph": "X", "cat": "xla"}]}',
    '[{"name": "aten::add", "ph": "X", "ts": 1, "dur": 2, "cat": "cpu_op"}]',  # the legacy profiler's bare list
    '{"schemaVersion": 1, "total_time": 0.5}',  # a marker but no event list
    '{"schemaVersion": 1, "traceEvents": {"ph": "X"}}',  # an event list that is not a list
    '"schemaVersion traceEvents"',
    "",
])
def test_other_json_is_not_claimed(tmp_path, content):
    path = tmp_path / "trace.json"
    path.write_text(content)
    assert not claims(path)
    path.write_bytes(gzip.compress(content.encode()))
    assert not claims(path)


def test_binary_and_broken_gzip_are_not_claimed(tmp_path):
    path = tmp_path / "trace.json.gz"
    path.write_bytes(b"\x1f\x8b" + bytes(300))
    assert not claims(path)
    path.write_bytes(bytes(range(256)) * 4)
    assert not claims(path)


def test_a_sample_folder_is_claimed(tmp_path):
    assert claims(SAMPLES / "torch_sampled_ranks")
    assert not claims(tmp_path)  # empty
    (tmp_path / "notes.json").write_text('{"a": 1}')
    assert not claims(tmp_path)


def _trace(rank: int | None = None, **extra) -> bytes:
    members_ = {"distributedInfo": {"rank": rank, "world_size": 4}} if rank is not None else {}
    return json.dumps({"schemaVersion": 1, **members_, **extra, "traceEvents": [
        {"ph": "X", "cat": "cpu_op", "name": "op", "ts": 1.0, "dur": 1.0, "pid": 1, "tid": 1}]}).encode()


def test_members_are_in_rank_order_from_distributed_info(tmp_path):
    for rank, name in ((10, "a.json"), (2, "b.json.gz"), (0, "c.pt.trace.json")):
        data = _trace(rank)
        (tmp_path / name).write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    (tmp_path / "README.md").write_text("notes")
    (tmp_path / "config.json").write_text('{"lr": 0.1}')  # not a trace, no rank in its name: not a member
    assert members(tmp_path) == [("rank 0", tmp_path / "c.pt.trace.json"), ("rank 2", tmp_path / "b.json.gz"),
                                 ("rank 10", tmp_path / "a.json")]


def test_members_take_the_rank_from_the_file_name_without_distributed_info(tmp_path):
    for name in ("rank10.json", "worker_rank-2.json", "rank_0.pt.trace.json", "other.json"):
        (tmp_path / name).write_bytes(_trace())
    assert members(tmp_path) == [("rank 0", tmp_path / "rank_0.pt.trace.json"),
                                 ("rank 2", tmp_path / "worker_rank-2.json"), ("rank 10", tmp_path / "rank10.json"),
                                 ("other.json", tmp_path / "other.json")]


def test_the_sampled_ranks_are_two_members():
    folder = SAMPLES / "torch_sampled_ranks"
    assert members(folder) == [("rank 0", folder / "rank-0.json.gz"), ("rank 1", folder / "rank-1.json.gz")]
    assert members(folder / "rank-0.json.gz") is None  # a file has no members


def test_a_rank_twice_is_an_error_naming_both(tmp_path):
    (tmp_path / "a.json").write_bytes(_trace(3))
    (tmp_path / "b.json").write_bytes(_trace(3))
    with pytest.raises(AdvisorError, match=r"rank 3 twice: a\.json and b\.json"):
        members(tmp_path)


def test_a_broken_file_named_for_a_rank_is_an_error(tmp_path):
    (tmp_path / "rank0.json").write_bytes(_trace())
    (tmp_path / "rank1.json").write_bytes(b"")  # a failed capture
    with pytest.raises(AdvisorError, match=r"rank1.json: not a Kineto trace, though named for a rank; 1 of 2"):
        members(tmp_path)


def test_too_many_rank_files_are_refused_before_any_is_read(tmp_path):
    for i in range(5):
        (tmp_path / f"rank{i}.json").write_bytes(b"")
    with pytest.raises(AdvisorError, match="5 rank files, more than the limit of 4"):
        members(tmp_path, 4)


def test_only_traces_count_towards_the_rank_limit(tmp_path, write, kt):
    for i in range(12):  # JSON files that are no trace and not named for a rank: not rank files
        (tmp_path / f"notes{i}.json").write_text("{}")
    write(kt.trace([kt.event()]), "rank0.json")
    assert [name for name, _ in members(tmp_path, 4)] == ["rank 0"]
    for i in range(1, 7):
        write(kt.trace([kt.event()]), f"rank{i}.json")
    with pytest.raises(AdvisorError, match=r"^.*: at least 5 rank files, more than the limit of 4 in one folder"):
        members(tmp_path, 4)  # counting stops past the limit


# moved from tests/kinds/test_detection.py: the kind's own claim belongs to the kind's tests
KINETO = {
    "kineto.json": json.dumps({"schemaVersion": 1, "traceEvents": [{"ph": "X", "cat": "kernel", "name": "k",
                                                                     "ts": 1.0, "dur": 2.0}]}),
    "filtered.json": json.dumps({"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 1.0,
                                                  "dur": 2.0}]}),
}


@pytest.mark.parametrize("name", sorted(KINETO))
@pytest.mark.parametrize("gz", [False, True])
def test_a_minimal_kineto_trace_is_claimed_by_torch_alone(tmp_path, name, gz):
    path = tmp_path / (name + (".gz" if gz else ""))
    path.write_bytes(gzip.compress(KINETO[name].encode()) if gz else KINETO[name].encode())
    claimed = [k.name for k in available() if k.adapters().detect(path, _head(path))]
    assert claimed == ["torch"]  # and by no other kind
