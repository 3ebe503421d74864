"""Frozen records exchanged at every stage boundary.

Data flow: market data -> ``Event`` + ``Resolution`` + ``DailyBelief`` -> ``StepSpec`` ->
episode (agent + tools bound to the step's cutoff) -> ``Forecast`` + ``EpisodeRecord`` ->
``StepRecord`` in the run log -> scores.

Pydantic (frozen models) is used rather than dataclasses because every record is also read back
from files written by users or earlier runs: validation errors carry the field path, which the
loaders turn into one-line "file:line: field: problem" messages, and JSON round-trips are exact.

The resolved outcome lives in ``Resolution``, never in ``Event``: what an agent is shown is built
from ``Event`` alone (see ``pastcast.env``), so the label cannot leak through the question.
"""

from __future__ import annotations

import math
from datetime import date, datetime
from typing import Annotated, Any, Literal, get_args

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator, model_validator

from pastcast.cutoff import as_utc

__all__ = [
    "BINARY_LABELS",
    "FAILURE_REASONS",
    "AgentRole",
    "CorpusIdentity",
    "DailyBelief",
    "Document",
    "EpisodeRecord",
    "Event",
    "EventKind",
    "FailureReason",
    "Forecast",
    "Message",
    "Record",
    "RequestedToolCall",
    "Resolution",
    "Setting",
    "StepKey",
    "StepSpec",
    "Termination",
    "ToolCall",
    "Usage",
    "UtcDatetime",
]

BINARY_LABELS: tuple[str, str] = ("Yes", "No")

UtcDatetime = Annotated[datetime, AfterValidator(as_utc)]
"""A datetime normalised to aware UTC (naive input is taken to be UTC)."""

EventKind = Literal["binary", "multi"]

Setting = Literal["memory_free", "memory_on", "no_tools"]
"""Forecast-Dojo's settings: research without memory, with the belief notebook, or no tools."""

AgentRole = Literal["agent", "reference"]
"""``reference`` marks baselines that are not forecasters in their own right (the market)."""

StepKey = tuple[str, str, str, int, int]
"""Identity of a step within a run: (agent, setting, event id, step index, rollout)."""

FailureReason = Literal[
    # the model's text could not be turned into a forecast (``pastcast.agents.parse_forecast``)
    "empty_output",
    "no_answer_block",
    "invalid_json",
    "no_probabilities",
    "unknown_labels",
    "duplicate_labels",
    "invalid_probability",
    "no_positive_mass",
    # the episode ended without a forecast
    "budget_exhausted",
    "agent_error",
    # the market reference had nothing to report
    "no_market_access",
    "no_market_price",
]
"""Why a forecast is unusable (scored by the fallback and counted as a failure)."""

FAILURE_REASONS: tuple[FailureReason, ...] = get_args(FailureReason)


class Record(BaseModel):
    """Base of all records: immutable, no unknown fields, exact JSON round-trip."""

    model_config = ConfigDict(frozen=True, extra="forbid", ser_json_inf_nan="strings")


class Event(Record):
    """A forecasting question as the agent may see it: no resolved label, no prices.

    ``labels`` are the mutually exclusive outcomes. A binary event has labels ``("Yes", "No")``;
    a multi-option event (a neg-risk bundle) has one label per option.
    """

    id: str = Field(min_length=1)
    title: str = Field(min_length=1)
    description: str = ""
    resolution_criteria: str = ""
    kind: EventKind
    labels: tuple[str, ...]
    category: str = ""
    tags: tuple[str, ...] = ()
    open_time: UtcDatetime
    close_time: UtcDatetime
    source: str = ""
    url: str | None = None

    @model_validator(mode="after")
    def _check(self) -> Event:
        if len(self.labels) < 2:
            raise ValueError("an event needs at least two outcome labels")
        if len(set(self.labels)) != len(self.labels):
            raise ValueError(f"duplicate outcome labels: {self.labels}")
        if self.kind == "binary" and self.labels != BINARY_LABELS:
            raise ValueError(f"a binary event has labels {BINARY_LABELS}, got {self.labels}")
        if self.close_time < self.open_time:
            raise ValueError("close_time is before open_time")
        return self


