"""Chat models behind the OpenAI chat-completions API (OpenAI itself or any compatible server),
spoken over HTTP (``pastcast.retrying.HttpEndpoint``). Failures by kind, retried here
or by the run's gate (``using_gate``): docs/models.md, "Request settings". The API key is read
from the environment variable named by ``api_key_env`` and kept only inside the connection's
headers: never in ``spec`` (what run logs record), in errors (``pastcast.retrying.redact``) or
in ``repr``.
"""

from __future__ import annotations

import json
import os
from typing import Any, Literal

from pastcast import safejson
from pastcast.models._context import prompt_tokens
from pastcast.models._pricing import PriceTable
from pastcast.models._protocol import ChatRequest, ChatResponse, ModelError, ToolSpec
from pastcast.models._retry import ProviderError, current_gate
from pastcast.records import Message, RequestedToolCall, Usage
from pastcast.retrying import (
    HttpEndpoint,
    ProviderFailure,
    RetryPolicy,
    call_with_retries,
    redact,
)

SchemaStyle = Literal["json_schema", "json_object"]

OPENAI_URL = "https://api.openai.com/v1"
_ENV_HEADERS = (("OpenAI-Organization", "OPENAI_ORG_ID"), ("OpenAI-Project", "OPENAI_PROJECT_ID"))
"""Headers sent when their environment variable is set, as the official client does."""

_SETTINGS = ("temperature", "max_tokens", "seed", "top_p", "reasoning_effort")
"""Request settings sent as chat-completions parameters of the same name when set."""


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


def to_openai_tools(tools: tuple[ToolSpec, ...]) -> list[dict[str, Any]]:
    """Tool specs as chat-completions function definitions (what chat templates read too)."""
    return [
        {
            "type": "function",
            "function": {
                "name": t.name,
                "description": t.description,
                "parameters": t.parameters or {"type": "object", "properties": {}},
            },
        }
        for t in tools
    ]


def _tool_call(raw: dict[str, Any]) -> RequestedToolCall:
    function = raw.get("function") or {}
    text = function.get("arguments") or "{}"
    try:
        args = safejson.loads(text)
    except json.JSONDecodeError:
        args = None
    if not isinstance(args, dict):
        # Kept verbatim so the agent loop can report the malformed call back to the model.
        args = {"_raw": text}
    return RequestedToolCall(
        id=raw.get("id") or "", name=function.get("name") or "", arguments=args
    )


