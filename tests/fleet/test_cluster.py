"""The local cluster a fleet run starts: its workers analyse as the client process would."""

from __future__ import annotations

import os

import dask

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
