"""The live arena's plan (timing, markets, agents), its clocks and its result."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from pydantic import Field, model_validator

from pastcast.env import EnvConfig
from pastcast.records import Record
from pastcast.runlog import AgentSpec
from pastcast_arena._live_state import LiveState
from pastcast_arena._records import RoundResult
from pastcast_arena._replay import arena_name
from pastcast_arena._stats import ArenaReport

__all__ = [
    "DATASET_ID",
    "LEAD_TIME_S",
    "STATE_FILE",
    "Clock",
    "LivePlan",
    "LiveResult",
    "ScaledClock",
    "SystemClock",
]


LEAD_TIME_S = 600
STATE_FILE = "state.json"
DATASET_ID = "polymarket-live"


class Clock(Protocol):
    def now(self) -> float: ...

    def sleep(self, seconds: float) -> None: ...


class SystemClock:
    def now(self) -> float:
        return time.time()

    def sleep(self, seconds: float) -> None:
        time.sleep(max(seconds, 0.0))


@dataclass(frozen=True)
class ScaledClock:
    """Time compressed ``speed`` times: ``origin`` when the wall clock read ``real_origin``. A
    restarted process given the same three numbers reads the same time."""

    origin: float
    real_origin: float
    speed: float = 1.0

    def now(self) -> float:
        return self.origin + (time.time() - self.real_origin) * self.speed

    def sleep(self, seconds: float) -> None:
        time.sleep(max(seconds, 0.0) / self.speed)


class LivePlan(Record):
    """How the live arena runs its rounds (times in seconds)."""

    agents: tuple[AgentSpec, ...] = Field(min_length=1)
    markets: int = Field(default=3, ge=1, le=64)
    rounds: int | None = Field(default=None, ge=1)
    """Stop after this many rounds are finished (None: run until stopped)."""
    interval_s: int = Field(default=86_400, ge=1)
    """A new round every ``interval_s``."""
    commit_s: int = Field(default=86_400, ge=1)
    """From the round's creation to its commit deadline."""
    reveal_s: int = Field(default=86_400, ge=1)
    horizon_s: int = Field(default=7 * 86_400, ge=1)
    """Markets must end within this long after the reveal deadline; a round is scored when its
    markets resolved or this long after its reveal deadline."""
    lead_time_s: int = Field(default=LEAD_TIME_S, ge=1)
    commit_margin_s: int = Field(default=30, ge=0)
    """No commitment is signed or sent later than this before the deadline."""
    poll_s: float = Field(default=60.0, gt=0)
    min_volume_24h: float = Field(default=0.0, ge=0)
    min_liquidity: float = Field(default=0.0, ge=0)
    env: EnvConfig = Field(default_factory=EnvConfig)

    @model_validator(mode="after")
    def _windows(self) -> LivePlan:
        if self.commit_margin_s >= self.lead_time_s:
            raise ValueError("commit_margin_s must be below lead_time_s")
        if self.lead_time_s > self.commit_s:
            raise ValueError("lead_time_s must not exceed commit_s")
        names = [arena_name(a) for a in self.agents]
        if len(set(names)) != len(names):
            raise ValueError(f"two agents share an arena name: {names}")
        return self


@dataclass(frozen=True)
class LiveResult:
    results: tuple[RoundResult, ...]
    report: ArenaReport | None
    """None before any round is scored."""
    state: LiveState
    out: Path

    def round_states(self) -> list[dict[str, Any]]:
        """Each round's index, arena round id and status."""
        return [
            {"index": r.index, "round_id": r.round_id, "status": r.status}
            for r in self.state.rounds
        ]

    def as_dict(self) -> dict[str, Any]:
        """The JSON shape of a live run: its folder, rounds and leaderboard."""
        board = [] if self.report is None else self.report.leaderboard
        return {
            "out": str(self.out),
            "rounds": self.round_states(),
            "leaderboard": [row.model_dump(mode="json") for row in board],
        }
