"""Free C heap handed back to the system between the stages of a large trace's analysis.

numpy's columns of a few MB come from glibc's heap once a freed one has raised malloc's mmap threshold,
and the heap keeps what they leave (a stage's temporaries, holes between live arrays) until trimmed:
at the size of a 500 MB trace that is 50–150 MiB more resident memory than live data. Trimming at a
stage's end costs milliseconds; a fixed mmap threshold instead (every large array mapped and unmapped)
costs about 10 % of the run in page faults."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from contextlib import suppress


def release_heap() -> None:
    """Hand the C heap's free pages back to the system (glibc's malloc_trim; elsewhere nothing)."""
    if (trim := _malloc_trim()) is not None:
        trim(0)


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's malloc_trim, looked up once; None elsewhere (macOS, musl, Windows, where CDLL(None) itself
    raises TypeError)."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    with suppress(OSError, AttributeError):  # musl has no malloc_trim
        return ctypes.CDLL(None).malloc_trim
    return None
