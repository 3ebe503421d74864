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

import json
import math
import re
from collections.abc import Mapping
from datetime import date, datetime
from typing import Annotated, Any, Literal, get_args

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    JsonValue,
    PlainSerializer,
    field_validator,
    model_validator,
)

from pastcast import safejson
from pastcast.cutoff import as_utc, end_of_day
from pastcast.probabilities import scaled

__all__ = [
    "BINARY_LABELS",
    "FAILURE_REASONS",
    "RETRYABLE_FAILURES",
    "RETRY_MARKERS",
    "AgentRole",
    "Assessment",
    "CorpusIdentity",
    "DailyBelief",
    "DatedBy",
    "Document",
    "EpisodeRecord",
    "Event",
    "EventKind",
    "EvidenceLabel",
    "EvidenceQuality",
    "EvidenceTally",
    "FailureReason",
    "Forecast",
    "LedgerEntry",
    "Message",
    "ModelCall",
    "Notebook",
    "NotebookCheck",
    "NotebookProblem",
    "NotebookProblemKind",
    "Probabilities",
    "Record",
    "RequestedToolCall",
    "Resolution",
    "Setting",
    "SideTally",
    "StepKey",
    "StepSpec",
    "StopReason",
    "Termination",
    "TextVersion",
    "ToolCall",
    "Usage",
    "UtcDatetime",
    "answer_attempts",
    "evidence_label_of",
    "tool_result_text",
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
    # the model's provider failed: down, rate limited or timing out past every retry, or paused
    # by the run's circuit breaker (transient)
    "provider_error",
    # the model or its endpoint is not there, or refuses the credentials (configuration)
    "model_unavailable",
]
"""Why a forecast is unusable (scored by the fallback and counted as a failure)."""

FAILURE_REASONS: tuple[FailureReason, ...] = get_args(FailureReason)

RETRYABLE_FAILURES: tuple[FailureReason, ...] = ("provider_error", "model_unavailable")
"""Failures that say nothing about the agent: ``pastcast run --retry-failed`` runs them again."""

EvidenceLabel = Literal["strong", "weak", "irrel", "contra"]
"""Hindcast's four-level label of a piece of evidence for one side (one outcome): explicit,
specific support; vague, indirect or correlational support; on topic but not bearing on it;
evidence against it."""

EvidenceQuality = Literal["strong", "weak", "none"]
"""Hindcast's overall evidence-quality label, read with both sides' tallies."""


class Record(BaseModel):
    """Base of all records: immutable, no unknown fields, exact JSON round-trip."""

    model_config = ConfigDict(frozen=True, extra="forbid", ser_json_inf_nan="strings")


def _visible(text: str) -> str:
    if not any(ch.isprintable() and not ch.isspace() for ch in text):
        raise ValueError("no visible character (only whitespace, NUL or control characters)")
    return text


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

    _visible_title = field_validator("title")(_visible)

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


class TextVersion(Record):
    """One published snapshot of an event's question text: a step is shown the latest one
    published before its cutoff (``Dataset.event_at``), never one written later."""

    event_id: str = Field(min_length=1)
    published_at: UtcDatetime
    title: str = Field(min_length=1)
    description: str = ""
    resolution_criteria: str = ""
    origin: str = ""
    """Where the snapshot comes from (a question set's file name)."""

    _visible_title = field_validator("title")(_visible)


class Resolution(Record):
    """The realised outcome of an event, kept apart from what agents see.

    ``resolved_at`` is the effective resolution instant: nothing at or after it (a forecast step,
    a price) may be used by an agent.
    """

    event_id: str = Field(min_length=1)
    label: str = Field(min_length=1)
    resolved_at: UtcDatetime


def _from_pairs(value: object) -> object:
    if not isinstance(value, list):
        return value
    out: dict[str, object] = {}
    for item in value:  # as written in a log
        if not isinstance(item, dict) or set(item) != {"label", "p"}:
            raise ValueError('expected {"label": ..., "p": ...} pairs')
        if item["label"] in out:
            raise ValueError(f"duplicate label {item['label']!r}")
        out[item["label"]] = item["p"]
    return out


