"""Chat models behind the OpenAI chat-completions API (OpenAI itself or any compatible server).

The official client is imported lazily (optional extra ``llm``). Retries with exponential
backoff on 408/409/429/5xx and connection errors are the client's own (``max_retries``); a call
that still fails raises ``ModelError``. The API key is read from the environment variable named
by ``api_key_env`` and is kept only inside the client: it is never part of ``spec`` (what run
logs record), of errors, or of ``repr``.
"""

from __future__ import annotations

import json
import os
from typing import Any, Literal

from pastcast import safejson
from pastcast.models._pricing import PriceTable
from pastcast.models._protocol import ChatRequest, ChatResponse, ModelError
from pastcast.records import Message, RequestedToolCall, Usage

__all__ = ["OpenAICompatibleModel", "to_openai_messages"]

SchemaStyle = Literal["json_schema", "json_object"]


def to_openai_messages(messages: tuple[Message, ...]) -> list[dict[str, Any]]:
    """Our messages in chat-completions form. Content is always a string ("" rather than None:
    some servers reject a null assistant content)."""
    out: list[dict[str, Any]] = []
    for m in messages:
        item: dict[str, Any] = {"role": m.role, "content": m.content or ""}
        if m.role == "assistant" and m.tool_calls:
            item["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": json.dumps(c.arguments)},
                }
                for c in m.tool_calls
            ]
        if m.role == "tool":
            item["tool_call_id"] = m.tool_call_id or ""
        elif m.name:
            item["name"] = m.name
        out.append(item)
    return out


def _tool_call(raw: Any) -> RequestedToolCall:
    text = raw.function.arguments or "{}"
    try:
        args = safejson.loads(text)
    except json.JSONDecodeError:
        args = None
    if not isinstance(args, dict):
        # Kept verbatim so the agent loop can report the malformed call back to the model.
        args = {"_raw": text}
    return RequestedToolCall(id=raw.id or "", name=raw.function.name or "", arguments=args)


class OpenAICompatibleModel:
    """One model of an OpenAI-compatible chat-completions endpoint."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key_env: str | None = "OPENAI_API_KEY",
        provider: str = "openai",
        timeout_s: float = 120.0,
        max_retries: int = 4,
        prices: PriceTable | None = None,
        schema_style: SchemaStyle = "json_schema",
        strict_schema: bool = False,
        extra_body: dict[str, Any] | None = None,
        name: str | None = None,
    ) -> None:
        try:
            import openai
        except ImportError as exc:
            raise ModelError(
                "the OpenAI client is not installed: pip install 'pastcast[llm]'"
            ) from exc
        if api_key_env is None:
            api_key = "no-key"  # local servers ignore it, but the client requires one
        else:
            api_key = os.environ.get(api_key_env, "")
            if not api_key:
                raise ModelError(f"environment variable {api_key_env} is not set (API key)")
        self.model = model
        self.base_url = base_url
        self.provider = provider
        self.schema_style: SchemaStyle = schema_style
        self.strict_schema = strict_schema
        self.extra_body = dict(extra_body or {})
        self.prices = prices if prices is not None else PriceTable()
        self._name = name or f"{provider}:{model}"
        self.spec: dict[str, Any] = {
            "model": model,
            "base_url": base_url,
            "api_key_env": api_key_env,
            "provider": provider,
            "timeout_s": timeout_s,
            "max_retries": max_retries,
            "schema_style": schema_style,
            "strict_schema": strict_schema,
        }
        self._client = openai.OpenAI(
            api_key=api_key, base_url=base_url, timeout=timeout_s, max_retries=max_retries
        )
        self._errors: tuple[type[BaseException], ...] = (openai.OpenAIError,)

    @property
    def name(self) -> str:
        return self._name

    def __repr__(self) -> str:
        return f"OpenAICompatibleModel({self._name!r}, base_url={self.base_url!r})"

    def _params(self, request: ChatRequest) -> dict[str, Any]:
        params: dict[str, Any] = {
            "model": self.model,
            "messages": to_openai_messages(request.messages),
        }
        if request.tools:
            params["tools"] = [
                {
                    "type": "function",
                    "function": {
                        "name": t.name,
                        "description": t.description,
                        "parameters": t.parameters or {"type": "object", "properties": {}},
                    },
                }
                for t in request.tools
            ]
            params["tool_choice"] = "auto"
        if request.response_schema is not None:
            if self.schema_style == "json_object":
                params["response_format"] = {
                    "type": "json_object",
                    "schema": request.response_schema,
                }
            else:
                params["response_format"] = {
                    "type": "json_schema",
                    "json_schema": {
                        "name": "response",
                        "schema": request.response_schema,
                        "strict": self.strict_schema,
                    },
                }
        for key in ("temperature", "max_tokens", "seed"):
            value = getattr(request, key)
            if value is not None:
                params[key] = value
        if self.extra_body:
            params["extra_body"] = self.extra_body
        return params

    def chat(self, request: ChatRequest) -> ChatResponse:
        try:
            resp = self._client.chat.completions.create(**self._params(request))
        except self._errors as exc:
            status = getattr(exc, "status_code", None)
            where = f" (HTTP {status})" if status else ""
            raise ModelError(f"{self._name}: {type(exc).__name__}{where}: {exc}") from None
        if not resp.choices:
            raise ModelError(f"{self._name}: response without choices")
        choice = resp.choices[0]
        msg = choice.message
        calls = tuple(_tool_call(c) for c in (msg.tool_calls or []) if c.type == "function")
        usage = resp.usage
        n_in = (usage.prompt_tokens or 0) if usage else 0
        n_out = (usage.completion_tokens or 0) if usage else 0
        model = resp.model or self.model
        cost = self.prices.cost(self.model, n_in, n_out)
        return ChatResponse(
            content=msg.content or "",
            tool_calls=calls,
            usage=Usage(model_calls=1, input_tokens=n_in, output_tokens=n_out, cost_usd=cost),
            model=model,
            finish_reason=choice.finish_reason,
        )
