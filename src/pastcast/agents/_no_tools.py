"""The no-tools agent: one model call with the question (built from the event, never from its
resolution) and the forecast date, then the forecast: Forecast-Dojo's no-tools setting and
Hindcast's zero-shot baseline (appendix B.1; docs/agents.md)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import KW_ONLY, dataclass, field

from pastcast.agents._answer import (
    AnswerForm,
    Decoding,
    ParseFallback,
    ask_answer,
    form_schema,
    over,
    view_fields,
)
from pastcast.agents._prompts import load_prompt
from pastcast.env import Episode
from pastcast.models import Model
from pastcast.records import Forecast

NO_TOOLS_PROMPT = "no_tools.v1"
ZERO_SHOT_PROMPT = "zero_shot.v1"
_PROMPT_FORM: dict[str, AnswerForm] = {NO_TOOLS_PROMPT: "probabilities", ZERO_SHOT_PROMPT: "choice"}


@dataclass
class NoToolsAgent:
    """One call; ``constrained`` asks the provider for schema-constrained JSON (small models);
    ``prompt`` is ``no_tools.v1`` (pastcast's answer object) or ``zero_shot.v1`` (Hindcast's)."""

    model: Model
    _: KW_ONLY
    constrained: bool = False
    normalize_typography: bool = False
    decoding: Decoding = field(default_factory=Decoding)
    prompt: str = NO_TOOLS_PROMPT
    fallback: ParseFallback = "repair"
    stages: Mapping[str, Decoding] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.prompt not in _PROMPT_FORM:
            shown = ", ".join(_PROMPT_FORM)
            raise ValueError(f"prompt must be one of {shown}, not {self.prompt!r}")

    @property
    def form(self) -> AnswerForm:
        return _PROMPT_FORM[self.prompt]

    def forecast(self, episode: Episode) -> Forecast:
        rendered = load_prompt(self.prompt).render(view_fields(episode.question))
        schema = form_schema(self.form, episode.question.labels) if self.constrained else None
        return ask_answer(
            episode,
            self.model,
            over(self.decoding, self.stages.get("forecast")),
            rendered.messages(),
            schema=schema,
            normalize_typography=self.normalize_typography,
            fallback=self.fallback,
            form=self.form,
            stages=self.stages,
        )