class Resolution(Record):
    """The realised outcome of an event, kept apart from what agents see.

    ``resolved_at`` is the effective resolution instant: nothing at or after it (a forecast step,
    a price) may be used by an agent.
    """

    event_id: str = Field(min_length=1)
    label: str = Field(min_length=1)
    resolved_at: UtcDatetime


def _check_probabilities(probs: dict[str, float]) -> dict[str, float]:
    for label, p in probs.items():
        if not math.isfinite(p) or p < 0.0 or p > 1.0 + 1e-9:
            raise ValueError(f"probability of {label!r} is not in [0, 1]: {p}")
    return probs


class DailyBelief(Record):
    """The market belief of one event on one UTC day: a probability per priced outcome.

    Multi-option beliefs are normalised over the priced legs; legs without a price that day are
    absent (undefined), never filled in. Days without any price have no record at all.
    """

    event_id: str = Field(min_length=1)
    day: date
    probs: Annotated[dict[str, float], AfterValidator(_check_probabilities)]

    @field_validator("probs")
    @classmethod
    def _non_empty(cls, v: dict[str, float]) -> dict[str, float]:
        if not v:
            raise ValueError("a daily belief needs at least one priced outcome")
        return v


class Document(Record):
    """A dated document of the corpus. ``timestamp`` is the instant it became public (UTC)."""

    id: str = Field(min_length=1)
    timestamp: UtcDatetime
    title: str = ""
    text: str
    source: str = ""
    url: str | None = None
    thread_id: str | None = None
    author: str | None = None
    parent_id: str | None = None


class CorpusIdentity(Record):
    """Which corpus a run searched, and how: recorded in the run header so that two runs can be
    told apart by their documents, not by the path they were read from.

    ``content_sha256`` depends on the documents alone (the same documents give the same hash in
    an index directory and in a database); ``spec`` is where they were opened from (a database
    URL without its password); ``options`` are the build and search settings that change results
    (tokenizer, BM25 parameters, embedder, ...).
    """

    spec: str
    backend: str
    retrieval: str
    content_sha256: str
    doc_count: int = Field(ge=0)
    first_timestamp: UtcDatetime | None = None
    last_timestamp: UtcDatetime | None = None
    options: dict[str, Any] = Field(default_factory=dict)


class StepSpec(Record):
    """One scheduled forecast: event, position in the event's schedule, and the cutoff instant."""

    event_id: str = Field(min_length=1)
    step_index: int = Field(ge=0)
    cutoff: UtcDatetime


class Forecast(Record):
    """An agent's forecast: a probability per label, and the raw text it was parsed from.

    ``usable`` is False when the output could not be parsed or carries no positive finite mass;
    such a forecast is scored by the configured fallback (uniform by default) and counted as a
    failure with its ``failure_reason``.
    """

    probs: dict[str, float] = Field(default_factory=dict)
    raw_text: str = ""
    usable: bool = True
    failure_reason: FailureReason | None = None
    rationale: str = ""


class RequestedToolCall(Record):
    """A tool call requested by a model (native tool calling or a parsed JSON action)."""

    id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class Message(Record):
    """One chat message of an episode."""

    role: Literal["system", "user", "assistant", "tool"]
    content: str
    name: str | None = None
    tool_call_id: str | None = None
    tool_calls: tuple[RequestedToolCall, ...] = ()


class ToolCall(Record):
    """One tool invocation with its result, as the agent saw it."""

    name: str
    arguments: dict[str, Any]
    result: Any
    ok: bool = True
    error: str | None = None
    doc_ids: tuple[str, ...] = ()
    """Every document id whose content or metadata the result exposed to the agent."""
    elapsed_s: float = 0.0


class Usage(Record):
    """Model usage of an episode."""

    model_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0


Termination = Literal["forecast", "tool_budget", "model_budget", "error", "no_forecast"]


class EpisodeRecord(Record):
    """Everything that happened in one episode, kept for audit and training export."""

    messages: tuple[Message, ...] = ()
    tool_calls: tuple[ToolCall, ...] = ()
    notebook_in: str | None = None
    notebook_out: str | None = None
    notebook_problems: tuple[str, ...] = ()
    """Why the notebook written at this step was rejected (the previous one was carried)."""
    usage: Usage = Usage()
    wall_s: float = 0.0
    termination: Termination = "forecast"
    error: str | None = None
