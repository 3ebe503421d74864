"""The runner's rule for isolated agents: episodes at different cutoffs are never in flight at
once (covert channels that cannot be closed then carry nothing the receiver does not know), while
episodes at one cutoff, and agents that are not isolated, still run in parallel."""

from __future__ import annotations

import threading
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from _tiny import ListBackend, tiny_dataset, tiny_documents
from pastcast.agents import agent_info, agent_spec, register_agent
from pastcast.records import Forecast
from pastcast.runner import RunConfig, run_benchmark

_windows: list[tuple[str, datetime, float, float]] = []
_lock = threading.Lock()


class _Timed:
    """Holds each episode a moment and notes when it ran."""

    def __init__(self, name: str) -> None:
        self.name = name

    def forecast(self, episode: Any) -> Forecast:
        start = time.monotonic()
        time.sleep(0.2)
        with _lock:
            _windows.append((self.name, episode.question.cutoff, start, time.monotonic()))
        return Forecast(probs={label: 1.0 for label in episode.question.labels})


register_agent("gate-probe-isolated", isolated=True)(lambda: _Timed("isolated"))
register_agent("gate-probe-plain")(lambda: _Timed("plain"))


def _overlaps(name: str) -> tuple[int, int]:
    """(pairs in flight together at different cutoffs, at the same cutoff) of agent ``name``."""
    mine = [w for w in _windows if w[0] == name]
    differ = same = 0
    for i, (_, cut_a, a0, a1) in enumerate(mine):
        for _, cut_b, b0, b1 in mine[i + 1 :]:
            if a0 < b1 and b0 < a1:
                differ += cut_a != cut_b
                same += cut_a == cut_b
    return differ, same


def _run(tmp_path: Path, *names: str, rollouts: int = 1) -> None:
    _windows.clear()
    config = RunConfig(agents=tuple(agent_spec(n) for n in names), workers=4, rollouts=rollouts)
    out = tmp_path / "run.jsonl"
    run_benchmark(tiny_dataset(), ListBackend(tiny_documents()), config, out, progress=False)


def test_isolated_agents_are_marked_in_the_registry() -> None:
    for name in ("isolated", "isolated-market"):
        assert agent_info(agent_spec(name, agent="tool-agent")).isolated
    for name in ("external", "external-market"):
        assert agent_info(agent_spec(name, command="true")).isolated
    assert not agent_info(agent_spec("gate-probe-plain")).isolated


def test_isolated_episodes_at_different_cutoffs_never_run_at_once(tmp_path: Path) -> None:
    _run(tmp_path, "gate-probe-isolated", "gate-probe-plain", rollouts=2)
    assert _overlaps("isolated")[0] == 0
    assert _overlaps("isolated")[1] > 0  # rollouts at one cutoff still run together
    assert _overlaps("plain")[0] > 0  # the rule holds back isolated agents only
