"""The model contract: one synchronous chat call in, one response out."""

from __future__ import annotations

from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import Field

from pastcast.records import Message, Record, RequestedToolCall, Usage

ReasoningEffort = Literal["none", "minimal", "low", "medium", "high", "xhigh", "max"]
"""How hard a reasoning model thinks before it answers (OpenAI's ``reasoning_effort``)."""


class ModelError(RuntimeError):
    """A model call that failed after the provider's retries."""


class ToolSpec(Record):
    """A tool offered to a model: name, description and JSON schema of its arguments."""

    name: str
    description: str
    parameters: dict[str, Any] = Field(default_factory=dict)


class ChatRequest(Record):
    messages: tuple[Message, ...]
    tools: tuple[ToolSpec, ...] = ()
    response_schema: dict[str, Any] | None = None
    """JSON schema the reply must satisfy (constrained decoding where the provider supports it)."""
    temperature: float | None = None
    max_tokens: int | None = None
    seed: int | None = None
    top_p: float | None = Field(default=None, gt=0.0, le=1.0)
    """Nucleus sampling: the probability mass sampled from (None: the provider's default)."""
    reasoning_effort: ReasoningEffort | None = None
    """None: the field is not sent and the provider's default applies (Forecast-Dojo Table 10's
    "default"); a provider that cannot honour a value refuses the request."""
    rollout: int = Field(default=0, ge=0)
    """Which rollout of a step sends the request (set by the episode). Never sent to a provider:
    it is part of the cache key, so rollouts of one step sample independently with a cache."""


class ChatResponse(Record):
    content: str
    tool_calls: tuple[RequestedToolCall, ...] = ()
    usage: Usage = Usage()
    model: str = ""
    finish_reason: str | None = None


@runtime_checkable
class Model(Protocol):
    """A chat model. ``name`` is recorded in run logs (e.g. ``openai:gpt-4o-mini``)."""

    @property
    def name(self) -> str: ...

    def chat(self, request: ChatRequest) -> ChatResponse: ...
