"""Traces of other shapes than today's Kineto trace, each built here in the shape its writer gives it:

- an older Kineto trace (PyTorch 1.8, 2021: the shape of pytorch/kineto tb_plugin/test/gpu_metrics_input.json):
  capitalised categories `Kernel`, `Runtime`, `Memcpy`, `Memset`, `Operator`, the step range an `Operator`,
  `external id` in lower case on device events and runtime calls, the devices under `computeProperties`. HTA
  reads it; so must advisor, into the same tables as today's spelling;
- a CUPTI range-profiler trace (torch.profiler's experimental_config profiler_metrics; Kineto's
  CuptiRangeProfiler.cpp and HTA's tests/data/cupti_profiler): per-kernel `cuda_profiler_range` events whose args
  are counters, at evenly spaced made-up times, beside the host's operators and launch calls, and no kernel,
  copy or set. It is described as what it is, never as a CPU-only trace;
- a PyTorch execution trace (torch.profiler.ExecutionTraceObserver, the host trace Chakra converts: `schema`,
  `pid`, `time`, `start_ts`, `nodes`, `finish_ts`), plain or gzip: named in one line, exit 2, with what to pass.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from advisor.cli import main
from advisor.kinds.base import LoadOptions
from advisor.profilers.torch import tables as T
from advisor.profilers.torch.adapters import detect, load, members

T0 = 1621401187223000  # µs, as the 2021 trace has them
V100 = {"id": 0, "name": "Tesla V100-DGXS-32GB", "totalGlobalMem": 34084028416, "major": 7, "minor": 0,
        "maxThreadsPerBlock": 1024, "multiProcessorCount": 80, "warpSize": 32}


def _x(cat: str, name: str, ts: float, dur: float, pid, tid, **args) -> dict:
    return {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur, "args": args}


def old_events(spelling: str = "old") -> list[dict]:
    """Three steps of one launch, one pageable copy and one set each; `spelling` "old" writes them as PyTorch
    1.8's Kineto did, "new" as today's (the same events otherwise)."""
    old = spelling == "old"
    cat = {"op": "Operator" if old else "cpu_op", "step": "Operator" if old else "user_annotation",
           "rt": "Runtime" if old else "cuda_runtime", "k": "Kernel" if old else "kernel",
           "cp": "Memcpy" if old else "gpu_memcpy", "set": "Memset" if old else "gpu_memset"}
    ext = "external id" if old else "External id"  # on device events and runtime calls
    events: list[dict] = []
    for step in range(3):
        t, corr, op = T0 + step * 1000, 100 + step * 10, 10 + step * 10
        events += [
            _x(cat["step"], f"ProfilerStep#{step + 1}", t, 900, 24572, "24572", **{"Device": 24572,
                                                                                   "External id": op - 1}),
            _x(cat["op"], "aten::mm", t + 10, 100, 24572, "24572", **{"Device": 24572, "External id": op}),
            _x(cat["rt"], "cudaLaunchKernel", t + 20, 10, 24572, "24572",
               **{"cbid": 211, "correlation": corr, ext: op, "external ts": t + 10}),
            _x(cat["k"], "volta_sgemm_128x32_nt", t + 40, 300, 0, "stream 7",
               **{"queued": 0, "device": 0, "context": 1, "stream": 7, "correlation": corr, ext: op,
                  "registers per thread": 55, "shared memory": 16384, "grid": [1, 1, 1], "block": [256, 1, 1],
                  "theoretical occupancy %": 0}),
            _x(cat["op"], "aten::to", t + 400, 50, 24572, "24572", **{"Device": 24572, "External id": op + 1}),
            _x(cat["rt"], "cudaMemcpyAsync", t + 405, 20, 24572, "24572",
               **{"cbid": 41, "correlation": corr + 1, ext: op + 1, "external ts": t + 400}),
            _x(cat["cp"], "Memcpy HtoD (Pageable -> Device)", t + 430, 5, 0, "stream 7",
               **{"device": 0, "context": 1, "stream": 7, "correlation": corr + 1, ext: op + 1, "bytes": 640,
                  "memory bandwidth (GB/s)": 0.46}),
            _x(cat["rt"], "cudaMemsetAsync", t + 500, 8, 24572, "24572",
               **{"cbid": 51, "correlation": corr + 2, ext: op + 1, "external ts": t + 400}),
            _x(cat["set"], "Memset (Device)", t + 520, 2, 0, "stream 7",
               **{"device": 0, "context": 1, "stream": 7, "correlation": corr + 2, ext: op + 1, "bytes": 64}),
            {"ph": "f", "id": corr, "pid": 0, "tid": "stream 7", "ts": t + 40, "cat": "async", "name": "launch",
             "bp": "e"},
        ]
    events.append(_x("Trace", "PyTorch Profiler (0)", T0, 3000, "Traces", "PyTorch Profiler", **{"Op count": 0}))
    return events


def old_trace() -> dict:
    return {"schemaVersion": 1, "computeProperties": [V100], "traceEvents": old_events("old")}


def new_trace() -> dict:
    props = {"id": 0, "name": V100["name"], "totalGlobalMem": V100["totalGlobalMem"], "computeMajor": 7,
             "computeMinor": 0, "numSms": 80}
    return {"schemaVersion": 1, "deviceProperties": [props], "traceEvents": old_events("new")}


def read(path):
    return load(path, LoadOptions())[0]


def texts(codes) -> list[str]:
    return [codes.names[int(c)] for c in codes.codes]


def report(path, tmp_path, capsys) -> tuple[int, str, str]:
    out = tmp_path / "report.md"
    code = main(["report", str(path), "-o", str(out)])
    return code, out.read_text() if out.exists() else "", capsys.readouterr().err


# --- an older Kineto trace ------------------------------------------------------------------------------------


@pytest.mark.parametrize("gz", [False, True])
def test_an_older_kineto_trace_is_read_into_the_tables_of_today_spelling(write, gz):
    old = read(write(old_trace(), "old.json.gz" if gz else "old.json", gz=gz)).trace
    new = read(write(new_trace(), "new.json")).trace
    for table in (T.KERNEL, T.MEMCPY, T.MEMSET, T.RUNTIME, T.CPU_OP, T.ANNOTATION):
        a, b = old.tables[table], new.tables[table]
        assert len(a) == len(b) == 3 * {T.RUNTIME: 3, T.CPU_OP: 2}.get(table, 1), table
        np.testing.assert_array_equal(a.start, b.start)
        np.testing.assert_array_equal(a.duration, b.duration)
        assert texts(a.name) == texts(b.name) and texts(a.track) == texts(b.track), table
        for column in (T.CORRELATION, T.EXTERNAL_ID, T.DEVICE, T.STREAM):
            if column in b.extra:
                np.testing.assert_array_equal(a.extra[column], b.extra[column], err_msg=f"{table}.{column}")
    assert texts(old.tables[T.ANNOTATION].name) == ["ProfilerStep#1", "ProfilerStep#2", "ProfilerStep#3"]
    assert "ProfilerStep#1" not in texts(old.tables[T.CPU_OP].name)  # a step range is no operator
    assert (old.tables[T.KERNEL].extra[T.EXTERNAL_ID] >= 0).all()  # `external id`: the kernel's operator is known
    assert (old.tables[T.RUNTIME].extra[T.EXTERNAL_ID] >= 0).all()
    np.testing.assert_array_equal(old.tables[T.MEMCPY].bytes, [640.0] * 3)
    assert old.tables[T.MEMCPY].extra[T.PAGEABLE].tolist() == [1.0] * 3


def test_an_older_trace_names_its_device_from_compute_properties(write):
    meta = read(write(old_trace())).trace.metadata
    assert meta[T.META_DEVICE_NAME] == "Tesla V100-DGXS-32GB" and meta[T.META_DEVICE_VENDOR] == "nvidia"
    assert meta[T.META_COMPUTE_CAPABILITY] == "7.0" and meta[T.META_SM_COUNT] == 80
    assert meta == read(write(new_trace(), "new.json")).trace.metadata


def test_an_older_trace_without_its_top_level_members_is_claimed_by_computeproperties(write):
    path = write({"computeProperties": [V100], "traceEvents": old_events()})
    assert detect(path, path.read_bytes())


def test_an_older_trace_is_reported_with_its_device_figures(write, tmp_path, capsys):
    code, text, err = report(write(old_trace()), tmp_path, capsys)
    assert code == 0, err
    assert "without usable complete events" not in err
    assert "**Device busy" in text and "No device events" not in text
    assert "| Analysed window | ProfilerStep#1 to ProfilerStep#" in text  # the steps, from the older operators


# --- a CUPTI range-profiler trace -----------------------------------------------------------------------------

COUNTERS = ("dram__bytes_read.sum", "dram__bytes_write.sum", "sm__inst_executed_pipe_tensor.sum",
            "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum")


def range_trace(kernels: int = 4) -> dict:
    """Operators launching kernels, their launch calls, and one counter range per kernel: Kineto splits the
    profiled span evenly between the ranges (pid: the device, tid 0), each range's args its counters."""
    events: list[dict] = []
    span_start, span = 5_000.0, 4_000.0
    for i in range(kernels):
        t = 5_000.0 + i * 1_000
        events += [
            {"ph": "X", "cat": "cpu_op", "name": "aten::conv2d", "pid": 7, "tid": 7, "ts": t, "dur": 400,
             "args": {"External id": i + 1, "Ev Idx": i}},
            {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 7, "tid": 7, "ts": t + 100,
             "dur": 250, "args": {"External id": i + 1, "correlation": 50 + i, "cbid": 211}},
            {"ph": "X", "cat": "cuda_profiler_range", "name": f"void fft2d_r2c_32x32<float, false, 1u>({i})",
             "pid": 0, "tid": 0, "ts": span_start + i * span / kernels, "dur": span / kernels,
             "args": {name: 1000 * (i + 1) + k for k, name in enumerate(COUNTERS)}},
        ]
    return {"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA A100-SXM4-40GB", "computeMajor": 8,
                                                      "computeMinor": 0, "numSms": 108}],
            "traceEvents": events}