def _to_pairs(value: dict[str, float]) -> list[dict[str, str | float]]:
    return [{"label": label, "p": p} for label, p in value.items()]


Probabilities = Annotated[
    dict[str, float],
    BeforeValidator(_from_pairs),
    PlainSerializer(_to_pairs, when_used="json"),
]
"""A probability per outcome label: a dict in Python, ``{"label", "p"}`` pairs in JSON (a map
keyed by labels would be a different set of columns in every record of a run log); a map is
read too."""


def _check_probabilities(probs: dict[str, float]) -> dict[str, float]:
    if not probs:
        raise ValueError("a daily belief needs at least one priced outcome")
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

    @property
    def public_at(self) -> datetime:
        """When the belief counts as public: the end of its day (a daily aggregate is known
        only once its whole day has passed)."""
        return end_of_day(self.day)


DatedBy = Literal["published", "modified", "first_seen", "crawled", "fetched"]
"""Which date a document's timestamp is: its publication, its last modification, when the source
first saw it (a post's creation in a dump), or only when it was crawled or fetched."""


class Document(Record):
    """A dated document of the corpus. ``timestamp`` is the instant it became public (UTC).

    ``dated_by``: which date the timestamp is, where the source records it (None: it does not;
    left out of the JSON then, so documents without it hash as they always have)."""

    id: str = Field(min_length=1)
    timestamp: UtcDatetime
    title: str = ""
    text: str
    source: str = ""
    url: str | None = None
    thread_id: str | None = None
    author: str | None = None
    parent_id: str | None = None
    dated_by: DatedBy | None = Field(default=None, exclude_if=lambda v: v is None)


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
    options: dict[str, JsonValue] = Field(default_factory=dict)


class StepSpec(Record):
    """One scheduled forecast: event, position in the event's schedule, and the cutoff instant."""

    event_id: str = Field(min_length=1)
    step_index: int = Field(ge=0)
    cutoff: UtcDatetime


def _number(value: object) -> float | None:
    """``value`` as the float the field reads (an integer beyond any float is infinite); None
    for what is no number (left to the field's own validation to refuse)."""
    if not isinstance(value, int | float | str):
        return None
    try:
        return float(value.strip() if isinstance(value, str) else value)
    except OverflowError:
        return math.inf
    except ValueError:
        return None


def _shown(values: Mapping[str, float]) -> str:
    return ", ".join(f"{label}={value!r}" for label, value in values.items())


def _finite_forecast(data: dict[str, Any]) -> dict[str, Any]:
    """The fields of a forecast made finite, as ``Forecast`` describes."""
    values = {label: _number(v) for label, v in data["probs"].items()}
    if any(v is None for v in values.values()):
        return data  # not numbers: the field's validation names them
    floats = {label: v for label, v in values.items() if v is not None}
    usable = data.get("usable", True) is not False
    if all(math.isfinite(v) and v >= 0.0 for v in floats.values()):
        if any(v > 1.0 for v in floats.values()):
            return {**data, "probs": scaled(floats)}
        if not usable or any(v > 0.0 for v in floats.values()):
            return data
        reason, why = "no_positive_mass", "no positive probability"
    else:
        reason, why = "invalid_probability", "a probability is not a finite number >= 0"
    raw = str(data.get("raw_text") or "")
    return {
        **data,
        "probs": {},
        "usable": False,
        "failure_reason": reason if usable else data.get("failure_reason") or reason,
        "raw_text": f"{raw} ({why}{': ' + _shown(floats) if floats else ''})".lstrip(),
    }


