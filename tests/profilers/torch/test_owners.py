"""One owner for each piece of host-wait idle time: the data loader's part, the part after a synchronisation (to
the next one, no longer than the sync), and the rest; and the steps' spread less the loader's idle. Times given
in µs, metrics in s, counts and fractions."""

import importlib.util
from pathlib import Path

import pytest

from advisor.profilers.torch.events import summarize

_spec = importlib.util.spec_from_file_location("torch_builders", Path(__file__).with_name("builders.py"))
builders = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(builders)
US = 1e-6
LOADER = "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__"


def us(value):
    return pytest.approx(value * US, rel=1e-9, abs=1e-15)


def item_then_loader(blocked_from: float) -> builders.TraceBuilder:
    """A step: a kernel 0–30 µs; loss.item() blocked from `blocked_from` to 31 µs; the loader 32–60 µs; the next
    kernel launched at 61 µs runs 62–90 µs; nothing queued after it. Host-wait gaps: 30–62 and 90–100 µs."""
    b = builders.TraceBuilder().step(1, 0, 100)
    b.launch("gemm", 0, 1, 0, 30).cpu_op("aten::item", blocked_from, 31 - blocked_from)
    b.annotation(LOADER, 32, 28)
    return b.launch("relu", 61, 1, 62, 28)


def test_the_loader_owns_its_idle_and_the_sync_owns_the_rest_after_it():
    _, m = summarize(item_then_loader(5).build())
    assert m["idle_host_wait"] == us(42)
    assert m["dataloader_idle_fraction"] == pytest.approx(28 / 100)  # 32–60 µs
    assert m["sync_idle"] == us(14)  # 30–32, 60–62 and 90–100 µs: blocked 26 µs, so all of it
    assert m["sync_idle_fraction"] == pytest.approx(14 / 100)
    assert m["idle_host_wait_other"] == us(0)


def test_a_sync_claims_no_more_idle_than_it_blocked_the_host():
    _, m = summarize(item_then_loader(29).build())  # blocked 2 µs: the host could have run ahead by 2 µs only
    assert m["sync_idle"] == us(2)
    assert m["idle_host_wait_other"] == us(12)
    assert m["dataloader_idle_fraction"] == pytest.approx(0.28)


def test_idle_before_the_first_sync_is_not_the_syncs():
    b = builders.TraceBuilder().step(1, 0, 100).launch("gemm", 20, 1, 40, 30)  # idle 0–40 µs, nothing queued
    b.runtime("cudaDeviceSynchronize", 50, 21)  # returns at 71 µs; idle 70–100 µs after it
    _, m = summarize(b.build())
    assert m["idle_host_wait"] == us(70)
    assert m["sync_idle"] == us(21)  # 70–100 µs, capped at the 21 µs blocked
    assert m["idle_host_wait_other"] == us(49)


def test_loader_sync_and_other_parts_add_up_to_the_host_wait():
    _, m = summarize(item_then_loader(20).build())
    loader = m["dataloader_idle_fraction"] * 100 * US
    assert loader + m["sync_idle"] + m["idle_host_wait_other"] == us(42)


def test_queued_work_is_not_the_loaders():
    # the loader runs while a kernel queued before it waits on another stream's work: not host wait
    b = builders.TraceBuilder().step(1, 0, 100).launch("gemm", 0, 1, 0, 10)
    b.launch("relu", 5, 1, 40, 60).annotation(LOADER, 10, 30)
    _, m = summarize(b.build())
    assert m["idle_other"] == us(30)
    assert m["dataloader_idle_fraction"] == pytest.approx(0.0)


def alternating_loader(steps: int, wait: float) -> builders.TraceBuilder:
    """Steps of 30 µs of kernels; every other step first waits `wait` µs for the loader, the device idle."""
    b, t = builders.TraceBuilder(), 0.0
    for n in range(steps):
        late = wait if n % 2 else 0.0
        b.step(n + 1, t, 30 + late)
        if late:
            b.annotation(LOADER, t, late)
        b.launch("gemm", t + late, 0.5, t + late + 1, 29)
        t += 30 + late
    return b


def test_a_spread_the_loader_explains_is_not_left_after_its_idle():
    _, m = summarize(alternating_loader(8, 30).build())
    assert m["step_time_cv"] == pytest.approx(15 * (8 / 7) ** 0.5 / 45)  # four steps of 30 µs, four of 60
    assert m["loader_free_step_cv"] == pytest.approx(0.0, abs=1e-9)
    assert m["loader_free_step_excess"] == us(0)


def test_without_a_loader_the_loader_free_spread_is_the_spread():
    b = builders.TraceBuilder()
    for n, (t, d) in enumerate(((0, 30), (30, 60), (90, 30), (120, 30))):
        b.step(n + 1, t, d).launch("gemm", t, 0.5, t + 1, d - 2)
    _, m = summarize(b.build())
    assert m["loader_free_step_cv"] == pytest.approx(m["step_time_cv"])
    assert m["loader_free_step_excess"] == us(4 * (37.5 - 30))


def test_a_cpu_only_trace_has_its_steps_spread_and_no_owned_idle():
    b = builders.TraceBuilder().step(1, 0, 30).step(2, 30, 60).step(3, 90, 30).annotation(LOADER, 30, 30)
    _, m = summarize(b.build())
    assert m["loader_free_step_cv"] == pytest.approx(m["step_time_cv"])
    assert m["sync_idle"] is None and m["idle_host_wait_other"] is None and m["dataloader_idle_fraction"] is None