def cpu_trace() -> dict:
    """The same run's host side alone: what a trace recorded with CPU activity only holds."""
    return {"schemaVersion": 1, "traceEvents": range_trace()["traceEvents"][:2]}


def test_a_range_profiler_trace_is_described_as_what_it_holds_never_as_cpu_only(write):
    profile = read(write(range_trace()))
    said = " ".join(profile.trace.warnings)
    assert "CPU-only" not in said and "CPU activity" not in said
    assert "CUPTI range-profiler trace" in said
    assert "4 cuda_profiler_range events" in said
    assert "4 hardware counters" in said and "dram__bytes_read.sum" in said
    assert "not when the kernels ran" in said  # the ranges' times are Kineto's even split, not the run's
    for figure in ("device busy and idle", "kernel times", "launch delays"):
        assert figure in said, figure
    assert "profiler_metrics" in said  # how to get the timeline: profile again without the counters
    assert profile.trace.extra["counter_ranges"] == 4
    assert profile.trace.extra["counters"] == list(COUNTERS)
    assert len(profile.trace.tables[T.KERNEL]) == 0  # the ranges are no kernels: their times are made up


def test_a_range_profiler_trace_names_the_device_it_measured(write):
    meta = read(write(range_trace())).trace.metadata
    assert meta[T.META_DEVICE_VENDOR] == "nvidia" and meta[T.META_DEVICE_NAME] == "NVIDIA A100-SXM4-40GB"
    assert read(write(cpu_trace(), "cpu.json")).trace.metadata.get(T.META_DEVICE_VENDOR) in (
        None, "none")


