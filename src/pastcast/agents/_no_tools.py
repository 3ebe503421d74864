"""The no-tools agent: one model call with the question, then the forecast.

Forecast-Dojo's no-tools setting and Hindcast's zero-shot baseline: the model sees only the
question (built from the event, never from its resolution) and the forecast date.
"""

from __future__ import annotations

from pastcast.agents._answer import Decoding, answer_schema, finish_answer, view_fields
from pastcast.agents._prompts import load_prompt
from pastcast.env import Episode
from pastcast.models import Model
from pastcast.records import Forecast, Message

__all__ = ["NO_TOOLS_PROMPT", "NoToolsAgent"]

NO_TOOLS_PROMPT = "no_tools.v1"


class NoToolsAgent:
    """One call; ``constrained`` asks the provider for schema-constrained JSON (small models)."""

    def __init__(
        self,
        model: Model,
        *,
        constrained: bool = False,
        normalize_typography: bool = False,
        decoding: Decoding | None = None,
    ) -> None:
        self.model = model
        self.constrained = constrained
        self.normalize_typography = normalize_typography
        self.decoding = decoding or Decoding()

    def forecast(self, episode: Episode) -> Forecast:
        labels = episode.question.labels
        rendered = load_prompt(NO_TOOLS_PROMPT).render(view_fields(episode.question))
        messages = list(rendered.messages())
        schema = answer_schema(labels) if self.constrained else None
        reply = episode.chat(self.model, self.decoding.request(messages, response_schema=schema))
        messages.append(Message(role="assistant", content=reply.content))
        return finish_answer(
            episode,
            self.model,
            self.decoding,
            messages,
            reply.content,
            normalize_typography=self.normalize_typography,
        )
