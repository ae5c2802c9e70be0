"""Issue 35: what runs on the device, by operator. Kernels tied to the operator that launched them, each operator's
work from its recorded shapes (data/operators.yaml), the device's peaks (data/hardware.yaml) and the roofline."""

from __future__ import annotations

import gzip
import json
from collections import defaultdict
from pathlib import Path

import pytest

from advisor.api import AnalyzeOptions, analyze
from advisor.kinds.base import LoadOptions
from advisor.profilers.torch.work import model, model_data

TRACELENS = Path(__file__).resolve().parents[4] / "shared" / "reference" / "torch-traces" / "tracelens"
BF16 = "c10::BFloat16"


def _work(op: str, dims: list, types: list, concrete: list | None = None):
    concrete = concrete if concrete is not None else [""] * len(dims)
    return model(op, json.dumps(dims), json.dumps(types), json.dumps(concrete))


@pytest.mark.parametrize(("op", "dims", "types", "concrete", "flops", "moved"), [
    # a GEMM [M, K] x [K, N]: 2 M N K FLOPs, A, B and C once (2 bytes each in bf16)
    ("aten::mm", [[8944, 1024], [1024, 1024]], [BF16, BF16], None, 2 * 8944 * 1024 * 1024,
     (8944 * 1024 + 1024 * 1024 + 8944 * 1024) * 2),
    # addmm(bias, mat1, mat2): the matrices are inputs 1 and 2
    ("aten::addmm", [[1024], [8944, 1024], [1024, 1024], [], []], [BF16] * 3 + ["Scalar"] * 2, ["", "", "", "1", "1"],
     2 * 8944 * 1024 * 1024, (8944 * 1024 + 1024 * 1024 + 8944 * 1024) * 2),
    # a batched GEMM: B times, FP32 4 bytes
    ("aten::bmm", [[12, 64, 32], [12, 32, 128]], ["float", "float"], None, 2 * 12 * 64 * 128 * 32,
     (12 * 64 * 32 + 12 * 32 * 128 + 12 * 64 * 128) * 4),
    # causal flash attention: Q K^T and P V, half of each
    ("aten::_scaled_dot_product_flash_attention", [[16, 16, 559, 64]] * 3 + [[]] * 4, [BF16] * 3 + ["Scalar"] * 4,
     ["", "", "", "0.", "True", "False", "0.125"], 2 * 16 * 16 * 559 * 559 * 128 * 0.5, 4 * 16 * 16 * 559 * 64 * 2),
    # the flash kernel's own entry: [B, L, H, E]
    ("aten::_flash_attention_forward", [[16, 559, 16, 64]] * 3 + [[]] * 12, [BF16] * 3 + [""] * 12,
     ["", "", "", "", "", "559", "559", "0.", "True", "False", "0.125", "", "", "", ""],
     2 * 16 * 16 * 559 * 559 * 128 * 0.5, 4 * 16 * 16 * 559 * 64 * 2),
    # conv 7x7 stride 2 pad 3 on 224x224: a 112x112 output
    ("aten::cudnn_convolution", [[8, 3, 224, 224], [64, 3, 7, 7], [], [], [], [], [], [], []],
     ["float", "float"] + ["ScalarList"] * 3 + ["Scalar"] * 4, ["", "", "[3, 3]", "[2, 2]", "[1, 1]", "1", "False",
                                                               "False", "True"],
     2 * 8 * 64 * 112 * 112 * 3 * 49, (8 * 3 * 224 * 224 + 64 * 3 * 49 + 8 * 64 * 112 * 112) * 4),
    # elementwise with a broadcast scalar: one FLOP per output element, input and output once
    ("aten::mul", [[1, 559, 64], []], ["float", "double"], None, 559 * 64, 2 * 559 * 64 * 4),
    # layer norm: read and write the input, a few FLOPs per element
    ("aten::native_layer_norm", [[16, 559, 1024], [1024], [1024], [1024]], [BF16] * 3 + ["ScalarList"], None,
     5 * 16 * 559 * 1024, 2 * 16 * 559 * 1024 * 2),
    # an embedding lookup reads I rows of D, not the whole table
    ("aten::embedding", [[151936, 1024], [16, 559], [], [], []], [BF16, "long int"] + ["Scalar"] * 3, None, 0,
     2 * 16 * 559 * 1024 * 2 + 8 * 16 * 559),
])
def test_each_family_formula_counts_the_work_from_the_shapes(op, dims, types, concrete, flops, moved):
    work = _work(op, dims, types, concrete)
    assert work is not None and work.flops == pytest.approx(flops) and work.bytes == pytest.approx(moved)


