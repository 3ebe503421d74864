"""``collector_paused``: the collector off inside, back on after, a caller's choice kept."""

from __future__ import annotations

import gc

import pytest

from pastcast.collector import collector_paused


def test_the_collector_is_off_inside_and_back_on_after_an_error_or_not() -> None:
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(KeyError), collector_paused():
        raise KeyError("x")
    assert gc.isenabled()


def test_a_collector_the_caller_turned_off_stays_off() -> None:
    gc.disable()
    try:
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()