class Forecast(Record):
    """An agent's forecast: a probability per label, and the raw text it was parsed from.

    ``usable`` is False when the output could not be parsed or carries no positive finite mass;
    such a forecast is scored by the configured fallback (uniform by default) and counted as a
    failure with its ``failure_reason``.

    Every probability held is a finite number in [0, 1], however old the log it is read from:
    finite values above 1 are scaled to a distribution (``probabilities.scaled``); a NaN, an
    infinity or a negative value (``invalid_probability``), or a usable forecast without positive
    mass (``no_positive_mass``), makes it unusable, its values kept as text in ``raw_text``.
    """

    probs: dict[str, float] = Field(default_factory=dict)
    raw_text: str = ""
    usable: bool = True
    failure_reason: FailureReason | None = None
    rationale: str = ""
    choice: str | None = None
    """The outcome the answer says it chose (Hindcast's forced choice), when it names one."""
    confidence: float | None = Field(default=None, ge=0.0, le=1.0)
    """The confidence the model reported for its answer, when it gave one (Hindcast)."""

    @model_validator(mode="before")
    @classmethod
    def _finite(cls, data: object) -> object:
        if isinstance(data, dict) and isinstance(data.get("probs", {}), Mapping):
            return _finite_forecast({**data, "probs": data.get("probs", {})})
        return data

    @model_validator(mode="after")
    def _check_finite(self) -> Forecast:
        # what ``_finite`` could not read as numbers but the field took (another numeric type)
        if not all(math.isfinite(p) and 0.0 <= p <= 1.0 for p in self.probs.values()):
            raise ValueError(f"probabilities are not finite numbers in [0, 1]: {self.probs}")
        if self.usable and not any(p > 0.0 for p in self.probs.values()):
            raise ValueError("a usable forecast needs a positive probability")
        return self


RETRY_MARKERS: dict[str, str] = {
    "repair": "[reply to the repair request]",
    "json_repair": "[reply to the JSON repair request]",
    "compact": "[reply to the compact re-prompt]",
    "json_only": "[reply to the JSON-only re-prompt]",
}
"""The line before each retry's reply in a forecast's ``raw_text``, by retry pass: the text keeps
every reply an answer was read from, so it can be read again without re-running anything."""
_MARKER_RE = re.compile(
    r"\n\n(?:" + "|".join(re.escape(m) for m in RETRY_MARKERS.values()) + r")\n"
)


def answer_attempts(raw_text: str) -> list[str]:
    """The replies of ``raw_text`` in the order they were written (the first answer, then each
    retry's reply after its marker)."""
    return _MARKER_RE.split(raw_text)


def tool_result_text(value: object) -> str:
    """A tool result as the text an agent is given and the log keeps: a string as it is, any
    other JSON value as its JSON text, nothing (None) as ""."""
    if isinstance(value, str):
        return value
    return "" if value is None else json.dumps(value, ensure_ascii=False)


def _object_from_text(value: object) -> object:
    if isinstance(value, str):  # as written in a log
        try:
            return safejson.loads(value)
        except ValueError as exc:
            raise ValueError(f"not a JSON object: {exc}") from None
    return value


def _object_text(value: dict[str, JsonValue]) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


JsonObject = Annotated[
    dict[str, JsonValue],
    BeforeValidator(_object_from_text),
    PlainSerializer(_object_text, return_type=str, when_used="json"),
]
"""A JSON object: a dict in Python, its JSON text in JSON output. Tool arguments differ in keys
and value types from call to call; as text they load as one string column in every dataframe
library."""


class RequestedToolCall(Record):
    """A tool call requested by a model (native tool calling or a parsed JSON action)."""

    id: str
    name: str
    arguments: JsonObject = Field(default_factory=dict)


class Message(Record):
    """One chat message of an episode."""

    role: Literal["system", "user", "assistant", "tool"]
    content: str
    name: str | None = None
    tool_call_id: str | None = None
    tool_calls: tuple[RequestedToolCall, ...] = ()


class ToolCall(Record):
    """One tool invocation with its result, as the agent saw it."""

    seq: int = Field(default=0, ge=0)
    """Position among the episode's model and tool calls (``EpisodeRecord.events``)."""
    name: str
    arguments: JsonObject
    result: Annotated[str, BeforeValidator(tool_result_text)] = ""
    """The text the agent was given (``tool_result_text``); for a model-driven agent exactly what
    its model was shown (cut to its length limit, a refusal as ``{"error": ...}``)."""
    ok: bool = True
    error: str | None = None
    doc_ids: tuple[str, ...] = ()
    """Every document id whose content or metadata the result exposed to the agent."""
    elapsed_s: float = 0.0


