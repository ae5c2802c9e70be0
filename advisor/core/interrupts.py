"""Ctrl-C as a flag as well as a KeyboardInterrupt. Python drops a KeyboardInterrupt that arrives while a
garbage-collector callback or a __del__ runs ("Exception ignored in …" on stderr), and dask registers such a
callback: a run would then go on as if nothing happened. The lost exception is not printed, long loops check
the flag, and the command ends as interrupted even when the exception itself was lost."""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType


class Interrupts:
    def __init__(self) -> None:
        self.seen = False

    @contextmanager
    def installed(self) -> Iterator[Interrupts]:
        """The SIGINT handler for the duration, where one can be installed (the main thread), then the one
        before it again (tests run commands in-process)."""
        if threading.current_thread() is not threading.main_thread():
            yield self
            return
        before, unraisable = signal.signal(signal.SIGINT, self._handler), sys.unraisablehook
        sys.unraisablehook = lambda info: None if info.exc_type is KeyboardInterrupt else unraisable(info)
        try:
            yield self
        finally:
            signal.signal(signal.SIGINT, before)
            sys.unraisablehook = unraisable

    def _handler(self, signum: int, frame: FrameType | None) -> None:
        self.seen = True
        raise KeyboardInterrupt

    def check(self) -> None:
        """A KeyboardInterrupt now when Ctrl-C was pressed, whatever became of the first one."""
        if self.seen:
            raise KeyboardInterrupt