@pytest.mark.parametrize(("op", "dims", "types"), [
    ("aten::view", [[16, 559]], ["float"]),  # no family: not modelled
    ("aten::mm", [[16, 559], []], ["float", "float"]),  # a missing shape
    ("aten::mm", [[16, 559], [559, 8]], ["double", "double"]),  # a dtype without a size in the table? it has one
])
def test_an_operator_no_formula_models_is_not_modelled_never_zero(op, dims, types):
    work = _work(op, dims, types)
    assert work is None or (op, types[0]) == ("aten::mm", "double")


def test_every_family_names_its_source_and_every_listed_operator_binds():
    for family in model_data().families:
        assert len(family.source) > 40, family.key
        assert family.ops, family.key


def _independent_matmul_rates(trace: Path) -> dict[tuple[str, str], float]:
    """FLOP/s of aten::mm, addmm and bmm per (name, dtype), from the raw JSON alone: each kernel tied to its operator
    through its launch call (correlation -> the call's External id -> the operator with that id), FLOPs 2 M N K from
    the operator's Input Dims, time the kernels' durations inside the ProfilerStep window (the whole trace without
    one). Launch calls are the runtime's and the driver's (cuLaunchKernel: cuBLASLt launches through it)."""
    with gzip.open(trace) as raw:
        events = json.loads(raw.read())["traceEvents"]
    steps = [e for e in events if e.get("cat") == "user_annotation" and e["name"].startswith("ProfilerStep")]
    start = min((e["ts"] for e in steps), default=float("-inf"))
    end = max((e["ts"] + e["dur"] for e in steps), default=float("inf"))
    calls = {e["args"]["correlation"]: e["args"].get("External id") for e in events
             if e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {})}
    ops = {e["args"]["External id"]: e for e in events if e.get("cat") == "cpu_op" and "External id" in e["args"]}
    flops: dict[tuple[str, str], float] = defaultdict(float)
    time: dict[tuple[str, str], float] = defaultdict(float)
    counted: set[int] = set()
    for k in (e for e in events if e.get("cat") == "kernel"):
        op = ops.get(calls.get(k["args"].get("correlation")))
        if op is None or op["name"] not in ("aten::mm", "aten::addmm", "aten::bmm"):
            continue
        clipped = min(k["ts"] + k["dur"], end) - max(k["ts"], start)
        if clipped <= 0:
            continue
        dims, key = op["args"]["Input Dims"], (op["name"], op["args"]["Input type"][0])
        a, b = (dims[1], dims[2]) if op["name"] == "aten::addmm" else (dims[0], dims[1])
        time[key] += clipped * 1e-6
        if op["args"]["External id"] not in counted:  # an operator's work once, however many kernels it runs
            counted.add(op["args"]["External id"])
            batch = a[0] if len(a) == 3 else 1
            flops[key] += 2 * batch * a[-2] * a[-1] * b[-1]
    return {key: flops[key] / time[key] for key in time if time[key] > 0}


@pytest.mark.parametrize("name", ["h100_Qwen_Qwen1.5-0.5B-Chat", "h100_facebook_timesformer-base-finetuned-k400",
                                  "h100_Falconsai_nsfw_image_detection", "h100_google_owlv2-large-patch14-ensemble",
                                  "h100_gaunernst_bert-small-uncased"])
