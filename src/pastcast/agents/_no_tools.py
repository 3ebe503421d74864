"""The no-tools agent: one model call with the question, then the forecast.

Forecast-Dojo's no-tools setting (``no_tools.v1``) and Hindcast's zero-shot baseline
(``zero_shot.v1``: its system line and user template, appendix B.1, and its answer object with
the chosen option, a probability per option, the self-reported confidence and brief reasoning).
The model sees only the question (built from the event, never from its resolution) and the
forecast date.
"""

from __future__ import annotations

from collections.abc import Mapping

from pastcast.agents._answer import (
    AnswerForm,
    Decoding,
    ParseFallback,
    finish_answer,
    form_schema,
    view_fields,
)
from pastcast.agents._prompts import load_prompt
from pastcast.env import Episode
from pastcast.models import Model
from pastcast.records import Forecast, Message

__all__ = ["NO_TOOLS_PROMPT", "ZERO_SHOT_PROMPT", "NoToolsAgent"]

NO_TOOLS_PROMPT = "no_tools.v1"
ZERO_SHOT_PROMPT = "zero_shot.v1"
_PROMPT_FORM: dict[str, AnswerForm] = {NO_TOOLS_PROMPT: "probabilities", ZERO_SHOT_PROMPT: "choice"}


class NoToolsAgent:
    """One call; ``constrained`` asks the provider for schema-constrained JSON (small models).

    ``prompt`` is ``no_tools.v1`` (pastcast's answer object) or ``zero_shot.v1`` (Hindcast's);
    ``fallback`` and ``stages`` (the ``forecast`` call and the retries ``repair``, ``compact``,
    ``json_only``) as in ``finish_answer``.
    """

    def __init__(
        self,
        model: Model,
        *,
        constrained: bool = False,
        normalize_typography: bool = False,
        decoding: Decoding | None = None,
        prompt: str = NO_TOOLS_PROMPT,
        fallback: ParseFallback = "repair",
        stages: Mapping[str, Decoding] | None = None,
    ) -> None:
        if prompt not in _PROMPT_FORM:
            raise ValueError(f"prompt must be one of {', '.join(_PROMPT_FORM)}, not {prompt!r}")
        self.model = model
        self.constrained = constrained
        self.normalize_typography = normalize_typography
        self.decoding = decoding or Decoding()
        self.prompt = prompt
        self.form: AnswerForm = _PROMPT_FORM[prompt]
        self.fallback: ParseFallback = fallback
        self.stages = dict(stages or {})

    def forecast(self, episode: Episode) -> Forecast:
        rendered = load_prompt(self.prompt).render(view_fields(episode.question))
        messages = list(rendered.messages())
        schema = form_schema(self.form, episode.question.labels) if self.constrained else None
        decoding = self.decoding.over(self.stages.get("forecast"))
        reply = episode.chat(self.model, decoding.request(messages, response_schema=schema))
        messages.append(Message(role="assistant", content=reply.content))
        return finish_answer(
            episode,
            self.model,
            decoding,
            messages,
            reply.content,
            normalize_typography=self.normalize_typography,
            fallback=self.fallback,
            form=self.form,
            stages=self.stages,
        )
