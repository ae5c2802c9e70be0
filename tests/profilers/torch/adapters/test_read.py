"""Reading the real Kineto traces (samples/torch_*): every complete event of a table's categories in its table,
times in ns from the trace start with their ns fractions, the metadata the trace gives, and the same tables
whether the file is gzip or plain, whatever the budget and the runs it is read in."""

from __future__ import annotations

import gzip
import json
import math
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from tests_support import SAMPLES

from advisor.inputs import json_stream
from advisor.kinds.base import LoadOptions
from advisor.profilers.torch import tables as T
from advisor.profilers.torch.adapters import load

REAL = sorted(SAMPLES.glob("torch_*/*.json.gz"))
# Kineto's categories by table, written out here independently of the reader's kineto.yaml
TABLE_OF = {"kernel": T.KERNEL, "mtia_ccp_events": T.KERNEL, "gpu_memcpy": T.MEMCPY, "gpu_memset": T.MEMSET,
            "cuda_runtime": T.RUNTIME, "cuda_driver": T.RUNTIME, "mtia_runtime": T.RUNTIME, "cpu_op": T.CPU_OP,
            "user_annotation": T.ANNOTATION, "gpu_user_annotation": T.GPU_ANNOTATION, "cuda_sync": T.SYNC}


def read(path: Path, **options):
    return load(path, LoadOptions(**options))[0]


def events(path: Path) -> list[dict]:
    return json.loads(gzip.decompress(path.read_bytes()))["traceEvents"]


def names(codes) -> list[str]:
    return [codes.names[int(c)] for c in codes.codes]


@pytest.mark.parametrize("path", REAL, ids=lambda p: p.name)
def test_each_table_holds_every_complete_event_of_its_categories(path):
    expected = Counter(TABLE_OF[e["cat"]] for e in events(path) if e.get("ph") == "X" and e.get("cat") in TABLE_OF)
    trace = read(path).trace
    assert {name: len(table) for name, table in trace.tables.items() if len(table)} == dict(expected)
    assert set(trace.tables) == set(TABLE_OF.values())  # every table present, empty or not
    assert sum(trace.extra["skipped"].values()) == 0 and trace.extra["malformed"] == 0


@pytest.mark.parametrize("path", REAL, ids=lambda p: p.name)
def test_times_are_ns_from_the_earliest_event_at_the_files_resolution(path):
    tabled = [e for e in events(path) if e.get("ph") == "X" and e.get("cat") in TABLE_OF]
    t0 = min(e["ts"] for e in tabled)
    profile = read(path)
    for table in set(TABLE_OF.values()):
        mine = [e for e in tabled if TABLE_OF[e["cat"]] == table]
        got = profile.trace.tables[table]
        assert got.start.tolist() == [(e["ts"] - t0) * 1e3 for e in mine]  # file order, no rounding
        assert got.duration.tolist() == [e["dur"] * 1e3 for e in mine]
        assert names(got.name) == [e["name"] for e in mine]
    end = max(e["ts"] + e["dur"] for e in tabled)
    assert profile.values["total_time"] == pytest.approx((end - t0) * 1e-6, rel=1e-12)
    assert profile.units["total_time"] == "s"


def test_ns_fractions_are_kept():
    kernels = read(SAMPLES / "torch_a100_ddp" / "a100_ddp_rank0_of2.json.gz").trace.tables[T.KERNEL]
    fractional = np.abs(kernels.start / 1e3 - np.round(kernels.start / 1e3)) > 1e-4  # not whole µs
    assert fractional.mean() > 0.9
    # the first kernel: ts 4458676422880.181 µs, the trace starting at 4458676416788.066 µs: 6,092,115 ns (±1 ns
    # of float64 at 4.5e12 µs)
    assert kernels.start[np.argmin(kernels.start)] == pytest.approx(6_092_115.0, abs=1.0)