def test_the_top_matmuls_achieved_flops_agree_with_an_independent_calculation(name):
    """Issue 35's acceptance: within 1 % of a calculation from the trace's shapes and durations alone."""
    path = TRACELENS / f"{name}.json.gz"
    if not path.exists():
        pytest.skip("the shared TraceLens traces are not beside this checkout")
    expected = _independent_matmul_rates(path)
    analysis = analyze(path, AnalyzeOptions(load=LoadOptions()))
    top = analysis.trace.breakdown("top_operators")
    rows = {key for key, _ in top.rows}
    checked = 0
    for (op, dtype), rate in sorted(expected.items(), key=lambda kv: -kv[1]):
        label = f"{op} ({dtype})"
        if label in rows:
            assert top.value(label, "flops_rate") == pytest.approx(rate, rel=0.01), label
            checked += 1
    assert checked >= 1, (sorted(expected), sorted(rows))


def test_the_roofline_uses_the_devices_peaks_and_says_when_it_has_none(tmp_path):
    path = TRACELENS / "h100_Qwen_Qwen1.5-0.5B-Chat.json.gz"
    if not path.exists():
        pytest.skip("the shared TraceLens traces are not beside this checkout")
    h100 = analyze(path, AnalyzeOptions(load=LoadOptions()))
    assert h100.hardware.name == "h100-sxm" and h100.hardware.values["peak_flops_bf16"] == pytest.approx(989.4e12)
    # a GEMM cannot beat max(FLOPs / peak, bytes / bandwidth): its roofline time is at most its time
    assert 0 < h100.value("matmul_roofline_time") <= h100.value("matmul_time")
    assert h100.value("op_tied_fraction") == pytest.approx(0.6887, abs=0.001)


def _gemm_trace(device: str) -> dict:
    """Ten bf16 GEMMs of [4096, 4096] x [4096, 4096], each 200 µs, on a device of this name."""
    events = []
    for i in range(10):
        at = 10.0 + 300 * i
        events += [
            {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": at, "dur": 20,
             "args": {"External id": 100 + i, "Input Dims": [[4096, 4096], [4096, 4096]], "Input type": [BF16, BF16],
                      "Concrete Inputs": ["", ""]}},
            {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": at + 5,
             "dur": 5, "args": {"External id": 100 + i, "correlation": 900 + i}},
            {"ph": "X", "cat": "kernel", "name": "sm90_xmma_gemm_bf16bf16_bf16f32", "pid": 0, "tid": 7,
             "ts": at + 30, "dur": 200, "args": {"device": 0, "stream": 7, "correlation": 900 + i}}]
    return {"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": device}], "traceEvents": events}


def test_a_device_the_table_lacks_gets_the_work_and_no_roofline(tmp_path):
    path = tmp_path / "gemms.json"
    path.write_text(json.dumps(_gemm_trace("NVIDIA Mystery GPU")))
    bare = analyze(path, AnalyzeOptions(load=LoadOptions()))
    flops = 10 * 2 * 4096**3
    assert bare.value("matmul_flops") == pytest.approx(flops) and bare.value("matmul_time") == pytest.approx(2e-3)
    assert bare.value("matmul_roofline_time") is None  # unavailable, never guessed
    top = bare.trace.breakdown("top_operators")
    assert top.value("aten::mm (c10::BFloat16)", "flops_rate") == pytest.approx(flops / 2e-3)
    assert top.value("aten::mm (c10::BFloat16)", "roofline_share") is None
    peaks = tmp_path / "mystery.yaml"
    peaks.write_text("name: mystery\nvalues: {peak_flops_bf16: 1.0e15, memory_bandwidth: 3.0e12}\n")
    given = analyze(path, AnalyzeOptions(load=LoadOptions(), hardware=str(peaks)))
    ideal = 10 * max(2 * 4096**3 / 1e15, 3 * 4096 * 4096 * 2 / 3e12)
    assert given.value("matmul_roofline_time") == pytest.approx(ideal)
    assert given.trace.breakdown("top_operators").value("aten::mm (c10::BFloat16)", "roofline_share") == \
        pytest.approx(ideal / 2e-3)


