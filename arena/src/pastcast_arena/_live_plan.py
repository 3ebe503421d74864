"""The live arena's plan (timing, markets, agents), its clocks, its result and its durable state.

The state is written whole (``pastcast.atomic``) before every action: the salt and predictions
of a commitment are on disk before it is signed, the signed message before it is sent, so a
restart at any moment continues and repeats nothing."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from pastcast import safejson
from pastcast.atomic import write_atomic
from pastcast.env import EnvConfig
from pastcast.markets.sources import OpenMarket
from pastcast.records import Record
from pastcast.runlog import AgentSpec
from pastcast.validation import first_problem
from pastcast_arena._records import BenchmarkPrice, RoundResult, SignedCommit, SignedReveal
from pastcast_arena._replay import arena_name
from pastcast_arena._stats import ArenaReport

LEAD_TIME_S = 600
STATE_FILE = "state.json"
DATASET_ID = "polymarket-live"


class Clock(Protocol):
    def now(self) -> float: ...

    def sleep(self, seconds: float) -> None: ...


@dataclass(frozen=True)
class ScaledClock:
    """Time compressed ``speed`` times: ``origin`` when the wall clock read ``real_origin`` (a
    restarted process given the same three numbers reads the same time); by default the wall
    clock itself."""

    origin: float = 0.0
    real_origin: float = 0.0
    speed: float = 1.0

    def now(self) -> float:
        return self.origin + (time.time() - self.real_origin) * self.speed

    def sleep(self, seconds: float) -> None:
        time.sleep(max(seconds, 0.0) / self.speed)


class LivePlan(Record):
    """How the live arena runs its rounds (times in seconds; each field is described with the
    plan file in docs/arena.md, "Live rounds")."""

    agents: tuple[AgentSpec, ...] = Field(min_length=1)
    markets: int = Field(default=3, ge=1, le=64)
    rounds: int | None = Field(default=None, ge=1)
    interval_s: int = Field(default=86_400, ge=1)
    commit_s: int = Field(default=86_400, ge=1)
    reveal_s: int = Field(default=86_400, ge=1)
    horizon_s: int = Field(default=7 * 86_400, ge=1)
    """A round is scored when its markets resolved or this long after its reveal deadline."""
    lead_time_s: int = Field(default=LEAD_TIME_S, ge=1)
    commit_margin_s: int = Field(default=30, ge=0)
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


class _State(BaseModel):
    # mutable on purpose: the service updates it in place and writes it whole after each change
    model_config = ConfigDict(extra="forbid")


class AgentRound(_State):
    salt: str | None = None
    predictions: tuple[int, ...] | None = None
    usable: int = 0
    commit: SignedCommit | None = None
    committed: bool = False
    reveal: SignedReveal | None = None
    revealed: bool = False
    reasoning: str = ""
    """Where the reasoning traces went: "published" (the relayer holds them), "local" (only in
    the round's folder: no relayer, or one without the endpoint), "" (not yet)."""
    missed: str | None = None
    """Why the agent has no commitment in the round (a deadline passed before it could)."""


class RoundState(_State):
    index: int = Field(ge=1)
    created_at: float
    commit_deadline: int
    reveal_deadline: int
    markets: tuple[OpenMarket, ...]
    round_id: int | None = None
    creating: bool = False
    cutoff: float | None = None
    """The instant the agents forecast at (chosen once, before the episodes run)."""
    forecast: bool = False
    agents: dict[str, AgentRound] = Field(default_factory=dict)
    books: dict[str, BenchmarkPrice] = Field(default_factory=dict)
    benchmarks_set: bool = False
    reported: dict[str, tuple[int, ...]] = Field(default_factory=dict)
    excluded: dict[str, str] = Field(default_factory=dict)
    early: dict[str, str] = Field(default_factory=dict)
    """Markets an external conditional-tokens contract resolved before the reveal deadline: the
    arena contract reads and counts them all the same (it knows no resolution time)."""
    triggered: bool = False
    scored: bool = False
    status: str = "open"
    """open, unresolved (nothing resolved within the horizon), abandoned, scored."""

    @property
    def finished(self) -> bool:
        return self.status in ("scored", "unresolved", "abandoned")


class LiveState(_State):
    version: Literal[1] = 1  # another version is refused when read
    arena: str
    """The arena's EIP-712 domain (chain id and verifying contract): a restart on another arena
    is refused."""
    agents: dict[str, str] = Field(default_factory=dict)
    rounds: list[RoundState] = Field(default_factory=list)
    next_round_at: float = 0.0


def load_state(path: Path) -> LiveState | None:
    """The state file's content, None when there is none; ``ValueError`` naming the file."""
    if not path.exists():
        return None
    try:
        return LiveState.model_validate(safejson.loads(path.read_text(encoding="utf-8")))
    except ValidationError as exc:
        raise ValueError(f"{path}: not a live arena state ({first_problem(exc)})") from None
    except ValueError as exc:
        raise ValueError(f"{path}: not a live arena state ({exc})") from None


def save_state(path: Path, state: LiveState) -> None:
    write_atomic(path, state.model_dump_json(indent=1) + "\n")


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
