"""The cyclic garbage collector paused over work that allocates much and makes no cycles."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """The collector off inside, back on after (an exception or not) unless it was off before:
    for bounded work whose new objects are no garbage, which its passes would walk again and
    again (a command's imports, a block of a run log's lines read into rows)."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()
