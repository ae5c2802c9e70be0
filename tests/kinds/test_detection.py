"""Detection you can predict: every bundled sample is claimed by exactly one kind, and a nearly-right file by
none (issue 24: Neuron claimed any JSON with a `total_time` key)."""

import gzip
import json

import pytest
from tests_support import SAMPLES

from advisor.kinds import _head, available

SKIP = {"README.md", ".advisor-written.json"}
KINDS = [k for k in available() if k.name != "toy"]


def claimants(path):
    head = _head(path)
    return [k.name for k in KINDS if k.module("adapters").detect(path, head)]


def inputs():
    """Each sample folder a kind reads as one input, and every file in the folders."""
    found = []
    for folder in sorted(p for p in SAMPLES.iterdir() if p.is_dir()):
        if claimants(folder):
            found.append(folder)
        found.extend(p for p in sorted(folder.iterdir())
                     if p.is_file() and p.name not in SKIP and p.suffix not in (".py", ".yaml", ".parquet"))
    return found


@pytest.mark.parametrize("path", inputs(), ids=lambda p: str(p.relative_to(SAMPLES)))
def test_every_sample_is_claimed_by_exactly_one_kind(path):
    assert len(claimants(path)) == 1, claimants(path)


NEARLY = {
    "total_time.json": json.dumps({"total_time": 0.5, "traceEvents": []}),
    "generic_dma.json": json.dumps({"dma_count": 3, "flops": 1e9, "kernel_name": "k"}),
    # Chrome traces that are not PyTorch's (Kineto's): nothing only Kineto writes (docs/torch.md, Inputs)
    "chrome_empty.json": json.dumps({"traceEvents": []}),
    "chrome_kernel.json": json.dumps({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1.0,
                                                       "dur": 2.0}]}),
    "jax_trace.json": json.dumps({"displayTimeUnit": "ns", "metadata": {"highres-ticks": True},
                                  "traceEvents": [{"ph": "X", "pid": 1, "name": "fusion", "ts": 1, "dur": 2}]}),
    "legacy_profiler.json": json.dumps([{"name": "aten::add", "ph": "X", "cat": "cpu_op", "ts": 1, "dur": 2}]),
    "kineto_no_events.json": json.dumps({"schemaVersion": 1, "deviceProperties": []}),
    "csv_like.csv": '"ID","Process ID","Kernel Name"\n"0","1","k"\n',
    "text.txt": "total_time: 1.0\nnothing else a profiler writes\n",
}


@pytest.mark.parametrize("name", sorted(NEARLY))
def test_a_nearly_right_file_is_claimed_by_none(tmp_path, name):
    path = tmp_path / name
    path.write_text(NEARLY[name])
    assert claimants(path) == []


def test_a_gzip_that_is_not_a_perfetto_trace_is_claimed_by_none(tmp_path):
    path = tmp_path / "trace.pb.gz"
    path.write_bytes(gzip.compress(b'{"traceEvents": []}'))
    assert claimants(path) == []


def test_a_json_trace_is_told_from_a_perfetto_trace_without_loading_the_protos():
    """A JSON trace's first line break is 0x0A, a Perfetto packet's first byte: the RBLN sniff tells them apart
    before it imports the Perfetto protos (60 ms of every PyTorch-profiler report's start-up)."""
    import subprocess
    import sys

    trace = SAMPLES / "torch_a100_ddp" / "a100_ddp_rank0_of2.json.gz"
    code = ("import sys; from pathlib import Path; from advisor.kinds import detect; "
            f"print(detect(Path({str(trace)!r})).name, 'perfetto.protos' in ' '.join(sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["torch", "False"]
