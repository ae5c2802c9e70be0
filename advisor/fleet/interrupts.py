"""The local cluster's worker processes ignore Ctrl-C: the terminal sends it to the whole process group, and
only the client should handle it (one line, `advisor: error: interrupted`); closing the cluster ends the
workers. A worker plugin, so a worker the cluster restarts ignores it too."""

from __future__ import annotations

import signal

from distributed.diagnostics.plugin import WorkerPlugin


class IgnoreInterrupt(WorkerPlugin):
    """In each worker process of a local cluster: Ctrl-C is the client's to handle (see the module's note)."""

    def setup(self, worker) -> None:
        import threading

        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGINT, signal.SIG_IGN)
