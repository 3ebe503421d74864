"""What every model-driven agent shares: request settings (per stage), prompt fields from the
question view, the answer schemas, and turning a final reply into a ``Forecast`` with the retries
of its parse fallback.

Parse fallbacks (``ParseFallback``):

- ``repair`` (pastcast's default): the parse with local JSON repairs, then one re-prompt that
  appends the problem to the conversation and asks again under the answer schema.
- ``four_step`` (Hindcast appendix B.3): the parse, a JSON-repair pass (the model rewrites its
  own reply as the answer object), a compact re-prompt (the agent's short prompt, a brief
  answer) and a strict JSON-only re-prompt under the schema, each with its own settings (the
  ``repair``, ``compact`` and ``json_only`` stages).

The first usable reply wins; an answer still unusable keeps the first reply's failure reason
and every reply in ``raw_text`` (after ``RETRY_MARKERS``), so the outputs can be read again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal, TypeVar

from pydantic import Field

from pastcast.agents._parsing import parse_forecast, prob_key, repair_prompt
from pastcast.agents._prompts import answer_template, choice_template, question_fields
from pastcast.env import Episode, QuestionView
from pastcast.models import ChatRequest, ContextOverflow, Model, ReasoningEffort
from pastcast.records import BINARY_LABELS, RETRY_MARKERS, Event, Forecast, Message, Record

__all__ = [
    "AnswerForm",
    "Decoding",
    "ParseFallback",
    "answer_schema",
    "choice_schema",
    "finish_answer",
    "over",
    "stages_over",
    "view_fields",
]

ParseFallback = Literal["repair", "four_step"]
AnswerForm = Literal["probabilities", "choice"]
"""The answer object an agent asks for: pastcast's ``{"probabilities", "rationale"}``, or
Hindcast's ``{"choice", "prob_yes", "prob_no" (or "probabilities"), "confidence",
"reasoning"}``."""


_INT64 = 2**63 - 1


class Decoding(Record):
    """Request settings of an agent's calls: the one shape of them an agent's arguments, its
    stages and a plan's ``decoding`` table take (None: not sent, the provider's default).

    ``over`` puts the fields another ``Decoding`` sets on top, so a stage's settings set only
    what differs from the agent's, and a preset's (Hindcast's) can be changed one at a time.
    """

    temperature: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    max_tokens: int | None = Field(default=None, gt=0, le=2**31 - 1)
    seed: int | None = Field(default=None, ge=-_INT64 - 1, le=_INT64)
    top_p: float | None = Field(default=None, gt=0.0, le=1.0, allow_inf_nan=False)
    """Nucleus sampling: the probability mass sampled from."""
    reasoning_effort: ReasoningEffort | None = None

    def request(self, messages: Sequence[Message], **kw: Any) -> ChatRequest:
        return ChatRequest(messages=tuple(messages), **self.model_dump(), **kw)

    def over(self, top: Decoding | None) -> Decoding:
        """These settings with those ``top`` sets on top (see ``over``)."""
        return over(self, top)


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
    """Prompt placeholders for a question view (same rules as ``question_fields``)."""
    event = Event(
        id=q.event_id,
        title=q.title,
        description=q.description,
        resolution_criteria=q.resolution_criteria,
        kind=q.kind,
        labels=q.labels,
        category=q.category,
        open_time=q.open_time,
        close_time=q.close_time,
    )
    return question_fields(event, q.cutoff)


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


_SCHEMAS = {"probabilities": answer_schema, "choice": choice_schema}
_TEMPLATES = {"probabilities": answer_template, "choice": choice_template}

_BRIEF = (
    "Answer now, briefly: at most three sentences of reasoning, then the JSON object in the "
    "requested format, using exactly the outcome names given."
)


def _json_repair_request(reason: str, reply: str, labels: Sequence[str], template: str) -> str:
    tail = reply[-6000:]  # the answer sits at the end; the start of a long reply is reasoning
    return (
        repair_prompt(reason, labels, template)
        + "\nRewrite the reply below as that JSON object, keeping its probabilities and "
        f"reasoning.\n\nReply:\n{tail}"
    )


def finish_answer(
    episode: Episode,
    model: Model,
    decoding: Decoding,
    messages: Sequence[Message],
    reply: str,
    *,
    normalize_typography: bool = False,
    repair: bool = True,
    fallback: ParseFallback = "repair",
    form: AnswerForm = "probabilities",
    stages: Mapping[str, Decoding] | None = None,
    compact: Sequence[Message] | None = None,
) -> Forecast:
    """Parse ``reply`` (the last assistant message of ``messages``); if unusable, retry by
    ``fallback`` (see the module). ``stages`` holds the retries' settings (``repair``,
    ``compact``, ``json_only``) over ``decoding``; ``compact`` is the agent's short prompt for the
    compact and JSON-only passes (its first two messages by default); ``form`` the answer object
    the retries ask for. ``repair=False`` parses only."""
    labels = episode.question.labels
    forecast = parse_forecast(reply, labels, normalize_typography=normalize_typography)
    if forecast.usable or not repair:
        return forecast
    reason = forecast.failure_reason or "invalid_json"
    schema = _SCHEMAS[form](labels)
    template = _TEMPLATES[form](labels)
    per_stage = dict(stages or {})
    short = list(compact if compact is not None else messages[:2])

    def settings(stage: str) -> Decoding:
        return decoding.over(per_stage.get(stage))

    passes: list[tuple[str, ChatRequest]]
    if fallback == "repair":
        ask = Message(role="user", content=repair_prompt(reason, labels, template))
        passes = [("repair", settings("repair").request([*messages, ask], response_schema=schema))]
    else:
        fix = _json_repair_request(reason, reply, labels, template)
        only = f"Reply with only the JSON object in this format, nothing else:\n{template}"
        passes = [
            (
                "json_repair",
                settings("repair").request(
                    [Message(role="user", content=fix)], response_schema=schema
                ),
            ),
            (
                "compact",
                settings("compact").request([*short, Message(role="user", content=_BRIEF)]),
            ),
            (
                "json_only",
                settings("json_only").request(
                    [*short, Message(role="user", content=only)], response_schema=schema
                ),
            ),
        ]
    replies = [reply]
    for name, request in passes:
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