def test_a100_ddp_metadata_and_kernel_args():
    profile = read(SAMPLES / "torch_a100_ddp" / "a100_ddp_rank0_of2.json.gz")
    trace = profile.trace
    assert trace.metadata == {
        T.META_DEVICE_NAME: "NVIDIA A100-PG509-200", T.META_DEVICE_VENDOR: "nvidia", T.META_COMPUTE_CAPABILITY: "8.0",
        T.META_SM_COUNT: 108, T.META_DEVICE_MEMORY: 42297524224, T.META_RANK: 0, T.META_RANK_SOURCE: "distributedInfo",
        T.META_WORLD_SIZE: 2, T.META_BACKEND: "nccl",
        T.META_TIME_BASE: 1711964646000000000 + 4458676416788066,  # baseTimeNanoseconds + the first event's ts
        T.META_TRACE_NAME: "/tmp/tmpu3g3sevh.json"}
    assert trace.warnings == ()
    assert profile.values["world_size"] == 2 and profile.units["world_size"] == "count"
    assert profile.values["device_memory"] == 42297524224 and profile.units["device_memory"] == "bytes"
    assert profile.info["device_name"] == "NVIDIA A100-PG509-200" and profile.info["backend"] == "nccl"
    k = trace.tables[T.KERNEL]
    assert set(k.track.names) == {"device 0 stream 7", "device 0 stream 40"}
    first = int(np.flatnonzero(np.array(names(k.name)) == names(k.name)[0])[0])
    assert k.extra[T.OCCUPANCY][first] == pytest.approx(0.75)  # "est. achieved occupancy %": 75
    assert k.extra[T.REGISTERS][first] == 40 and k.extra[T.GRID].value(first) == "512,1,1"
    assert k.extra[T.DEVICE][first] == 0 and k.extra[T.STREAM][first] == 7 and k.extra[T.CORRELATION][first] == 57541
    nccl = [i for i, n in enumerate(names(k.name)) if n.startswith("ncclKernel_AllReduce")]
    assert {k.extra[T.COLLECTIVE].value(i) for i in nccl} == {"allreduce"}
    assert np.all(k.extra[T.GROUP_SIZE][nccl] == 2)
    assert 6637568 * 4 in k.extra[T.MESSAGE_BYTES][nccl]  # In msg nelems × 4 bytes (Float)
    ops = trace.tables[T.CPU_OP]
    comms = [i for i, n in enumerate(names(ops.name)) if n == "record_param_comms"]
    assert ops.extra[T.MESSAGE_BYTES][comms[0]] == 2049000 * 4
    assert ops.extra[T.COLLECTIVE].value(comms[0]) == "allreduce"
    assert np.isnan(ops.extra[T.MESSAGE_BYTES][[i for i in range(len(ops)) if i not in set(comms)]]).all()
    copies = trace.tables[T.MEMCPY]
    assert set(names(copies.extra[T.DIRECTION])) == {"DtoD"} and np.all(copies.extra[T.PAGEABLE] == 0.0)
    assert copies.bytes[0] == 4000  # bytes
    assert "thread -549452224" in trace.tables[T.RUNTIME].track.names  # Kineto's negative thread ids kept


def test_a100_cold_start_copies_are_pageable_and_syncs_on_streams():
    trace = read(SAMPLES / "torch_a100_cold_start" / "a100_alexnet_cold_start.json.gz").trace
    copies = trace.tables[T.MEMCPY]
    assert set(names(copies.extra[T.DIRECTION])) == {"HtoD"} and np.all(copies.extra[T.PAGEABLE] == 1.0)
    assert copies.bytes[0] == 92928
    sync = trace.tables[T.SYNC]
    assert len(sync) == 41 and set(sync.track.names) == {"device 0", "device 0 stream 7", "device 0 stream 20"}
    assert trace.metadata[T.META_RANK] == 0 and T.META_WORLD_SIZE not in trace.metadata
    assert trace.metadata[T.META_TIME_BASE] == 1695835542514261 * 1000  # epoch µs, no baseTimeNanoseconds


def test_amd_mi250_hip_runtime_and_copy_sizes_from_the_runtime_call():
    trace = read(SAMPLES / "torch_amd_mi250" / "amd_mi250_minitoy_train.json.gz").trace
    meta = trace.metadata
    assert meta[T.META_DEVICE_VENDOR] == "amd" and meta[T.META_DEVICE_NAME] == "AMD Radeon Graphics"
    assert T.META_COMPUTE_CAPABILITY not in meta and T.META_RANK not in meta  # no distributedInfo, no rank in the name
    assert trace.warnings == ("no distributedInfo in the trace: rank unknown, world size and backend unknown",)
    assert set(trace.tables[T.KERNEL].track.names) == {"device 2 stream 0"}
    copies = trace.tables[T.MEMCPY]
    assert set(names(copies.extra[T.DIRECTION])) == {"HtoD"} and np.isnan(copies.extra[T.PAGEABLE]).all()
    assert copies.bytes.tolist() == [2560, 2560]  # hipMemcpyWithStream "size": "2560", joined by correlation
    runtime = trace.tables[T.RUNTIME]
    assert 0 in runtime.extra[T.STREAM]  # "stream": "0x0"


