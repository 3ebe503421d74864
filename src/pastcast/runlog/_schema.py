"""The versioned run-log schema: one header line, then one record per forecast step (JSONL)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from pastcast.records import (
    AgentRole,
    CorpusIdentity,
    EpisodeRecord,
    Forecast,
    Record,
    Setting,
    StepKey,
    UtcDatetime,
)

__all__ = [
    "SCHEMA_VERSION",
    "AgentSpec",
    "Grading",
    "RunHeader",
    "Scores",
    "StepRecord",
]

SCHEMA_VERSION = 1


class AgentSpec(Record):
    """A registered agent by name with the arguments it was built with (enough to rebuild it)."""

    name: str
    factory: str
    args: dict[str, Any] = Field(default_factory=dict)
    role: AgentRole = "agent"
    setting: Setting = "memory_free"


class RunHeader(Record):
    """The first line of a run log: everything needed to know, and redo, what ran."""

    kind: Literal["header"] = "header"
    schema_version: int = SCHEMA_VERSION
    run_id: str
    created_at: UtcDatetime
    dataset_id: str
    config: dict[str, Any]
    agents: tuple[AgentSpec, ...]
    prompts: dict[str, str] = Field(default_factory=dict)
    code_version: str
    corpus: CorpusIdentity | None = None
    """The corpus the agents searched (None without one, or a backend that does not say)."""


class Grading(Record):
    """What the grader knew, written after the episode. Never shown to the agent."""

    truth: str
    labels: tuple[str, ...]
    market_probs: dict[str, float] | None = None
    """Latest market belief visible at the step's cutoff (for information-alpha)."""


class Scores(Record):
    """Scores of one step, recomputable from ``forecast`` and ``grading`` by ``pastcast score``."""

    brier: float
    accuracy: float
    log_loss: float
    info_alpha: float | None = None
    fallback_used: bool = False


class StepRecord(Record):
    """One forecast step of one agent and rollout."""

    kind: Literal["step"] = "step"
    run_id: str
    agent: str
    role: AgentRole = "agent"
    setting: Setting = "memory_free"
    event_id: str
    step_index: int
    cutoff: UtcDatetime
    rollout: int = 0
    split: str = ""
    """The event's split in the dataset ("" when the dataset has none)."""
    category: str = ""
    forecast: Forecast
    episode: EpisodeRecord
    grading: Grading
    scores: Scores

    @property
    def key(self) -> StepKey:
        """Identity of the step within a run (used to resume without redoing work)."""
        return (self.agent, self.setting, self.event_id, self.step_index, self.rollout)
