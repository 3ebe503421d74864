"""The curation judge: one model behind versioned prompts and JSON schemas, every call recorded.

The judge is any ``pastcast.models`` model (``resolve_model`` spec); wrapped in the record/replay
``CachedModel`` it answers a repeated request from disk, so re-curating with the same prompts,
model and corpus makes no new calls and reproduces the benchmark. Prompts are filled from the
question view an agent would see (``pastcast.env.question_view``) and retrieved documents only:
no function here takes a resolution, a price or a trajectory.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import KW_ONLY, dataclass, field
from datetime import datetime
from importlib import resources
from typing import Any, TypeVar

from pydantic import ValidationError

from pastcast import safejson
from pastcast.agents import load_prompt, prompt_registry
from pastcast.curate._records import Judgement
from pastcast.env import question_view
from pastcast.models import CachedModel, ChatRequest, Model, ModelError
from pastcast.records import Event, Usage
from pastcast.safejson import canonical_json
from pastcast.validation import problems

CURATION_VERSION = "1"
"""How judge outputs are read and scored; recorded with every judgement."""

T = TypeVar("T")


def _packaged(filename: str) -> str:
    return (resources.files("pastcast.curate") / "prompts" / filename).read_text(encoding="utf-8")


def _register_prompts() -> None:
    # The curation prompts join the one prompt registry (``pastcast prompts`` lists them).
    for entry in (resources.files("pastcast.curate") / "prompts").iterdir():
        pid = entry.name.removesuffix(".txt")
        if entry.name.endswith(".txt") and pid not in prompt_registry:
            prompt_registry.add(pid, lambda name=entry.name: _packaged(name), description=pid)


_register_prompts()


def question_text(event: Event, judged_at: datetime) -> str:
    """The question as an agent sees it on ``judged_at`` (built from the event alone)."""
    return question_view(event, judged_at, 0).render()


def reply_schema(title: str, properties: dict[str, Any]) -> dict[str, Any]:
    """The schema of a judge's reply (``title``: its prompt): an object of exactly
    ``properties``, each required."""
    return {
        "title": title,
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


def _json_object(text: str) -> dict[str, Any]:
    """The reply's JSON object (the outermost braces when there is text around it)."""
    try:
        value = safejson.loads(text)
    except ValueError:
        start, end = text.find("{"), text.rfind("}")
        if start < 0 or end <= start:
            raise ValueError("the reply holds no JSON object") from None
        try:
            value = safejson.loads(text[start : end + 1])
        except json.JSONDecodeError as exc:
            raise ValueError(f"invalid JSON: {exc.msg}") from None
    if not isinstance(value, dict):
        raise ValueError("the reply is JSON but not an object")
    return value


def _one_line(exc: BaseException) -> str:
    if isinstance(exc, ValidationError):
        return problems(exc)[0]
    return " ".join(str(exc).split()) or type(exc).__name__


@dataclass(eq=False)
class Judge:
    """Asks ``model`` for schema-constrained JSON and keeps a ``Judgement`` of every call."""

    model: Model
    _: KW_ONLY
    max_tokens: int = 512
    temperature: float = 0.0
    seed: int | None = 0
    judgements: list[Judgement] = field(default_factory=list, init=False)

    @property
    def name(self) -> str:
        return self.model.name

    def ask(
        self,
        kind: str,
        event_id: str,
        prompt_name: str,
        fields: Mapping[str, str],
        schema: dict[str, Any],
        parse: Callable[[dict[str, Any]], T],
    ) -> tuple[T | None, Judgement]:
        """Render the prompt, call the model, parse the reply: the value (None when unusable)
        and the recorded judgement (whose ``error`` says why)."""
        prompt = load_prompt(prompt_name)
        rendered = prompt.render(fields)
        request = ChatRequest(
            messages=rendered.messages(),
            response_schema=schema,
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            seed=self.seed,
        )
        base: dict[str, Any] = {
            "kind": kind,
            "event_id": event_id,
            "prompt": prompt.id,
            "prompt_sha256": prompt.sha256,
            "version": CURATION_VERSION,
            "model": self.model.name,
            "messages": request.messages,
            "response_schema": canonical_json(schema, ascii_only=True),
        }
        hits = self.model.hits if isinstance(self.model, CachedModel) else 0
        try:
            response = self.model.chat(request)
        except ModelError as exc:
            return self._keep(None, Judgement(**base, error=f"model call failed: {_one_line(exc)}"))
        cached = isinstance(self.model, CachedModel) and self.model.hits > hits
        done = {
            **base,
            "output": response.content,
            "cached": cached,
            "usage": response.usage if not cached else Usage(),
        }
        try:
            data = _json_object(response.content)
        except ValueError as exc:
            return self._keep(None, Judgement(**done, error=_one_line(exc)))
        try:
            value = parse(data)
        except (ValueError, TypeError, KeyError) as exc:
            return self._keep(None, Judgement(**done, parsed=data, error=_one_line(exc)))
        return self._keep(value, Judgement(**done, parsed=data))

    def _keep(self, value: T | None, judgement: Judgement) -> tuple[T | None, Judgement]:
        self.judgements.append(judgement)
        return value, judgement
