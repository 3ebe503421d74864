"""Fitting a request to a model's context window before it is sent (``fit_request``; docs/models.md,
"Local llama.cpp server"). Tokens are counted from UTF-8 bytes, not with the model's tokenizer:
the count is the same with the server stopped (a replayed run sends the same requests as the
recorded one), and at 3 bytes a token it over-counts English prose and JSON, so a fitted request
stays inside the window.
"""

from __future__ import annotations

import json
import math

from pydantic import Field

from pastcast.models._protocol import ChatRequest, Model, ModelError
from pastcast.records import Record


class ContextLimits(Record):
    """What a model with a bounded context accepts."""

    window: int = Field(gt=0)
    """Context size in tokens: prompt and reply together."""
    default_max_tokens: int = Field(gt=0)
    """The reply cap of a request that names none (generation is bounded by default)."""
    min_reply_tokens: int = Field(default=256, gt=0)
    """A prompt that leaves less room than this (or than the request's own cap) overflows."""
    bytes_per_token: float = Field(default=3.0, gt=0)
    message_tokens: int = Field(default=8, ge=0)
    """Per-message overhead of the chat template (role markers, separators)."""

    def prompt_tokens(self, request: ChatRequest) -> int:
        """The request's prompt as these limits count it."""
        return prompt_tokens(request, self.bytes_per_token, self.message_tokens)


class ContextOverflow(ModelError):
    """The request does not fit the model's context; raised before anything is sent."""

    def __init__(self, message: str, prompt_tokens: int, window: int) -> None:
        super().__init__(message)
        self.prompt_tokens = prompt_tokens
        self.window = window


def context_limits_of(model: Model) -> ContextLimits | None:
    """The model's context limits, or None for a model that states none (remote providers)."""
    limits = getattr(model, "context_limits", None)
    return limits if isinstance(limits, ContextLimits) else None


def prompt_tokens(
    request: ChatRequest, bytes_per_token: float = 3.0, message_tokens: int = 8
) -> int:
    """The prompt's size in tokens, counted without a tokenizer: the UTF-8 bytes of the messages,
    their tool calls and the native tool specs (a llama.cpp chat template writes them into the
    prompt), and ``message_tokens`` for each message's template markers."""
    size = 0
    for m in request.messages:
        size += len(m.content.encode("utf-8"))
        for call in m.tool_calls:
            size += len(call.name) + len(json.dumps(call.arguments, ensure_ascii=False).encode())
    for tool in request.tools:
        size += len(json.dumps(tool.model_dump(mode="json"), ensure_ascii=False).encode())
    return math.ceil(size / bytes_per_token) + message_tokens * (len(request.messages) + 1)


def fit_request(request: ChatRequest, limits: ContextLimits) -> ChatRequest:
    """``request`` with its reply cap bounded to the room its prompt leaves in the window."""
    used = limits.prompt_tokens(request)
    room = limits.window - used
    wanted = limits.default_max_tokens if request.max_tokens is None else request.max_tokens
    if room < min(wanted, limits.min_reply_tokens):
        raise ContextOverflow(
            f"request of about {used} tokens leaves {max(room, 0)} of the model's "
            f"{limits.window}-token context for the reply (at least "
            f"{min(wanted, limits.min_reply_tokens)} needed): compact it",
            used,
            limits.window,
        )
    capped = min(wanted, room)
    if capped == request.max_tokens:
        return request
    return request.model_copy(update={"max_tokens": capped})
