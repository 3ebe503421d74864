"""An episode's transcript: every message once, and exactly what each model call sent and got.

Requests of one conversation resend the messages before them, so a message is stored once and
a model call lists the indices of what it sent. A request reuses the longest prefix it shares
with the previous request and its reply; the rest is stored anew. A compacted conversation thus
reuses its prompts but not the shortened research, and two equal messages at different places
of a conversation stay two entries.
"""

from __future__ import annotations

import json

from pastcast.models import ChatRequest, ChatResponse
from pastcast.records import Message, ModelCall, Usage


class Transcript:
    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.model_calls: list[ModelCall] = []
        self._last: list[int] = []
        """The previous request's message indices, then its reply's."""

    def _store(self, message: Message) -> int:
        self.messages.append(message)
        return len(self.messages) - 1

    def _indices(self, messages: tuple[Message, ...]) -> tuple[int, ...]:
        shared = 0
        for i, m in zip(self._last, messages, strict=False):
            if self.messages[i] != m:
                break
            shared += 1
        return (*self._last[:shared], *(self._store(m) for m in messages[shared:]))

    def add(
        self,
        seq: int,
        model: str,
        request: ChatRequest,
        response: ChatResponse | None,
        latency_s: float,
        error: str | None = None,
    ) -> None:
        """Record one call: ``response`` None and ``error`` set when the call raised."""
        sent = self._indices(request.messages)
        reply: int | None = None
        if response is not None:
            msg = Message(
                role="assistant", content=response.content, tool_calls=response.tool_calls
            )
            reply = self._store(msg)
        self._last = [*sent, *(() if reply is None else (reply,))]
        schema = request.response_schema
        self.model_calls.append(
            ModelCall(
                seq=seq,
                model=model,
                messages=sent,
                tools=tuple(t.name for t in request.tools),
                response_schema="" if schema is None else json.dumps(schema, ensure_ascii=False),
                temperature=request.temperature,
                max_tokens=request.max_tokens,
                seed=request.seed,
                top_p=request.top_p,
                reasoning_effort=request.reasoning_effort,
                reply=reply,
                finish_reason=None if response is None else response.finish_reason,
                usage=Usage() if response is None else response.usage,
                latency_s=latency_s,
                error=error,
            )
        )