def test_a_range_profiler_report_says_what_the_trace_holds(write, tmp_path, capsys):
    code, text, err = report(write(range_trace(), "range.json.gz", gz=True), tmp_path, capsys)
    assert code == 0, err
    assert "CUPTI range-profiler trace" in text
    assert "a CPU-only trace" not in text
    assert "recorded with CPU activity only, or on the CPU." not in text  # the report's own line, made true
    assert "Vendor | nvidia" in text


def test_a_cpu_only_trace_is_still_said_to_be_one(write):
    said = " ".join(read(write(cpu_trace(), "cpu.json")).trace.warnings)
    assert "a CPU-only trace" in said and "range-profiler" not in said


# --- a PyTorch execution trace --------------------------------------------------------------------------------


def execution_trace(schema: str = "1.0.1") -> dict:
    """The observer's file: schema, pid, time, start_ts, then the nodes (the root node last), then finish_ts."""
    node = {"id": 2, "name": "aten::add", "ctrl_deps": 1,
            "inputs": {"values": [[3, 4, 0, 16, 4, "cuda:0"]], "shapes": [[4, 4]], "types": ["Tensor(float)"],
                       "strides": [[4, 1]]},
            "outputs": {"values": [], "shapes": [], "types": [], "strides": []},
            "attrs": [{"name": "rf_id", "type": "uint64", "value": 7}]}
    root = {"id": 1, "name": "[pytorch|profiler|execution_trace|process]", "ctrl_deps": 1,
            "inputs": {"values": [], "shapes": [], "types": [], "strides": []},
            "outputs": {"values": [], "shapes": [], "types": [], "strides": []}, "attrs": []}
    return {"schema": schema, "pid": 1234, "time": "2023-03-17 10:00:00", "start_ts": 12345, "nodes": [node, root],
            "finish_ts": 12399}


