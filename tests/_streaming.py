"""Readers that stream a run log's records: a guard that fails a reader which reads a whole log as
records (``read_run_log``) or holds more than a few records at once, and a small synthetic run
log in the shape of the benchmarks' (``benchmarks/synthetic_runs.py``)."""

from __future__ import annotations

import sys
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]

MAX_LIVE = 3
"""Full records a streaming reader may hold at once (the one it reads, the one it just read)."""


@dataclass
class Streamed:
    parsed: int = 0
    live: int = 0
    max_live: int = 0


@contextmanager
def records_streamed(monkeypatch: pytest.MonkeyPatch) -> Iterator[Streamed]:
    """Inside: reading a whole log as records (``read_run_log``, whoever calls it) fails, and
    every record read by offset is counted while it is alive (``max_live``: the most alive at
    once)."""
    import pastcast.runlog._columns as columns
    import pastcast.runlog._io as io

    def refuse(*_: Any, **__: Any) -> Any:
        raise AssertionError("a whole run log was read as records")

    seen = Streamed()
    parse = columns._parse

    def gone() -> None:
        seen.live -= 1

    def counted(*args: Any, **kwargs: Any) -> Any:
        record = parse(*args, **kwargs)
        seen.parsed += 1
        seen.live += 1
        seen.max_live = max(seen.max_live, seen.live)
        weakref.finalize(record, gone)
        return record

    monkeypatch.setattr(io, "_objects", refuse)  # every line of a step file, as records
    monkeypatch.setattr(columns, "_parse", counted)
    yield seen
    monkeypatch.undo()


def synthetic_run(path: Path, steps: int = 200) -> Path:
    """A synthetic run log of about ``steps`` steps (``synthetic_runs.write_run``): model-driven
    agents with tool calls and notebooks in two settings, a baseline and the market."""
    bench = str(REPO_ROOT / "benchmarks")
    if bench not in sys.path:
        sys.path.insert(0, bench)
    from synthetic_runs import write_run

    path.parent.mkdir(parents=True, exist_ok=True)
    write_run(path, steps)
    return path