def test_mtia_device_events_and_rank_from_the_file_name():
    trace = read(SAMPLES / "torch_mtia_inference" / "mtia_inference_rank0.json.gz").trace
    meta = trace.metadata
    assert meta[T.META_DEVICE_VENDOR] == "mtia" and meta[T.META_DEVICE_NAME] == "ARTEMIS"
    assert meta[T.META_RANK] == 0 and meta[T.META_RANK_SOURCE] == "file name"
    kernels = trace.tables[T.KERNEL]
    assert np.all(kernels.extra[T.DEVICE] == 17) and len(kernels.track.names) == 12  # pid 17; one track per stream
    assert trace.extra["categories"]["mtia_ccp_events"] == 1313 and trace.extra["categories"]["mtia_runtime"] == 823


def test_rank_from_the_file_name_of_a_copy(tmp_path):
    path = tmp_path / "job_rank-5.json.gz"
    path.write_bytes((SAMPLES / "torch_amd_mi250" / "amd_mi250_minitoy_train.json.gz").read_bytes())
    profile = read(path)
    assert profile.trace.metadata[T.META_RANK] == 5 and profile.trace.metadata[T.META_RANK_SOURCE] == "file name"
    assert profile.values["rank"] == 5 and profile.info["rank_source"] == "file name"


def test_a_cpu_only_trace_loads_with_empty_device_tables():
    profile = read(SAMPLES / "torch_cpu_only" / "cpu_only_rank34.pt.trace.json.gz")
    trace = profile.trace
    assert all(len(trace.tables[n]) == 0 for n in T.DEVICE_TABLES)
    assert len(trace.tables[T.CPU_OP]) == 4 and len(trace.tables[T.ANNOTATION]) == 11
    assert trace.metadata[T.META_DEVICE_VENDOR] == "none" and T.META_DEVICE_NAME not in trace.metadata
    assert (trace.metadata[T.META_RANK], trace.metadata[T.META_WORLD_SIZE], trace.metadata[T.META_BACKEND]) == (
        34, 300, "gloo")
    assert any("CPU-only" in w for w in trace.warnings)
    assert any("filtered out" in w and "0.2%" in w for w in trace.warnings)  # 15 of Ev Idx 0..7478
    assert profile.values["total_time"] == pytest.approx(1.283027080078125, rel=1e-12)


def test_sampled_ranks_are_flagged_as_filtered():
    for rank, path in enumerate(sorted((SAMPLES / "torch_sampled_ranks").glob("*.gz"))):
        trace = read(path).trace
        assert trace.metadata[T.META_RANK] == rank and trace.metadata[T.META_WORLD_SIZE] == 128
        assert T.META_DEVICE_NAME not in trace.metadata and trace.metadata[T.META_DEVICE_VENDOR] == "nvidia"
        assert [w for w in trace.warnings if "filtered out" in w]


@pytest.mark.parametrize("path", REAL, ids=lambda p: p.name)
def test_gzip_and_plain_and_any_budget_or_run_size_read_the_same(tmp_path, kt, path, monkeypatch):
    plain = tmp_path / path.name.removesuffix(".gz")
    plain.write_bytes(gzip.decompress(path.read_bytes()))
    reference = read(path)
    others = [read(plain), read(path, max_memory=1024), read(plain, max_memory=1024)]
    monkeypatch.setattr(json_stream, "BLOCK", 4096)  # runs cut at other events, windows grown more often
    others += [read(path), read(plain)]
    for other in others:
        kt.same(reference.trace, other.trace)
        assert other.values == reference.values and other.info == reference.info
    assert reference.source.format == "kineto-json.gz" and read(plain).source.format == "kineto-json"


def test_progress_is_reported_as_the_file_is_read():
    path = SAMPLES / "torch_amd_mi250" / "amd_mi250_minitoy_train.json.gz"
    lines: list[str] = []
    read(path, progress=lines.append)
    assert lines[0] == "reading 6.626 KiB: 0 %" and lines[-1] == "reading 6.626 KiB: 100 %"  # the file as stored


def test_values_are_finite_numbers():
    for path in REAL:
        values = read(path).values
        assert all(v is None or math.isfinite(v) for v in values.values())
