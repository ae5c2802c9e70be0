"""advisor's figures against HTA's (Meta's HolisticTraceAnalysis, PyPI `HolisticTraceAnalysis`) on the real traces
of samples/torch_*, under the same choices: HTA keeps the last profiler step (include_last_profiler_step=True)
and the nanoseconds (HTA_DISABLE_NS_ROUNDING=1), and advisor's interval unions are taken over HTA's window (the
device events HTA keeps, from the first one's start to the last one's end) and, for MTIA, count its event_wait
as compute as HTA does. Then the temporal breakdown (idle, compute, non-compute shares), the communication/
computation overlap and the count of kernels shorter than their launch agree within 0.5 percentage points
(or exactly, for counts). The differences under each tool's own choices are in docs/torch.md.

HTA is never a dependency of advisor: the test runs it where it is importable, or in the interpreter named by
ADVISOR_HTA_PYTHON (a throwaway venv: `pip install HolisticTraceAnalysis`), and skips saying so elsewhere."""

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from advisor.profilers.torch.classes import knowledge
from advisor.profilers.torch.comm import masks
from advisor.profilers.torch.device import build
from advisor.profilers.torch.launches import link, runtime
from advisor.profilers.torch.window import window

SAMPLES = Path(__file__).resolve().parents[3] / "samples"
TRACES = {"a100_ddp": "torch_a100_ddp/a100_ddp_rank0_of2.json.gz",
          "a100_cold_start": "torch_a100_cold_start/a100_alexnet_cold_start.json.gz",
          "amd_mi250": "torch_amd_mi250/amd_mi250_minitoy_train.json.gz",
          "mtia_inference": "torch_mtia_inference/mtia_inference_rank0.json.gz",
          "sampled_rank0": "torch_sampled_ranks/rank-0.json.gz",
          "sampled_rank1": "torch_sampled_ranks/rank-1.json.gz"}
PP = 0.5  # percentage points
RUNNER = r"""
import json, logging, os, shutil, sys, tempfile, warnings
warnings.filterwarnings("ignore")
logging.disable(logging.WARNING)
from hta.trace_analysis import TraceAnalysis
folder = tempfile.mkdtemp()
shutil.copy(sys.argv[1], folder)
ta = TraceAnalysis(trace_dir=folder, include_last_profiler_step=True)
rank = ta.t.get_ranks()[0]
t = ta.get_temporal_breakdown(visualize=False).iloc[0]
o = ta.get_comm_comp_overlap(visualize=False).iloc[0]["comp_comm_overlap_pctg"]
s = ta.get_cuda_kernel_launch_stats(ranks=[rank], include_memory_events=False, visualize=False)[rank]
print(json.dumps({"idle": t["idle_time_pctg"], "compute": t["compute_time_pctg"],
                  "non_compute": t["non_compute_time_pctg"], "span_us": float(t["kernel_time(us)"]),
                  "overlap": None if o != o else float(o), "short": int((s.gpu_duration < s.cpu_duration).sum())}))
"""


def _hta_python():
    if importlib.util.find_spec("hta") is not None:
        return sys.executable
    chosen = os.environ.get("ADVISOR_HTA_PYTHON")
    if not chosen:
        pytest.skip("HTA (PyPI HolisticTraceAnalysis) is not installed here: set ADVISOR_HTA_PYTHON to a Python "
                    "that has it to compare advisor's figures with HTA's")
    return chosen


def hta(path):
    env = {**os.environ, "HTA_DISABLE_NS_ROUNDING": "1"}
    done = subprocess.run([_hta_python(), "-c", RUNNER, str(path)], capture_output=True, text=True, env=env,
                          timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def advisor_under_htas_window(trace, waits_are_compute):
    """advisor's unions over HTA's window: the device events launched by the time the last step ends (all of them
    without steps), from the first one's start to the last one's end; percentages as HTA gives them."""
    know = knowledge()
    steps = window(trace, know)
    whole = build(trace, know, 0.0, np.inf)
    links = link(whole, runtime(trace, know))
    keep = links.queued <= steps.step_end.max() if steps.from_steps else np.ones(len(whole), dtype=bool)
    if not waits_are_compute:
        keep &= ~whole.wait
    w0, w1 = float(whole.start[keep].min()), float(whole.end[keep].max())
    dev = build(trace, know, w0, w1)  # the same rows in the same order, cut to HTA's span
    compute, comm, _ = masks(dev, know)
    if waits_are_compute:
        compute = compute | dev.wait
    span, busy, comp = w1 - w0, dev.union(keep), dev.union(compute & keep)
    k, both = dev.union(comm & keep), dev.union((compute | comm) & keep)
    launched = dev.kernels() & keep & links.by_launch
    short = int(((dev.end - dev.start)[launched] < links.call_duration[launched]).sum())
    return {"idle": 100 * (span - busy) / span, "compute": 100 * comp / span,
            "non_compute": 100 * (busy - comp) / span, "span_us": span / 1e3,
            "overlap": 100 * (comp + k - both) / k if k else None, "short": short}


@pytest.mark.parametrize("name", TRACES)
def test_advisor_agrees_with_hta_under_the_same_window_choices(name):
    path = SAMPLES / TRACES[name]
    theirs = hta(path)
    from advisor.kinds.base import LoadOptions
    from advisor.profilers.torch.adapters import load

    (profile,) = load(path, LoadOptions())
    ours = advisor_under_htas_window(profile.trace, waits_are_compute=name == "mtia_inference")
    for key in ("idle", "compute", "non_compute"):
        assert ours[key] == pytest.approx(theirs[key], abs=PP), key
    if name != "a100_cold_start":  # HTA's span there also covers its cuda_sync events (advisor: not device work)
        assert ours["span_us"] == pytest.approx(theirs["span_us"], rel=1e-6)
    if theirs["overlap"] is None:
        assert ours["overlap"] is None
    else:
        assert ours["overlap"] == pytest.approx(theirs["overlap"], abs=PP)
    if name != "amd_mi250":  # HTA's launch statistics know no hipLaunchKernel: it finds no launches there
        assert ours["short"] == theirs["short"]
