"""Where a fleet's tasks run: a dask.distributed local cluster sized to the machine and to the work
(started and stopped with the run), an existing cluster by address, or this process for `--workers 1` or
a single profile.

Ctrl-C reaches every process of the terminal's group; only this process handles it (one line,
`advisor: error: interrupted`), and closing the cluster ends the workers quietly (advisor/fleet/interrupts.py)."""

from __future__ import annotations

import contextlib
import importlib
import logging
import os
from collections.abc import Iterator
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from dataclasses import dataclass

from advisor.core.errors import AdvisorError
from advisor.fleet.discover import run_settings
from advisor.fleet.run import SerialExecutor, SizedPool

WORKERS_PER_CORE = 4  # --workers above cores × this is refused: more processes only contend for the cores


def max_workers() -> int:
    return (os.cpu_count() or 1) * WORKERS_PER_CORE


@dataclass(frozen=True)
class LocalPool(SizedPool):
    """`executor(workers, scheduler)`, given the number of profiles to analyse when the run knows it."""

    workers: int | None
    scheduler: str | None

    def __call__(self, tasks: int) -> contextlib.AbstractContextManager[tuple[Executor, int]]:
        return executor(self.workers, self.scheduler, tasks)


@contextlib.contextmanager
def executor(workers: int | None, scheduler: str | None, tasks: int | None = None
             ) -> Iterator[tuple[Executor, int]]:
    """A `concurrent.futures` executor and how many tasks it runs at once (`workers` is ignored with a
    scheduler: the cluster has its own). A local cluster has no more workers than `tasks` (profiles to
    analyse), the core count by default; one profile runs in this process."""
    count = min(workers or os.cpu_count() or 1, tasks or max_workers())
    if scheduler is None and count <= 1:
        yield SerialExecutor(), 1
        return
    if scheduler is not None:
        from distributed import Client

        try:
            client = Client(scheduler, timeout="10s")
        except OSError as exc:
            raise AdvisorError("--scheduler", f"cannot reach {scheduler} ({exc})") from None
        with client:
            yield client.get_executor(), max(1, sum(client.nthreads().values()))
        return
    with ThreadPoolExecutor(1) as starter:
        started = starter.submit(_start_local, count)
        try:
            yield _Starting(started), count
        except BaseException:
            # A run stopped (Ctrl-C, an error) closes the cluster under tasks in flight: their connections close
            # mid-call, and distributed logs each with a traceback. The run's own one line says what happened.
            from advisor.fleet.interrupts import silence_dask_logs

            silence_dask_logs()
            raise
        finally:
            cluster, client = started.result()
            client.close()
            cluster.close()


def _start_local(count: int):
    """A local cluster and its client, the workers' imports done. Processes, one thread each: an analysis
    is pure-Python work that threads would serialise on the GIL. dask's settings for it are in
    advisor/data/fleet_run.yaml (`local_cluster:`): what the cluster spends on itself, the analyses do not
    get. The dashboard takes any free port rather than warn that 8787 is taken."""
    import dask
    from distributed import Client, LocalCluster

    with dask.config.set(run_settings()["local_cluster"]["dask"]):
        cluster = LocalCluster(n_workers=count, threads_per_worker=1, processes=True, dashboard_address=":0",
                               silence_logs=logging.ERROR)
    client = Client(cluster)
    from advisor.fleet.interrupts import CancelledFutureNoise, QuietWorker  # dask's plugin base: with a cluster

    logging.getLogger("tornado.application").addFilter(CancelledFutureNoise())
    client.register_plugin(QuietWorker())
    client.run(importlib.import_module, "advisor.fleet.run")
    return cluster, client


class _Starting(Executor):
    """The local cluster's executor while the cluster starts in the background (the run hashes its files
    meanwhile): the first task waits for it."""

    def __init__(self, started: Future):
        self._started = started
        self._executor: Executor | None = None

    def submit(self, fn, /, *args, **kwargs) -> Future:
        if self._executor is None:
            self._executor = self._started.result()[1].get_executor()
        return self._executor.submit(fn, *args, **kwargs)
