import gc

from advisor.core.collector import collector_paused


def test_the_collector_is_paused_inside_and_as_it_was_after():
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the inner pause does not end the outer one
    assert gc.isenabled()
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()  # a collector that was off stays off
    finally:
        gc.enable()
