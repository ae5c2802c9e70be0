"""The cycle collector, paused where a stage makes many objects it keeps (a trace's events, a report's
layout): each full pass rescans every live object, so a collector running as they pile up costs
several times the work itself."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """No collection inside; the collector's state before is restored after (nested pauses are fine)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
