"""The local cluster a fleet run starts: its workers analyse as the client process would."""

from __future__ import annotations

import os

import dask
from distributed import default_client
from distributed.diagnostics.plugin import WorkerPlugin

from advisor.fleet.cluster import executor


def _settings() -> tuple[str | None, str, str, bool]:
    return (os.environ.get("MALLOC_TRIM_THRESHOLD_"), dask.config.get("distributed.admin.tick.interval"),
            dask.config.get("distributed.worker.memory.monitor-interval"),
            dask.config.get("distributed.worker.profile.enabled"))


def test_the_local_clusters_workers_run_with_the_fleets_dask_settings():
    # dask starts workers with MALLOC_TRIM_THRESHOLD_=65536, which made each analysis 8 % slower there than in
    # the client: the workers inherit the client's setting (unset unless the user set it). Each process wakes
    # once a second (not every 20 ms) to time its event loop, memory is polled every 500 ms (not 100 ms), and
    # no task's stack is sampled (advisor/data/fleet_run.yaml, `local_cluster:`).
    with executor(2, None) as (pool, width):
        seen = {pool.submit(_settings).result() for _ in range(4)}
    assert width == 2 and seen == {(os.environ.get("MALLOC_TRIM_THRESHOLD_"), "1s", "500ms", False)}


class _LogsWhileClosing(WorkerPlugin):
    """What distributed logs when a worker closes under a heartbeat still in flight: `Worker.close` removes the
    plugins, then closes its connections, and the heartbeat's read fails (CommClosedError, logged as an ERROR
    with its traceback). This plugin logs the same from its teardown, which runs after the fleet's own."""

    def teardown(self, worker) -> None:
        import logging

        try:
            raise OSError("Stream is closed")
        except OSError:
            logging.getLogger("distributed.worker").exception("Failed to communicate with scheduler during heartbeat.")


def test_a_closing_worker_prints_nothing(capfd):
    # Seen in CI: Ctrl-C during `advisor fleet` printed a worker's heartbeat traceback under the one line
    # `advisor: error: interrupted`. A worker of the local cluster closes only because the run closes the
    # cluster, and the run says why itself; whatever distributed logs while a worker closes is noise.
    with executor(2, None) as (pool, _):
        pool.submit(int).result()  # the cluster is up
        default_client().register_plugin(_LogsWhileClosing())  # the run's client
        capfd.readouterr()
    err = capfd.readouterr().err
    assert "Failed to communicate" not in err and "Traceback" not in err, err
