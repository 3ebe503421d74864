"""What every model-driven agent shares: request settings (``Decoding``, per stage), prompt fields,
the answer schemas, and turning a final reply into a ``Forecast`` with its parse fallback's
retries. Unusable outputs never raise; every reply is kept in ``raw_text`` (after
``RETRY_MARKERS``). The rules: docs/agents.md, "Answers and failures".
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, TypeVar

from pydantic import Field

from pastcast.agents._answer_reader import read_answer
from pastcast.agents._prompts import answer_template, choice_template, prob_key, question_fields
from pastcast.env import Episode, QuestionView
from pastcast.models import ChatRequest, ContextOverflow, Model, ReasoningEffort
from pastcast.probabilities import completed, scaled
from pastcast.records import (
    BINARY_LABELS,
    RETRY_MARKERS,
    FailureReason,
    Forecast,
    Message,
    Record,
    answer_attempts,
)

ParseFallback = Literal["repair", "four_step"]
AnswerForm = Literal["probabilities", "choice"]
"""The answer object asked for: pastcast's (``answer_schema``) or Hindcast's (``choice_schema``)."""


_INT64 = 2**63 - 1


class Decoding(Record):
    """Request settings of an agent's calls (None: not sent, the provider's default); a stage's
    settings go ``over`` the agent's (docs/agents.md, "Common arguments")."""

    temperature: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    max_tokens: int | None = Field(default=None, gt=0, le=2**31 - 1)
    seed: int | None = Field(default=None, ge=-_INT64 - 1, le=_INT64)
    top_p: float | None = Field(default=None, gt=0.0, le=1.0, allow_inf_nan=False)
    """Nucleus sampling: the probability mass sampled from."""
    reasoning_effort: ReasoningEffort | None = None

    def request(self, messages: Sequence[Message], **kw: Any) -> ChatRequest:
        return ChatRequest(messages=tuple(messages), **self.model_dump(), **kw)


R = TypeVar("R", bound=Record)


def over(base: R, top: R | Mapping[str, Any] | None) -> R:
    """``base`` with the fields ``top`` sets (given when it was made, ``None`` included) on top:
    how a stage's request settings and a preset's configuration are changed."""
    if top is None:
        return base
    given = type(base).model_validate(top)
    return base.model_copy(update={k: getattr(given, k) for k in given.model_fields_set})


def stages_over(
    base: Mapping[str, Decoding], top: Mapping[Any, Decoding | Mapping[str, Any]] | None
) -> dict[str, Decoding]:
    """Per-stage settings: each stage of ``top`` over the same stage of ``base``."""
    out = dict(base)
    for stage, settings in (top or {}).items():
        out[stage] = over(out.get(stage, Decoding()), settings)
    return out


def view_fields(q: QuestionView) -> dict[str, str]:
    """Prompt placeholders for a question view at its cutoff (``question_fields``)."""
    return question_fields(q, q.cutoff)


def answer_schema(labels: Sequence[str]) -> dict[str, Any]:
    """JSON schema of the final answer: a number per label and a short rationale."""
    return {
        "type": "object",
        "properties": {
            "probabilities": {
                "type": "object",
                "properties": {lb: {"type": "number"} for lb in labels},
                "required": list(labels),
            },
            "rationale": {"type": "string"},
        },
        "required": ["probabilities", "rationale"],
    }


def choice_schema(labels: Sequence[str]) -> dict[str, Any]:
    """JSON schema of Hindcast's answer: the chosen option, a probability per option (``prob_yes``
    and ``prob_no`` for a Yes/No question), the self-reported confidence and brief reasoning."""
    props: dict[str, Any] = {"choice": {"type": "string", "enum": list(labels)}}
    if tuple(labels) == BINARY_LABELS:
        props |= {prob_key(lb): {"type": "number"} for lb in labels}
    else:
        props["probabilities"] = answer_schema(labels)["properties"]["probabilities"]
    props |= {"confidence": {"type": "number"}, "reasoning": {"type": "string"}}
    return {"type": "object", "properties": props, "required": list(props)}