class OpenAICompatibleModel:
    """One model of an OpenAI-compatible chat-completions endpoint.

    Request settings (temperature, max tokens, seed, top-p, reasoning effort) are sent when set
    and left out otherwise, so the provider's default applies. ``unsupported`` names settings the
    server cannot honour: a request that sets one is refused with a ``ModelError``.
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key_env: str | None = "OPENAI_API_KEY",
        provider: str = "openai",
        timeout_s: float = 120.0,
        max_retries: int = 4,
        prices: PriceTable | str | None = None,
        schema_style: SchemaStyle = "json_schema",
        strict_schema: bool = False,
        extra_body: dict[str, Any] | None = None,
        name: str | None = None,
        unsupported: tuple[str, ...] = (),
    ) -> None:
        self._secrets: tuple[str, ...] = ()
        if api_key_env is None:
            api_key = "no-key"  # local servers ignore it
        else:
            api_key = os.environ.get(api_key_env, "")
            if not api_key:
                raise ModelError(f"environment variable {api_key_env} is not set (API key)")
            self._secrets = (api_key,)
        self.model = model
        self.base_url = base_url
        self.provider = provider
        self.schema_style: SchemaStyle = schema_style
        self.strict_schema = strict_schema
        self.extra_body = dict(extra_body or {})
        self.unsupported = unsupported
        # A path (a JSON-able option, as plans and run logs give it) is a price file.
        self.prices = PriceTable.load(prices) if isinstance(prices, str) else prices or PriceTable()
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
        self.retry = RetryPolicy(max_retries=max_retries)
        url = base_url or os.environ.get("OPENAI_BASE_URL") or OPENAI_URL
        headers = {"Authorization": f"Bearer {api_key}", "Content-Type": "application/json"}
        headers |= {h: os.environ[v] for h, v in _ENV_HEADERS if os.environ.get(v)}
        self._http = HttpEndpoint(
            url, headers=headers, timeout_s=timeout_s, where=self._name, secrets=self._secrets
        )

    @property
    def name(self) -> str:
        return self._name

    def close(self) -> None:
        """Close the idle connections (``clear_models``, at the end of a run)."""
        self._http.close()

    def __repr__(self) -> str:
        return f"OpenAICompatibleModel({self._name!r}, base_url={self.base_url!r})"

    def _params(self, request: ChatRequest) -> dict[str, Any]:
        params: dict[str, Any] = {
            "model": self.model,
            "messages": to_openai_messages(request.messages),
        }
        if request.tools:
            params["tools"] = to_openai_tools(request.tools)
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
        for key in _SETTINGS:
            value = getattr(request, key)
            if value is None:
                continue
            if key in self.unsupported:
                # Refused rather than dropped: the run log records what each request asked for.
                raise ModelError(f"{self._name}: the server does not support {key} (got {value!r})")
            params[key] = value
        return params | self.extra_body

    def chat(self, request: ChatRequest) -> ChatResponse:
        body = json.dumps(self._params(request), separators=(",", ":"), allow_nan=False).encode()
        gate = current_gate()
        if gate is None:
            return call_with_retries(lambda: self._attempt(body), self.retry)
        # For token rate limits: about 4 bytes an input token (a typical count, not the context
        # fit's cautious one), plus the reply's token limit (or a typical reply).
        tokens = prompt_tokens(request, 4.0, 0) + (request.max_tokens or 512)
        return gate.call(self.provider, self.model, tokens, lambda: self._attempt(body))

    def _attempt(self, body: bytes) -> ChatResponse:
        """One request; any failure is a ``ProviderError`` of its kind. Plain HTTP and JSON: the
        official client cost five times this path's CPU a call (1.0 against 0.2 ms, one call at a
        time on loopback), and its import half a second of a run's start-up."""
        try:
            data = safejson.loads(self._http.post("/chat/completions", body))
        except ProviderFailure as exc:
            raise ProviderError(
                str(exc), kind=exc.kind, status=exc.status, retry_after=exc.retry_after
            ) from None
        except json.JSONDecodeError as exc:  # the reply is cut or garbled
            raise ProviderError(
                f"{self._name}: malformed reply: {exc}", kind="bad_response"
            ) from None
        return self._response(data)

    def _response(self, resp: object) -> ChatResponse:
        choices = resp.get("choices") if isinstance(resp, dict) else None
        if not isinstance(resp, dict) or not isinstance(choices, list) or not choices:
            raise ProviderError(f"{self._name}: response without choices", kind="bad_response")
        choice = choices[0]
        msg = choice.get("message") or {}
        raw_calls = msg.get("tool_calls") or []
        calls = tuple(_tool_call(c) for c in raw_calls if c.get("type") == "function")
        usage = resp.get("usage") or {}
        n_in = usage.get("prompt_tokens") or 0
        n_out = usage.get("completion_tokens") or 0
        cost = self.prices.cost(self.model, n_in, n_out)
        return ChatResponse(
            content=msg.get("content") or "",
            tool_calls=calls,
            usage=Usage(model_calls=1, input_tokens=n_in, output_tokens=n_out, cost_usd=cost),
            model=resp.get("model") or self.model,
            finish_reason=choice.get("finish_reason"),
        )


def openai_model(rest: str, **options: Any) -> OpenAICompatibleModel:
    """``openai:NAME``: OpenAI's API (the key from ``OPENAI_API_KEY``)."""
    return OpenAICompatibleModel(rest, **options)


def compatible_model(rest: str, **options: Any) -> OpenAICompatibleModel:
    """``NAME@http://host:port/v1``; no API key unless ``api_key_env`` is given."""
    name, sep, url = rest.rpartition("@")
    if not sep or not name or not url.startswith(("http://", "https://")):
        shown = redact(rest)  # a URL's password is not repeated
        raise ValueError(f"expected openai-compatible:NAME@http://host:port/v1, got {shown!r}")
    options.setdefault("api_key_env", None)
    options.setdefault("provider", "openai-compatible")
    options.setdefault("name", f"openai-compatible:{rest}")
    return OpenAICompatibleModel(name, base_url=url, **options)
