"""Handing the C heap back between stages: glibc's malloc_trim on Linux, nothing elsewhere, never an error."""

from __future__ import annotations

import ctypes
import sys

from advisor.profilers.rbln import heap


def test_outside_linux_nothing_is_looked_up_and_nothing_fails(monkeypatch):
    def windows_cdll(*args, **kwargs):  # CPython on Windows: CDLL(None) raises TypeError
        raise TypeError("argument of type 'NoneType' is not iterable")

    monkeypatch.setattr(sys, "platform", "win32")
    monkeypatch.setattr(ctypes, "CDLL", windows_cdll)
    heap._malloc_trim.cache_clear()
    try:
        assert heap.release_heap() is None and heap._malloc_trim() is None
    finally:
        heap._malloc_trim.cache_clear()


def test_on_linux_the_trim_is_looked_up_once(monkeypatch):
    calls = []
    real = ctypes.CDLL

    def counting(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setattr(ctypes, "CDLL", counting)
    heap._malloc_trim.cache_clear()
    try:
        heap.release_heap()
        heap.release_heap()
    finally:
        heap._malloc_trim.cache_clear()
    assert calls == [(None,)]