def form_schema(form: AnswerForm, labels: Sequence[str]) -> dict[str, Any]:
    """The JSON schema of the answer object ``form``."""
    return (answer_schema if form == "probabilities" else choice_schema)(labels)


_TEMPLATES = {"probabilities": answer_template, "choice": choice_template}

_BRIEF = (
    "Answer now, briefly: at most three sentences of reasoning, then the JSON object in the "
    "requested format, using exactly the outcome names given."
)


def finish_answer(
    episode: Episode,
    model: Model,
    decoding: Decoding,
    messages: Sequence[Message],
    reply: str,
    *,
    normalize_typography: bool = False,
    fallback: ParseFallback = "repair",
    form: AnswerForm = "probabilities",
    stages: Mapping[str, Decoding] | None = None,
    compact: Sequence[Message] | None = None,
) -> Forecast:
    """Parse ``reply`` (the last assistant message of ``messages``); if unusable, retry by
    ``fallback`` (see the module). ``stages`` holds the retries' settings (``repair``,
    ``compact``, ``json_only``) over ``decoding``; ``compact`` is the agent's short prompt for the
    compact and JSON-only passes (its first two messages by default); ``form`` the answer object
    the retries ask for."""
    labels = episode.question.labels
    forecast = parse_forecast(reply, labels, normalize_typography=normalize_typography)
    if forecast.usable:
        return forecast
    reason = forecast.failure_reason or "invalid_json"
    schema = form_schema(form, labels)
    template = _TEMPLATES[form](labels)
    per_stage = dict(stages or {})
    short = list(compact if compact is not None else messages[:2])
    repair = repair_prompt(reason, labels, template)

    def user(text: str) -> Message:
        return Message(role="user", content=text)

    # Each retry: its marker in the raw text, the stage of its settings, what it sends, its schema.
    passes: list[tuple[str, str, list[Message], dict[str, Any] | None]]
    if fallback == "repair":
        passes = [("repair", "repair", [*messages, user(repair)], schema)]
    else:
        fix = (  # the answer sits at the end; the start of a long reply is reasoning
            f"{repair}\nRewrite the reply below as that JSON object, keeping its probabilities "
            f"and reasoning.\n\nReply:\n{reply[-6000:]}"
        )
        only = f"Reply with only the JSON object in this format, nothing else:\n{template}"
        passes = [
            ("json_repair", "repair", [user(fix)], schema),
            ("compact", "compact", [*short, user(_BRIEF)], None),
            ("json_only", "json_only", [*short, user(only)], schema),
        ]
    replies = [reply]
    for name, stage, sent, sent_schema in passes:
        request = over(decoding, per_stage.get(stage)).request(sent, response_schema=sent_schema)
        try:
            again = episode.chat(model, request).content
        except ContextOverflow as exc:  # nothing was sent: the next pass is shorter
            again = f"(not sent: {exc})"
        replies.append(f"{RETRY_MARKERS[name]}\n{again}")
        retried = parse_forecast(again, labels, normalize_typography=normalize_typography)
        if retried.usable:
            return retried.model_copy(
                update={
                    "rationale": retried.rationale or forecast.rationale,
                    "raw_text": "\n\n".join(replies),
                }
            )
    return forecast.model_copy(update={"raw_text": "\n\n".join(replies)})


def ask_answer(
    episode: Episode,
    model: Model,
    decoding: Decoding,
    messages: Sequence[Message],
    *,
    schema: dict[str, Any] | None = None,
    compact: Sequence[Message] | None = None,
    **finish: Any,
) -> Forecast:
    """Ask for the answer and read it (``finish_answer``, with ``finish`` its options); a
    prompt too long for the model's window is sent as ``compact`` instead, where given."""
    sent = list(messages)
    try:
        reply = episode.chat(model, decoding.request(sent, response_schema=schema))
    except ContextOverflow:
        if compact is None:
            raise
        sent = list(compact)
        reply = episode.chat(model, decoding.request(sent, response_schema=schema))
    sent.append(Message(role="assistant", content=reply.content))
    return finish_answer(episode, model, decoding, sent, reply.content, compact=compact, **finish)