def test_a_trace_without_shapes_has_no_work_figures_and_loses_none_it_had(tmp_path):
    trace = _gemm_trace("NVIDIA H100 80GB HBM3")
    for event in trace["traceEvents"]:
        for key in ("Input Dims", "Input type", "Concrete Inputs"):
            event["args"].pop(key, None)
    path = tmp_path / "noshapes.json"
    path.write_text(json.dumps(trace))
    plain = analyze(path, AnalyzeOptions(load=LoadOptions()))
    assert plain.value("op_tied_fraction") == pytest.approx(1.0)  # tied, but nothing to model it with
    assert plain.value("op_modelled_fraction") == 0 and plain.value("matmul_flops") is None
    assert plain.value("device_busy") == pytest.approx(2e-3)


def test_compare_shows_which_operators_moved_and_toward_their_roofline(tmp_path):
    """Issue 35, item 6: a before/after names the operators that moved and whether toward their roofline."""
    from advisor.cli import main

    before, after = _gemm_trace("NVIDIA H100 80GB HBM3"), _gemm_trace("NVIDIA H100 80GB HBM3")
    for event in after["traceEvents"]:
        if event["cat"] == "kernel":
            event["dur"] = 100  # the same GEMMs, twice as fast
    paths = []
    for name, trace in (("before", before), ("after", after)):
        paths.append(tmp_path / f"{name}.json")
        paths[-1].write_text(json.dumps(trace))
    out = tmp_path / "compare.md"
    assert main(["compare", *map(str, paths), "-o", str(out), "--quiet"]) == 0
    text = out.read_text()
    section = text[text.index("## Top operators: share of the roofline reached"):]
    row = next(line for line in section.splitlines() if line.startswith("| aten::mm (c10::BFloat16)"))
    ideal = max(2 * 4096**3 / 989.4e12, 3 * 4096 * 4096 * 2 / 3.35e12)  # s per GEMM at the H100's roofline
    assert f"{100 * ideal / 200e-6:.2f} %" in row and f"{100 * ideal / 100e-6:.2f} %" in row and "better" in row
    assert "## Work by operator family: kernel time" in text


def _trace_of(ops: list[tuple[str, list, list, list, str, float]], device: str = "NVIDIA H100 80GB HBM3") -> dict:
    """A busy step: each (operator, dims, types, concrete, kernel name, kernel µs) launched once, back to back."""
    events, at, corr = [], 10.0, 1000
    for i, (op, dims, types, concrete, kernel, dur) in enumerate(ops):
        corr += 1
        events += [
            {"ph": "X", "cat": "cpu_op", "name": op, "pid": 1, "tid": 1, "ts": 5 + i, "dur": 0.5,
             "args": {"External id": corr, "Input Dims": dims, "Input type": types, "Concrete Inputs": concrete}},
            {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 5.1 + i,
             "dur": 0.3, "args": {"External id": corr, "correlation": corr}},
            {"ph": "X", "cat": "kernel", "name": kernel, "pid": 0, "tid": 7, "ts": at, "dur": dur,
             "args": {"device": 0, "stream": 7, "correlation": corr}}]
        at += dur + 1
    return {"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": device}], "traceEvents": events}


GEMM = ("aten::mm", [[4096, 4096], [4096, 4096]], [BF16, BF16], ["", ""], "sm90_xmma_gemm_bf16bf16_bf16f32")
FP32_GEMM = ("aten::mm", [[4096, 4096], [4096, 4096]], ["float", "float"], ["", ""], "ampere_sgemm_128x64_nn")
TF32_GEMM = ("aten::mm", [[4096, 4096], [4096, 4096]], ["float", "float"], ["", ""],
             "sm90_xmma_gemm_f32f32_tf32f32_f32_nn")
MUL = ("aten::mul", [[64, 1024, 1024], [64, 1024, 1024]], [BF16, BF16], ["", ""], "vectorized_elementwise_kernel")
SOFTMAX = ("aten::_softmax", [[16, 12, 1024, 1024], [], []], [BF16, "Scalar", "Scalar"], ["", "-1", "False"],
           "cunn_SoftMaxForward")
BMM = ("aten::bmm", [[192, 1024, 64], [192, 64, 1024]], [BF16, BF16], ["", ""], "sm90_xmma_gemm_bf16bf16_bf16f32")