class Usage(Record):
    """Model usage of an episode (or of one model call)."""

    model_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0


class ModelCall(Record):
    """One model call of an episode: exactly what was sent, the options, and what came back.

    Messages are indices into ``EpisodeRecord.messages`` (each message is stored once, however
    many requests resend it); ``EpisodeRecord.messages_of`` gives the request's messages.
    """

    seq: int = Field(ge=0)
    """Position among the episode's model and tool calls (``EpisodeRecord.events``)."""
    model: str
    messages: tuple[int, ...]
    tools: tuple[str, ...] = ()
    """Names of the tools offered natively (``ChatRequest.tools``)."""
    response_schema: str = ""
    """The JSON schema the reply had to satisfy, as JSON text ("" when none)."""
    temperature: float | None = None
    max_tokens: int | None = None
    seed: int | None = None
    top_p: float | None = None
    reasoning_effort: str | None = None
    """As sent (None: not sent, the provider's default applied)."""
    reply: int | None = None
    """Index of the reply (an assistant message) in ``EpisodeRecord.messages``; None on error."""
    finish_reason: str | None = None
    usage: Usage = Usage()
    latency_s: float = 0.0
    error: str | None = None
    """Why the call failed (the exception, one line); the episode went on or ended with it."""


# The belief notebook carried between forecast dates (memory-on, after Forecast-Dojo): written by
# agents (``pastcast.agents`` finds it in a model's reply and checks it), kept as these records in
# the run log, read there by the analyses.


class LedgerEntry(Record):
    """One dated claim. ``date_observed`` is when the evidence was published, not when found."""

    id: str = Field(min_length=1)
    claim: str = Field(min_length=1)
    date_observed: date
    source: str = ""
    supports: tuple[str, ...] = ()
    rules_out: tuple[str, ...] = ()
    status: Literal["active", "superseded"] = "active"


class Assessment(Record):
    probabilities: Probabilities
    summary: str = ""
    open_questions: tuple[str, ...] = ()