_PROB_KEYS = ("probabilities", "probs", "forecast", "distribution")
_TEXT_KEYS = ("rationale", "reasoning", "explanation")
_META_KEYS = frozenset({*_TEXT_KEYS, "confidence", "choice", "answer", "notes", "notebook"})
_QUOTES = str.maketrans({"“": '"', "”": '"', "„": '"', "‘": "'", "’": "'", "`": "'"})


def normalize_label(label: str) -> str:
    """Typographic normal form: NFKC, straight quotes, collapsed whitespace, casefolded."""
    text = unicodedata.normalize("NFKC", label).translate(_QUOTES)
    return re.sub(r"\s+", " ", text).strip().casefold()


def _fail(raw: str, reason: FailureReason, rationale: str = "") -> Forecast:
    return Forecast(raw_text=raw, usable=False, failure_reason=reason, rationale=rationale)


def _to_number(value: Any) -> tuple[float, bool] | None:
    """A probability candidate and whether it was written as a percentage."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        try:
            return float(value), False
        except OverflowError:  # an integer beyond any float: not a probability
            return math.inf, False
    if isinstance(value, str):
        s = value.strip()
        pct = s.endswith("%")
        try:
            x = float(s.rstrip("%").strip())
        except ValueError:
            return None
        return (x / 100.0 if pct else x), pct
    return None


def _probability_map(
    obj: Mapping[str, Any],
    label_keys: Mapping[str, str],
    key_of: Callable[[str], str],
    labels: Sequence[str],
) -> tuple[Mapping[str, Any] | None, str | None, str]:
    """The answer's map of probabilities, the key it stands under (None: the answer's own
    keys), and the rationale."""
    rationale = next((str(obj[k]) for k in _TEXT_KEYS if isinstance(obj.get(k), str)), "")
    for key in _PROB_KEYS:
        if isinstance(obj.get(key), Mapping):
            return obj[key], key, rationale
    by_prob_key = {prob_key(label): label for label in labels}
    prob_keys = [k for k in obj if k.startswith("prob_")]
    if prob_keys:  # Hindcast's shape: {"prob_yes": p, "prob_no": q}; an unknown one stays unknown
        return {by_prob_key.get(k, k): obj[k] for k in prob_keys}, None, rationale
    flat = {k: v for k, v in obj.items() if k not in _META_KEYS or key_of(k) in label_keys}
    return (flat or None), None, rationale


def parse_forecast(
    text: str, labels: Sequence[str], *, normalize_typography: bool = False
) -> Forecast:
    """Parse ``text`` into a forecast over ``labels`` (docs/agents.md, "Answers and failures")."""
    answer = read_answer(text)
    obj = answer.obj
    if obj is None:
        return _fail(text, answer.failure or "invalid_json")
    key_of: Callable[[str], str] = normalize_label if normalize_typography else str
    by_key: dict[str, str] = {}
    for label in labels:
        by_key.setdefault(key_of(label), label)
    mapping, under, rationale = _probability_map(obj, by_key, key_of, labels)
    if not mapping:
        return _fail(text, "no_probabilities", rationale)
    twice = answer.repeated  # which value was meant?
    if any(p[:-1] == (under,) or (len(p) == 1 and p[0] not in _META_KEYS) for p in twice):
        return _fail(text, "duplicate_labels", rationale)
    stated = _stated(obj, by_key, key_of)
    values: dict[str, float] = {}
    any_pct = False
    for key, value in mapping.items():
        matched = by_key.get(key_of(str(key)))
        if matched is None:
            return _fail(text, "unknown_labels", rationale)
        if matched in values:
            return _fail(text, "duplicate_labels", rationale)
        num = _to_number(value)
        if num is None or not math.isfinite(num[0]) or num[0] < 0:
            return _fail(text, "invalid_probability", rationale)
        values[matched] = num[0]
        any_pct = any_pct or num[1]
    complete = len(values) == len(by_key)
    if not any_pct and max(values.values()) > 1.0:
        if complete and 95.0 <= sum(values.values()) <= 105.0:  # all on a 0-100 scale
            values = {k: v / 100.0 for k, v in values.items()}
        else:
            return _fail(text, "invalid_probability", rationale)
    if any(v > 1.0 + 1e-9 for v in values.values()):
        return _fail(text, "invalid_probability", rationale)
    values = {k: min(v, 1.0) for k, v in values.items()}
    probs = scaled(completed(values, list(by_key.values())))
    if probs is None:
        return _fail(text, "no_positive_mass", rationale)
    return Forecast(probs=probs, raw_text=text, usable=True, rationale=rationale, **stated)


def _stated(
    obj: Mapping[str, Any], label_keys: Mapping[str, str], key_of: Callable[[str], str]
) -> dict[str, Any]:
    """The chosen option (when it names an outcome) and the self-reported confidence in [0, 1]
    (a percentage, or a number on a 0-100 scale, is read as such), where the answer gives them."""
    out: dict[str, Any] = {}
    choice = obj.get("choice")
    if isinstance(choice, str) and key_of(choice) in label_keys:
        out["choice"] = label_keys[key_of(choice)]
    num = _to_number(obj.get("confidence"))
    if num is not None and math.isfinite(num[0]):
        value = num[0] / 100.0 if not num[1] and 1.0 < num[0] <= 100.0 else num[0]
        if 0.0 <= value <= 1.0:
            out["confidence"] = value
    return out


_REASON_TEXT = {
    "empty_output": "Your reply was empty.",
    "no_answer_block": "Your reply did not contain a JSON answer object.",
    "invalid_json": "Your answer block was not valid JSON.",
    "no_probabilities": "Your answer did not contain any probabilities.",
    "unknown_labels": "Your answer used outcome names that are not among the allowed outcomes.",
    "duplicate_labels": "Your answer gave the same outcome more than once.",
    "invalid_probability": "Every probability must be a number between 0 and 1.",
    "no_positive_mass": "At least one probability must be greater than 0.",
}


def reparse_forecast(
    forecast: Forecast, labels: Sequence[str], *, normalize_typography: bool
) -> Forecast:
    """``forecast`` read again from its raw text under the other label matching, reply by reply
    (the first usable one wins, as in a run with this matching). Forecasts read from their first
    reply, or that ended without an answer (a spent budget, an agent error), are unchanged."""
    attempts = answer_attempts(forecast.raw_text)
    retried = len(attempts) > 1
    if forecast.usable and not retried:
        return forecast
    if not forecast.usable and forecast.failure_reason not in _REASON_TEXT:
        return forecast
    for reply in attempts:
        again = parse_forecast(reply, labels, normalize_typography=normalize_typography)
        if again.usable:
            return again.model_copy(update={"raw_text": forecast.raw_text})
    return forecast


def repair_prompt(reason: str, labels: Sequence[str], template: str | None = None) -> str:
    """A short re-prompt asking for the answer again in the exact expected format (``template``:
    the agent's answer format; pastcast's probabilities object by default)."""
    problem = _REASON_TEXT.get(reason, "Your answer could not be read.")
    allowed = ", ".join(json.dumps(label, ensure_ascii=False) for label in labels)
    return (
        f"{problem} Reply again with only one JSON object and nothing else, in this format:\n"
        f"{template or answer_template(labels)}\n"
        f"Use exactly these outcome names as keys: {allowed}. "
        "Probabilities are numbers between 0 and 1 and should sum to 1."
    )
