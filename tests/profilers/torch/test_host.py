"""Host-side figures: device synchronisations (nested calls count once) and the data loader, with the device idle
while it runs. Times given in µs, metrics in s, counts and fractions."""

import importlib.util
from pathlib import Path

import pytest

from advisor.profilers.torch.events import summarize

_spec = importlib.util.spec_from_file_location("torch_builders", Path(__file__).with_name("builders.py"))
builders = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(builders)
US = 1e-6
LOADER = "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"


def us(value):
    return pytest.approx(value * US, rel=1e-9, abs=1e-15)


def test_an_item_call_and_the_syncs_inside_it_are_one_blocking_episode():
    b = builders.TraceBuilder().step(1, 0, 100).step(2, 100, 100).kernel("gemm", 0, 5)
    b.cpu_op("aten::item", 10, 20).cpu_op("aten::_local_scalar_dense", 12, 16)
    b.runtime("cudaStreamSynchronize", 14, 13)
    b.runtime("cudaDeviceSynchronize", 150, 10)
    b.runtime("cudaLaunchKernel", 40, 5)  # not a sync
    _, m = summarize(b.build())
    assert m["sync_count"] == 2
    assert m["sync_time"] == us(30)
    assert m["sync_fraction"] == pytest.approx(30 / 200)
    assert m["sync_per_step"] == pytest.approx(1.0)


def test_syncs_without_steps_have_no_per_step_figure():
    b = builders.TraceBuilder().kernel("gemm", 0, 5).runtime("cudaStreamSynchronize", 10, 5)
    _, m = summarize(b.build())
    assert m["sync_count"] == 1 and m["sync_per_step"] is None


def test_data_loader_time_and_the_device_idle_while_it_runs():
    b = builders.TraceBuilder().step(1, 0, 100)
    b.annotation(LOADER, 0, 20)  # the kernel, launched at 8 µs, runs from 10 µs: 10 µs of the loader leave it idle
    b.cpu_op(LOADER, 60, 10)  # the mark can be an op too; no device work then
    b.launch("gemm", 8, 1, 10, 40)
    _, m = summarize(b.build())
    assert m["dataloader_time"] == us(30)
    assert m["dataloader_fraction"] == pytest.approx(0.3)
    assert m["dataloader_idle_fraction"] == pytest.approx(0.2)


def test_host_figures_of_a_cpu_only_trace():
    b = builders.TraceBuilder().step(1, 0, 100).annotation(LOADER, 0, 20).cpu_op("aten::item", 30, 5)
    _, m = summarize(b.build())
    assert m["dataloader_time"] == us(20)
    assert m["dataloader_idle_fraction"] is None  # no device to be idle
    assert m["sync_count"] is None  # no device to synchronise with
