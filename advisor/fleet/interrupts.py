"""How the local cluster's processes stop without noise. The terminal sends Ctrl-C to the whole process group,
and only the client should handle it (one line, `advisor: error: interrupted`): the worker processes ignore it,
and closing the cluster ends them. A worker closes only because the run closes the cluster, and the run says
why itself; distributed logs a worker's connections cut while it closes (a heartbeat in flight) as an ERROR
with a traceback, so a closing worker logs nothing. A worker plugin, so a worker the cluster restarts does the
same."""

from __future__ import annotations

import logging
import signal
from concurrent.futures import InvalidStateError

from distributed.diagnostics.plugin import WorkerPlugin

_NOISY = ("tornado", "distributed", "asyncio")


def silence_dask_logs() -> None:
    """Nothing more from distributed, tornado or asyncio in this process (their child loggers too:
    distributed sets their levels)."""
    for name in [*_NOISY, *logging.root.manager.loggerDict]:
        if name.split(".")[0] in _NOISY:
            logging.getLogger(name).setLevel(logging.CRITICAL + 1)


class CancelledFutureNoise(logging.Filter):
    """Drops tornado's report of a future cancelled under it (`InvalidStateError: CANCELLED`), logged with a
    traceback when Ctrl-C cancels the client's calls in flight, sometimes before the run can silence the logs:
    a harmless race of the shutdown, never a problem of the run (which says "interrupted" itself)."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        return not (isinstance(error, InvalidStateError) and "CANCELLED" in str(error))


class QuietWorker(WorkerPlugin):
    """In each worker process of a local cluster: Ctrl-C is the client's to handle, and a closing worker is
    silent (see the module's note). `Worker.close` tears its plugins down before it closes its connections."""

    def setup(self, worker) -> None:
        import threading

        logging.getLogger("tornado.application").addFilter(CancelledFutureNoise())
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGINT, signal.SIG_IGN)

    def teardown(self, worker) -> None:
        silence_dask_logs()
