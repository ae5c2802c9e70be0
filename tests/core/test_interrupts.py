"""Ctrl-C lost inside a gc callback or __del__ still ends the command as interrupted, without a traceback."""

import signal

import pytest

from advisor.core.interrupts import Interrupts


class _Dropped:
    def __del__(self):
        raise KeyboardInterrupt  # what a SIGINT arriving during a gc callback looks like: Python drops it


def test_a_dropped_interrupt_is_silent_and_still_ends_the_command(capsys):
    with Interrupts().installed() as interrupts:
        interrupts.seen = True  # the handler ran, its exception raised inside __del__ below
        _Dropped()
        with pytest.raises(KeyboardInterrupt):
            interrupts.check()
    assert capsys.readouterr().err == ""


def test_the_handler_raises_and_is_removed_afterwards():
    before = signal.getsignal(signal.SIGINT)
    with Interrupts().installed() as interrupts:
        with pytest.raises(KeyboardInterrupt):
            signal.raise_signal(signal.SIGINT)
        assert interrupts.seen
    assert signal.getsignal(signal.SIGINT) is before