def _fired(tmp_path, name: str, ops: list) -> dict:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(_trace_of(ops)))
    return {f.name: f for f in analyze(path, AnalyzeOptions(load=LoadOptions())).findings}


@pytest.mark.parametrize(("name", "ops", "fires", "passes"), [
    # FP32 GEMMs on the ordinary pipes (sgemm): fp32-matmul; the same on TF32 kernels: not
    ("fp32", [(*FP32_GEMM, 4000.0)] * 12, "fp32-matmul", None),
    ("tf32", [(*TF32_GEMM, 400.0)] * 12, None, "fp32-matmul"),
    # bf16 GEMMs at 14 % of their roofline (1 ms for 139 µs of work): below roofline; at 69 %: not
    ("slow-gemm", [(*GEMM, 1000.0)] * 12, "gemm-below-roofline", None),
    ("fast-gemm", [(*GEMM, 200.0)] * 12, None, "gemm-below-roofline"),
    # elementwise passes filling a busy device, beside GEMMs at their roofline
    ("elementwise", [(*GEMM, 200.0), (*MUL, 400.0), (*MUL, 400.0)] * 4, "unfused-elementwise", None),
    ("gemm-only", [(*GEMM, 200.0)] * 12, None, "unfused-elementwise"),
    # eager attention: bmm, softmax, bmm; with no softmax: not
    ("eager-attention", [(*BMM, 100.0), (*SOFTMAX, 300.0), (*BMM, 100.0)] * 4, "attention-not-fused", None),
    ("bmm-only", [(*BMM, 100.0)] * 12, None, "attention-not-fused"),
    # elementwise passes at 80 % of their bandwidth bound (402 MB each in 150 µs on 3.35 TB/s): memory-bound; at 30 %
    # they are not (and fusing them is unfused-elementwise's)
    ("at-bandwidth", [(*MUL, 150.0)] * 12, "memory-bound-op", None),
    ("below-bandwidth", [(*MUL, 400.0)] * 12, None, "memory-bound-op"),
])
def test_each_operator_rule_fires_on_the_shape_built_for_it_and_not_on_the_other(tmp_path, name, ops, fires,
                                                                                  passes):
    found = _fired(tmp_path, name, ops)
    if fires:
        assert fires in found, sorted(found)
        finding = found[fires]
        assert finding.severity == "info" or (finding.estimated_speedup is not None
                                              and 0 < finding.estimated_speedup <= 1)
    if passes:
        assert passes not in found, sorted(found)


def test_an_operator_estimate_claims_no_more_than_the_time_above_the_roofline(tmp_path):
    """gemm-below-roofline on twelve 1 ms bf16 GEMMs whose roofline is 139 µs each: 12 x 861 µs of the window."""
    found = _fired(tmp_path, "bound", [(*GEMM, 1000.0)] * 12)
    gemm = found["gemm-below-roofline"]
    roofline = max(2 * 4096**3 / 989.4e12, 3 * 4096 * 4096 * 2 / 3.35e12)
    window = 12 * 1001e-6 - 1e-6 + 10e-6 - 5e-6  # the trace's span: first launch at 5 µs to the last kernel's end
    assert gemm.estimated_speedup == pytest.approx(12 * (1000e-6 - roofline) / window, rel=1e-3)


def test_fusion_and_fused_attention_claim_the_softmax_once(tmp_path):
    """The softmax kernels of eager attention are a fused attention kernel's to remove (attention-not-fused); the
    fusion finding claims the other elementwise and normalisation time, so the two never count them twice."""
    found = _fired(tmp_path, "both", [(*BMM, 100.0), (*SOFTMAX, 300.0), (*MUL, 400.0), (*BMM, 100.0)] * 3)
    attention, fusion = found["attention-not-fused"], found["unfused-elementwise"]
    window = attention.estimated_speedup / (3 * 300e-6)  # 1 / total_time, from the softmax's own claim
    assert fusion.estimated_speedup == pytest.approx(3 * 400e-6 * window, rel=1e-6)  # the mul kernels only
    assert attention.estimated_speedup + fusion.estimated_speedup <= 1
