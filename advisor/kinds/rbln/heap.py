"""Free C heap handed back to the system between the stages of a large trace's analysis.

numpy's columns of a few MB come from glibc's heap once a freed one has raised malloc's mmap threshold,
and the heap keeps what they leave (a stage's temporaries, holes between live arrays) until trimmed:
at the size of a 500 MB trace that is 50–150 MiB more resident memory than live data. Trimming at a
stage's end costs milliseconds; a fixed mmap threshold instead (every large array mapped and unmapped)
costs about 10 % of the run in page faults."""

from __future__ import annotations

from contextlib import suppress


def release_heap() -> None:
    """Hand the C heap's free pages back to the system (glibc's malloc_trim; elsewhere nothing)."""
    import ctypes

    with suppress(OSError, AttributeError):  # not glibc: nothing to do
        ctypes.CDLL(None).malloc_trim(0)
