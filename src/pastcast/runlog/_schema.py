"""The versioned run-log schema: the run header (a JSON file) and one record per forecast step
(a line of the JSONL step file).

Every step field has one JSON type, and every object at a place has the same fields, in every
record, so the step file loads as one table: free-form JSON (tool arguments) is kept as JSON
text, and a probability per outcome label is written as a list of ``{"label", "p"}`` pairs in
label order (a map keyed by labels would be a different set of columns in every record).
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from pydantic import (
    AliasChoices,
    Field,
    TypeAdapter,
    field_serializer,
    field_validator,
    model_validator,
)

from pastcast.cutoff import age_days, is_visible
from pastcast.records import (
    AgentRole,
    CorpusIdentity,
    EpisodeRecord,
    Forecast,
    Probabilities,
    Record,
    Setting,
    StepKey,
    UtcDatetime,
)

SCHEMA_VERSION = 3
"""3: notebooks as records (``Notebook``), a carried-forward notebook and its problems as typed
fields. 2: header beside the step file, model calls and tool calls in call order, text tool
results."""


_PAIRS: TypeAdapter[dict[str, float]] = TypeAdapter(Probabilities)


class AgentSpec(Record):
    """A registered agent by name with the arguments it was built with (enough to rebuild it)."""

    name: str
    factory: str
    args: dict[str, Any] = Field(default_factory=dict)
    role: AgentRole = "agent"
    setting: Setting = "memory_free"


class RunHeader(Record):
    """The run log's header (``run.header.json``): everything needed to know, and redo, what ran.

    It describes every record of its log: a resumed run must have the same definition
    (``run_definition``).
    """

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
    knowledge_cutoffs: dict[str, date | None] = Field(
        default_factory=dict, validation_alias=AliasChoices("knowledge_cutoffs", "model_cutoffs")
    )
    """Knowledge cutoff of each model the agents use (model spec -> last day its training data
    may cover; None: unknown), from ``pastcast.models.knowledge_cutoffs`` when the run started.
    Descriptive: not part of the run's definition. Headers written before it had this name
    call it ``model_cutoffs``."""
    plan: dict[str, Any] | None = None
    """The experiment plan as resolved (``pastcast.runner.ExperimentPlan``: its ``preset`` and
    every value the preset set), None in headers written without one. Descriptive: what defines
    the records (configuration, agents, dataset) is in the fields above."""


PENDING_TRUTH = ""
"""The truth of a live step graded before its question resolved (graded again once it has)."""


class Grading(Record):
    """What the grader knew, written after the episode. Never shown to the agent."""

    truth: str
    labels: tuple[str, ...]
    market_probs: Probabilities | None = None
    """Latest market belief visible at the step's cutoff (for information-alpha)."""
    market_at: UtcDatetime | None = None
    """When that belief was public (``DailyBelief.public_at``); None without a belief, or in a
    log written before the field."""
    market_age_days: float | None = Field(default=None, ge=0.0)
    """How old the belief was at the cutoff, in days (``pastcast.cutoff.age_days``)."""
    resolved_at: UtcDatetime | None = None
    """When the outcome became public (to leave out events a model may remember)."""


class Scores(Record):
    """Scores of one step, recomputable from ``forecast`` and ``grading`` by ``pastcast score``."""

    brier: float
    accuracy: float
    log_loss: float
    info_alpha: float | None = None
    fallback_used: bool = False


LOGGED_SCORES: tuple[str, ...] = tuple(n for n in Scores.model_fields if n != "fallback_used")
"""The metrics a step record keeps, each a metric of ``pastcast.scoring``'s registry by its
name (the columnar companion's score columns; every other metric is recomputed when read)."""


def forecast_json(forecast: Forecast) -> dict[str, Any]:
    """A forecast as a step record's JSON holds it (its probabilities as pairs)."""
    return {
        **forecast.model_dump(mode="json"),
        "probs": _PAIRS.dump_python(forecast.probs, mode="json"),
    }


def market_problem(cutoff: datetime, at: datetime | None, age: float | None) -> str | None:
    """Why a step's market reference (public ``at``, ``age`` days old) cannot be: it is never a
    price dated at or after the cutoff (None: it can be)."""
    if at is not None and not is_visible(at, cutoff):
        return f"grading: market belief of {at.isoformat()} is not before the cutoff"
    if (at is None) != (age is None) or (
        at is not None and age is not None and abs(age - age_days(at, cutoff)) > 1e-4
    ):
        return "grading: market_age_days does not match market_at and the cutoff"
    return None


class StepRecord(Record):
    """One forecast step of one agent and rollout (one line of the step file)."""

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
    attempt: int = Field(default=1, ge=1)
    """How many times the step was run: above 1 when a failure was run again (``retry_failed``;
    the earlier records are in ``retried_path``)."""
    forecast: Forecast
    episode: EpisodeRecord
    grading: Grading
    scores: Scores

    @model_validator(mode="after")
    def _market_before_cutoff(self) -> StepRecord:
        problem = market_problem(self.cutoff, self.grading.market_at, self.grading.market_age_days)
        if problem is not None:
            raise ValueError(problem)
        return self

    @field_validator("forecast", mode="before")
    @classmethod
    def _forecast_from_log(cls, value: object) -> object:
        if isinstance(value, dict) and isinstance(value.get("probs"), list):
            return {**value, "probs": _PAIRS.validate_python(value["probs"])}
        return value

    @field_serializer("forecast", when_used="json")
    def _forecast_to_log(self, forecast: Forecast) -> dict[str, Any]:
        return forecast_json(forecast)

    @property
    def key(self) -> StepKey:
        """Identity of the step within a run (used to resume without redoing work)."""
        return (self.agent, self.setting, self.event_id, self.step_index, self.rollout)