def _inline(node: object, defs: dict[str, object]) -> object:
    """A JSON schema with its ``$ref``s replaced by their definitions, without titles or
    defaults, every property required (a model writes the whole notebook)."""
    if isinstance(node, list):
        return [_inline(v, defs) for v in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        return _inline(defs[str(node["$ref"]).rsplit("/", 1)[-1]], defs)
    out = {k: _inline(v, defs) for k, v in node.items() if k not in ("title", "default", "$defs")}
    properties = out.get("properties")
    if isinstance(properties, dict):
        out["required"] = list(properties)
    return out


class Notebook(Record):
    assessment: Assessment
    evidence_ledger: tuple[LedgerEntry, ...] = ()

    def text(self) -> str:
        """Canonical JSON text: what the next step's prompt shows, in the form a model writes
        (probabilities as a map of label to probability)."""
        data = self.model_dump(mode="json")
        data["assessment"]["probabilities"] = dict(self.assessment.probabilities)
        return json.dumps(data, indent=2, ensure_ascii=False)

    @classmethod
    def answer_schema(cls) -> dict[str, object]:
        """The JSON schema of a notebook a model is asked to write, derived from this model."""
        schema = cls.model_json_schema()
        inlined = _inline(schema, schema.get("$defs", {}))
        assert isinstance(inlined, dict)
        return inlined


NotebookProblemKind = Literal[
    "unparseable",
    "truncated",
    "unknown_labels",
    "bad_probabilities",
    "duplicate_ids",
    "future_dates",
    "unreadable_text",
]
"""Why a notebook written at a step was rejected: no notebook found in the reply; one begun but
never closed (a reply cut at its token limit); a label the question does not have; a probability
outside [0, 1], or none positive; two ledger entries with one id; evidence dated after the
cutoff. And, for logs of run-log schema 1 or 2 only, a notebook text that is not a notebook."""


class NotebookProblem(Record):
    kind: NotebookProblemKind
    detail: str = ""
    """What exactly (the entries or labels), in words."""

    def __str__(self) -> str:
        return f"{self.kind}: {self.detail}" if self.detail else self.kind


class NotebookCheck(Record):
    """The outcome of validating a notebook written at one step."""

    notebook: Notebook | None
    problems: tuple[NotebookProblem, ...] = ()

    @property
    def ok(self) -> bool:
        return self.notebook is not None and not self.problems


Termination = Literal["forecast", "tool_budget", "model_budget", "error", "no_forecast"]

StopReason = Literal["confident", "budget", "no_results", "no_queries", "rounds"]
"""Why a research loop stopped (Hindcast 5.2): its confidence reached the stop
(``confident``), the tool budget was spent (``budget``), a round found no new document
(``no_results``), no new query was proposed (``no_queries``), or the round budget ran out
(``rounds``)."""


class SideTally(Record):
    """One outcome's evidence labels counted over the documents labelled (Hindcast 5.2)."""

    label: str
    strong: int = Field(default=0, ge=0)
    weak: int = Field(default=0, ge=0)
    irrel: int = Field(default=0, ge=0)
    contra: int = Field(default=0, ge=0)

    @property
    def score(self) -> int:
        """The weighted count of its labels: ``2 strong + weak - contra``."""
        return 2 * self.strong + self.weak - self.contra


class EvidenceTally(Record):
    """The agent's own evidence tally at a step: a ``SideTally`` per outcome, in label order
    (a list, not a map keyed by labels, so every record has the same columns), how many
    documents were labelled, and the overall evidence quality it gave (None: not stated)."""

    sides: tuple[SideTally, ...] = ()
    documents: int = Field(default=0, ge=0)
    quality: EvidenceQuality | None = None


def evidence_label_of(tally: EvidenceTally | None) -> str:
    """The S/W/N label of a step's own tally (Hindcast Table 1 bins each run by it): the stated
    evidence quality; ``none`` for a tally of no documents; ``untallied`` where the step has no
    tally or the quality was not stated."""
    if tally is None:
        return "untallied"
    if tally.quality is not None:
        return tally.quality
    return "none" if tally.documents == 0 else "untallied"


class EpisodeRecord(Record):
    """Everything that happened in one episode, kept for audit and training export."""

    messages: tuple[Message, ...] = ()
    """Every message sent to or received from a model, once each, in the order first used."""
    model_calls: tuple[ModelCall, ...] = ()
    tool_calls: tuple[ToolCall, ...] = ()
    notebook_in: Notebook | None = None
    """The notebook handed in: the previous step's ``notebook_out`` (None on a chain's first)."""
    notebook_out: Notebook | None = None
    """The notebook handed on to the next step."""
    notebook_carried: bool = False
    """The notebook written at this step was rejected, so ``notebook_out`` is ``notebook_in``."""
    notebook_problems: tuple[NotebookProblem, ...] = ()
    """Why the notebook written at this step was rejected."""
    usage: Usage = Usage()
    wall_s: float = 0.0
    termination: Termination = "forecast"
    error: str | None = None
    evidence_tally: EvidenceTally | None = None
    """The evidence tally the agent computed (the two-stage agent with ``tally``; None for
    others, and in logs written before the field)."""
    stop_reason: StopReason | None = None
    """Why the agent's research loop stopped (None: no such loop, or an older log)."""

    @model_validator(mode="after")
    def _check_indices(self) -> EpisodeRecord:
        n = len(self.messages)
        for i, call in enumerate(self.model_calls):
            refs = (*call.messages, *(() if call.reply is None else (call.reply,)))
            bad = next((j for j in refs if not 0 <= j < n), None)
            if bad is not None:
                raise ValueError(f"model call {i} refers to message {bad} of {n}")
        return self

    def messages_of(self, call: ModelCall) -> tuple[Message, ...]:
        """The messages ``call`` sent, exactly and in order."""
        return tuple(self.messages[i] for i in call.messages)

    def reply_of(self, call: ModelCall) -> Message | None:
        return None if call.reply is None else self.messages[call.reply]

    def events(self) -> list[ModelCall | ToolCall]:
        """Model and tool calls in the order they happened."""
        return sorted([*self.model_calls, *self.tool_calls], key=lambda e: e.seq)
