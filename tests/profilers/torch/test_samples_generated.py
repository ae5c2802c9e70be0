"""The generated torch samples (samples/make_torch_traces.py): the same bytes on every run, the shape of a Kineto
trace checked here on the raw JSON (not with advisor's reader), and the findings each sample is built to show,
with the figures its README gives."""

from __future__ import annotations

import gzip
import importlib.util
import json
import sys
from collections import Counter
from itertools import pairwise
from pathlib import Path

import pytest
import yaml
from tests_support import SAMPLES

from advisor.api import AnalyzeOptions, analyze
from advisor.kinds.base import LoadOptions


def _load():
    spec = importlib.util.spec_from_file_location("make_torch_traces", SAMPLES / "make_torch_traces.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


gen = _load()
FILES = sorted(p for folder in gen.SCENARIOS for p in (SAMPLES / folder).glob("*.pt.trace.json.gz"))


def trace(path: Path) -> dict:
    return json.loads(gzip.decompress(path.read_bytes()))


def test_every_generated_file_is_what_the_generator_writes(tmp_path):
    written = [p for folder in gen.SCENARIOS for p in gen.write(folder, tmp_path)]
    assert sorted(p.relative_to(tmp_path) for p in written) == sorted(p.relative_to(SAMPLES) for p in FILES)
    for path in written:
        assert path.read_bytes() == (SAMPLES / path.relative_to(tmp_path)).read_bytes(), path


def test_every_rule_of_the_pack_fires_on_a_sample():
    pack = yaml.safe_load((SAMPLES.parent / "rules" / "torch" / "rules.yaml").read_text(encoding="utf-8"))
    fired = {name for *_, names in gen.FIRES for name in names}
    assert {r["name"] for r in pack["rules"]} - fired == {"trace-coverage"}  # the real samples fire it
    assert "trace-coverage" in {f.name for f in analyze(SAMPLES / "torch_cpu_only").findings}


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_the_file_has_kinetos_shape(path):
    doc = trace(path)
    assert list(doc)[:2] == ["schemaVersion", "deviceProperties"] and list(doc)[-3:] == [
        "traceName", "displayTimeUnit", "baseTimeNanoseconds"]
    assert {p["name"] for p in doc["deviceProperties"]} <= {"NVIDIA A100-SXM4-80GB", "NVIDIA A100 80GB PCIe"}
    events = doc["traceEvents"]
    complete = [e for e in events if e["ph"] == "X"]
    host = sorted((e for e in complete if e["cat"] in ("cpu_op", "user_annotation")), key=lambda e: e["args"]["Ev Idx"])
    assert [e["args"]["Ev Idx"] for e in host] == list(range(len(host)))  # numbered without gaps: not filtered
    steps = [int(e["name"].split("#")[1]) for e in host if e["name"].startswith("ProfilerStep#")]
    assert steps == list(range(steps[0], steps[0] + len(steps))) and len(steps) >= 4
    # every device event is linked to the runtime call that queued it, by correlation and by an ac2g flow
    runtime = {e["args"]["correlation"]: e for e in complete if e["cat"] in ("cuda_runtime", "cuda_driver")}
    starts = {e["id"]: e for e in events if e["ph"] == "s" and e["cat"] == "ac2g"}
    ends = Counter((e["id"], e["pid"], e["tid"], e["ts"]) for e in events if e["ph"] == "f" and e["cat"] == "ac2g")
    device = [e for e in complete if e["cat"] in ("kernel", "gpu_memcpy", "gpu_memset")]
    assert device
    for e in device:
        call = runtime[e["args"]["correlation"]]
        assert call["name"].startswith(("cuda", "cu")) and starts[e["args"]["correlation"]]["ts"] == call["ts"]
        assert ends[(e["args"]["correlation"], e["pid"], e["args"]["stream"], e["ts"])] >= 1
        assert call["ts"] < e["ts"] and e["pid"] == e["args"]["device"]
    ops = {e["args"]["External id"]: e for e in complete if e["cat"] == "cpu_op"}
    assert all(ops[e["args"]["External id"]]["tid"] == runtime[e["args"]["correlation"]]["tid"]
               for e in device if e["args"]["External id"] in ops)
    # a stream runs one event at a time
    for stream in {(e["pid"], e["tid"]) for e in device}:
        mine = sorted((e["ts"], e["ts"] + e["dur"]) for e in device if (e["pid"], e["tid"]) == stream)
        assert all(b[0] >= a[1] for a, b in pairwise(mine)), stream


@pytest.mark.parametrize("folder", ["torch_exposed_allreduce", "torch_ddp_imbalance", "torch_tp_slow_link"])
def test_collectives_are_recorded_as_c10d_records_them(folder):
    for path in sorted((SAMPLES / folder).glob("*.gz")):
        doc = trace(path)
        info = doc["distributedInfo"]
        complete = [e for e in doc["traceEvents"] if e["ph"] == "X"]
        comms = {e["args"]["External id"]: e for e in complete if e["name"] == "record_param_comms"
                 and e["args"]["Collective name"] == "allreduce"}
        kernels = [e for e in complete if e["cat"] == "kernel" and e["name"].startswith("ncclDevKernel_AllReduce")]
        assert len(kernels) == len(comms) > 0
        for k in kernels:
            record = comms[k["args"]["External id"]]
            ranks = json.loads(record["args"]["Process Group Ranks"])
            assert info["rank"] in ranks and record["args"]["Group size"] == len(ranks)
            assert k["args"]["In msg nelems"] == record["args"]["In msg nelems"] and k["args"]["stream"] == gen.NCCL
        assert info["world_size"] == {"torch_exposed_allreduce": 8, "torch_ddp_imbalance": 2,
                                      "torch_tp_slow_link": 4}[folder]
        assert sum(e["name"] == "nccl:all_reduce" for e in complete if e["cat"] == "user_annotation") == len(kernels)


def test_ranks_of_one_job_end_each_collective_together():
    """An all-reduce ends on every rank of its group at once: the last rank to start it sets the pace."""
    folder = SAMPLES / "torch_ddp_imbalance"
    ends = [[e["ts"] + e["dur"] for e in trace(p)["traceEvents"] if e.get("cat") == "kernel"
             and e["name"].startswith("ncclDevKernel")] for p in sorted(folder.glob("*.gz"))]
    assert len(ends[0]) == len(ends[1]) == 30
    assert all(a == pytest.approx(b, abs=1e-3) for a, b in zip(*ends, strict=True))


def _fired(folder: str, name: str, entry: str | None) -> set[str]:
    analysis = analyze(SAMPLES / folder / name, AnalyzeOptions(load=LoadOptions(entry=entry)))
    return {f.name for f in analysis.findings if f.severity != "info"}


@pytest.mark.parametrize("case", gen.FIRES, ids=lambda c: f"{c[0]}/{c[1]}" + (f"@{c[2]}" if c[2] else ""))
def test_each_sample_fires_what_it_is_built_to(case):
    folder, name, entry, expected = case
    assert _fired(folder, name, entry) == set(expected)


def test_the_readme_figures():
    def a(folder: str, name: str = ".", entry: str | None = None):
        return analyze(SAMPLES / folder / name, AnalyzeOptions(load=LoadOptions(entry=entry)))

    host = a("torch_host_bound", "host_bound.pt.trace.json.gz")
    assert host.value("total_time") == pytest.approx(32.17e-3, abs=0.01e-3)  # s
    assert host.value("idle_host_wait_fraction") == pytest.approx(0.7961, abs=1e-4)
    assert (host.value("short_kernel_count"), host.value("kernel_count")) == (875, 1270)
    assert host.value("kernel_time_median") == pytest.approx(3.367e-6, abs=1e-9)  # s
    comm = a("torch_exposed_allreduce", "rank0_of8.pt.trace.json.gz")
    assert comm.value("comm_exposed_fraction") == pytest.approx(0.2955, abs=1e-4)
    assert comm.value("collective_count") == 80
    assert comm.value("collective_bytes") == 5 * 124_439_808 * 4  # bytes: 5 steps of every fp32 gradient
    copy = a("torch_blocking_copy", "resnet50_pageable.pt.trace.json.gz")
    assert copy.value("pageable_copy_time") == pytest.approx(53.53e-3, abs=0.01e-3)  # s
    assert copy.value("pageable_copy_fraction") == pytest.approx(0.1101, abs=1e-4)
    loader = a("torch_dataloader_stall", "resnet18_loader.pt.trace.json.gz")
    assert loader.value("dataloader_idle_fraction") == pytest.approx(0.2069, abs=1e-4)
    assert loader.value("step_time_cv") == pytest.approx(0.304, abs=1e-3)  # ratio
    # the spread is the steps that wait for a batch, and the idle after each loss.item() is the loader's
    assert loader.value("loader_free_step_cv") == pytest.approx(0.0018, abs=1e-4)
    assert loader.value("sync_idle_fraction") == pytest.approx(0.0008, abs=1e-4)
    assert loader.value("sync_fraction") == pytest.approx(0.6703, abs=1e-4)
    warm = a("torch_warm_up", "resnet18_first_steps.pt.trace.json.gz")
    assert (warm.value("first_step_time"), warm.value("warmup_fraction")) == (pytest.approx(0.439, abs=1e-3),
                                                                              pytest.approx(0.9430, abs=1e-4))
    decode = a("torch_low_occupancy", "llm_decode_graphs.pt.trace.json.gz")
    assert decode.value("occupancy_mean") == pytest.approx(0.0623, abs=1e-4)  # fraction
    assert decode.value("low_occupancy_time_fraction") == pytest.approx(0.9995, abs=1e-4)
    slow = a("torch_straggler_ranks")
    assert slow.value("rank") == 2 and slow.value("straggler_excess_time") == pytest.approx(61.43e-3, abs=0.01e-3)
    assert a("torch_straggler_ranks", entry="3").value("straggler_dataloader_time_excess") == pytest.approx(
        34.35e-3, abs=0.01e-3)  # s
    ddp = a("torch_ddp_imbalance")
    assert ddp.value("rank") == 0 and ddp.value("straggler_excess_percent") == pytest.approx(0.0039, abs=1e-4)
    assert ddp.value("straggler_compute_time_excess") == pytest.approx(74.43e-3, abs=0.01e-3)  # s
    assert ddp.value("straggler_comm_time_excess") == pytest.approx(-124.3e-3, abs=0.1e-3)  # s
    link = a("torch_tp_slow_link")
    assert link.value("straggler_comm_time_excess") == pytest.approx(384.3e-3, abs=0.1e-3)  # s
