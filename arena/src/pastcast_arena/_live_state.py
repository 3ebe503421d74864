"""The live arena's durable state, written whole (``pastcast.atomic``) before every action: the
salt and predictions of a commitment are on disk before it is signed, the signed message before
it is sent, so a restart at any moment continues and repeats nothing."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from pastcast import safejson
from pastcast.atomic import write_atomic
from pastcast.markets.sources import OpenMarket
from pastcast.validation import first_problem
from pastcast_arena._records import BenchmarkPrice, SignedCommit, SignedReveal

__all__ = ["AgentRound", "LiveState", "RoundState", "load_state", "save_state"]

STATE_VERSION = 1


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
    version: int = STATE_VERSION
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
        state = LiveState.model_validate(safejson.loads(path.read_text(encoding="utf-8")))
    except ValidationError as exc:
        raise ValueError(f"{path}: not a live arena state ({first_problem(exc)})") from None
    except ValueError as exc:
        raise ValueError(f"{path}: not a live arena state ({exc})") from None
    if state.version != STATE_VERSION:
        raise ValueError(f"{path}: state version {state.version}, expected {STATE_VERSION}")
    return state


def save_state(path: Path, state: LiveState) -> None:
    write_atomic(path, state.model_dump_json(indent=1) + "\n")