@pytest.mark.parametrize("gz", [False, True])
@pytest.mark.parametrize("schema", ["1.0.1", "1.1.1-chakra.0.0.4"])
def test_an_execution_trace_is_named_in_one_line_with_what_to_pass(write, tmp_path, capsys, gz, schema):
    path = write(execution_trace(schema), "rank0_et.json.gz" if gz else "rank0_et.json", gz=gz)
    code, _, err = report(path, tmp_path, capsys)
    assert code == 2
    assert err.count("\n") == 1
    assert err.startswith(f"advisor: error: {path}: a PyTorch execution trace (Chakra ET, schema {schema}), not a "
                          "profiler trace: ")
    assert "binary data" not in err and "unknown format" not in err
    assert "torch.profiler" in err and ".pt.trace.json" in err  # what to pass instead


def test_an_execution_trace_beside_the_kineto_traces_is_no_rank(write, kt):
    write(kt.trace([kt.event()], distributedInfo={"rank": 0}), "rank-0.pt.trace.json")
    et = write(execution_trace(), "rank-0.et.json.gz", gz=True)
    listed = members(et.parent)
    assert [label for label, _ in listed] == ["rank 0"]


def test_an_execution_trace_is_not_taken_for_a_kineto_trace_nor_the_reverse(write, kt):
    from advisor.profilers.torch.adapters import sniff

    et = write(json.dumps(execution_trace()).encode(), "et.json")
    assert not sniff.is_kineto(et.read_bytes()) and sniff.execution_schema(et.read_bytes()) == "1.0.1"
    trace = write(kt.trace([kt.event()]), "t.json")
    assert sniff.execution_schema(trace.read_bytes()) is None
    assert sniff.execution_schema(b'{"schema": "not a version", "nodes": []}') is None
    assert sniff.execution_schema(b'{"schema": "1.0.1", "data": []}') is None  # no member of the trace's
