"""Who draws a document's charts. In this process by default; a command that will render charts can
open a drawing process first: it loads matplotlib while this one analyses the input, then draws while
this one loads WeasyPrint, so a report waits for the longer of the two paths instead of their sum."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from functools import partial
from typing import Protocol

from advisor.report.charts import ChartJob, draw, warm_up

Drawn = Callable[[], bytes]  # waits for one chart and gives it (PNG or SVG bytes)


class Drawer(Protocol):
    def start(self, jobs: Sequence[ChartJob]) -> list[Drawn]:
        """Begins drawing `jobs`; one function per job waits for its chart."""


class LocalDrawer:
    """Draws in this process, when a chart is asked for."""

    def start(self, jobs: Sequence[ChartJob]) -> list[Drawn]:
        return [partial(draw, job) for job in jobs]


class ProcessDrawer:
    """Draws in `executor`'s process, in order, so the first chart is ready before the last; a chart whose
    process died is drawn here instead."""

    def __init__(self, executor: Executor) -> None:
        self.executor = executor

    def start(self, jobs: Sequence[ChartJob]) -> list[Drawn]:
        try:
            futures = [self.executor.submit(draw, job) for job in jobs]
        except (BrokenProcessPool, RuntimeError):  # died, or already shut down
            return LocalDrawer().start(jobs)

        def drawn(future: Future, job: ChartJob) -> bytes:
            try:
                return future.result()
            except BrokenProcessPool:
                return draw(job)

        return [partial(drawn, future, job) for future, job in zip(futures, jobs, strict=True)]


def usable_cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _start_drawing_process(parent: int) -> None:
    """Ctrl-C reaches the whole process group: the command stops this process itself (else it would print
    a traceback of its own). No cycle collector: the process lives for one command and draws a handful of
    charts, and the collector's passes over matplotlib's objects as it loads cost 15 % of the work. It
    ends with the command even when the command is killed outright (SIGKILL): the kernel signals it."""
    import gc
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    gc.disable()
    _end_with_parent(parent)


PR_SET_PDEATHSIG = 1  # linux/prctl.h


def _end_with_parent(parent: int) -> None:
    """Linux: SIGKILL this process when the process that started it dies (prctl PR_SET_PDEATHSIG); a parent
    already gone before that was set is caught by comparing the parent's pid."""
    import signal

    if sys.platform.startswith("linux"):
        import ctypes

        try:
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):
            return
    if os.getppid() != parent:
        os._exit(1)


@contextmanager
def drawing_process(wanted: bool = True) -> Iterator[Drawer]:
    """A drawer for one command: a separate process where `wanted` and a second core is there to run it,
    else this process. The process starts loading matplotlib at once. It is forked on Linux when this
    process has no other thread (a command opens it first thing, before any heavy import): that is safe
    and saves starting a new interpreter (0.1 s of a PDF report); otherwise it is spawned."""
    if not wanted or usable_cores() < 2:
        yield LocalDrawer()
        return
    import multiprocessing
    import threading

    start = "fork" if sys.platform.startswith("linux") and threading.active_count() == 1 else "spawn"
    executor = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context(start),
                                   initializer=_start_drawing_process, initargs=(os.getpid(),))
    executor.submit(warm_up)
    try:
        yield ProcessDrawer(executor)
    except BaseException:  # bad input, Ctrl-C: the error now, not after matplotlib has loaded
        _stop(executor)
        raise
    executor.shutdown(wait=True, cancel_futures=True)


def _stop(executor: ProcessPoolExecutor) -> None:
    """Ends the process whatever it is doing (shutdown would wait for a running task)."""
    if hasattr(executor, "terminate_workers"):  # Python 3.14
        executor.terminate_workers()
        return
    for process in list(getattr(executor, "_processes", {}).values()):  # before 3.14, no public way
        process.terminate()
    executor.shutdown(wait=True, cancel_futures=True)
