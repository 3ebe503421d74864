"""What a run is: agents x events x steps x rollouts, with the environment settings."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from pastcast.env import EnvConfig
from pastcast.records import Record
from pastcast.runlog import AgentSpec

__all__ = ["RunConfig"]


class RunConfig(Record):
    agents: tuple[AgentSpec, ...] = Field(min_length=1)
    rollouts: int = Field(default=1, ge=1)
    env: EnvConfig = EnvConfig()
    fallback: Literal["uniform", "worst"] = "uniform"
    workers: int = Field(default=1, ge=1)
    split: str | None = None
    """Only run events of this split (None: every event with steps)."""
    max_events: int | None = Field(default=None, ge=1)
