"""What every model-driven agent shares: prompt fields from the question view, the answer
schema, and turning a final reply into a ``Forecast`` with at most one repair re-prompt."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pastcast.agents._parsing import parse_forecast, repair_prompt
from pastcast.agents._prompts import question_fields
from pastcast.env import Episode, QuestionView
from pastcast.models import ChatRequest, Model
from pastcast.records import Event, Forecast, Message

__all__ = ["Decoding", "answer_schema", "finish_answer", "view_fields"]


class Decoding:
    """Per-call decoding options shared by an agent's requests (None: provider default)."""

    def __init__(
        self,
        temperature: float | None = None,
        max_tokens: int | None = None,
        seed: int | None = None,
    ) -> None:
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.seed = seed

    def request(self, messages: Sequence[Message], **kw: Any) -> ChatRequest:
        return ChatRequest(
            messages=tuple(messages),
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            seed=self.seed,
            **kw,
        )


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


def finish_answer(
    episode: Episode,
    model: Model,
    decoding: Decoding,
    messages: Sequence[Message],
    reply: str,
    *,
    normalize_typography: bool = False,
    repair: bool = True,
) -> Forecast:
    """Parse ``reply`` (the last assistant message of ``messages``); if unusable, re-prompt once.

    The repair request asks for the answer again, constrained by ``answer_schema``. An answer
    that is still unusable is returned as such (the scorer applies the fallback) with the
    first reply's ``failure_reason``, and both replies in ``raw_text``.
    """
    labels = episode.question.labels
    forecast = parse_forecast(reply, labels, normalize_typography=normalize_typography)
    if forecast.usable or not repair:
        return forecast
    reason = forecast.failure_reason or "invalid_json"
    ask = Message(role="user", content=repair_prompt(reason, labels))
    request = decoding.request([*messages, ask], response_schema=answer_schema(labels))
    again = episode.chat(model, request).content
    repaired = parse_forecast(again, labels, normalize_typography=normalize_typography)
    if repaired.usable:
        return repaired.model_copy(update={"rationale": repaired.rationale or forecast.rationale})
    return forecast.model_copy(
        update={"raw_text": f"{reply}\n\n[reply to the repair request]\n{again}"}
    )
