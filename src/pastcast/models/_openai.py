"""Chat models behind the OpenAI chat-completions API (OpenAI itself or any compatible server;
the official client imported lazily, extra ``llm``). Failures by kind, retried here or by the
run's gate (``using_gate``), the client's own retries off: docs/models.md, "Request settings".
The API key is read from the environment variable named by ``api_key_env`` and kept only inside
the client: never in ``spec`` (what run logs record), in errors (``pastcast.retrying.redact``) or
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
    FailureKind,
    RetryPolicy,
    call_with_retries,
    redact,
    retry_after_seconds,
)

SchemaStyle = Literal["json_schema", "json_object"]

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
        try:
            import openai
        except ImportError as exc:
            raise ModelError(
                "the OpenAI client is not installed: pip install 'pastcast[llm]'"
            ) from exc
        self._secrets: tuple[str, ...] = ()
        if api_key_env is None:
            api_key = "no-key"  # local servers ignore it, but the client requires one
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
        from pastcast.models._http import ThreadPools

        # The client's retries are off: ours see every attempt (gate, accounting, Retry-After).
        self._client = openai.OpenAI(
            api_key=api_key,
            base_url=base_url,
            timeout=timeout_s,
            max_retries=0,
            # Mounted, not given as the transport: the proxies set in the environment still apply.
            http_client=openai.DefaultHttpxClient(mounts={"all://": ThreadPools()}),
        )
        self._openai = openai

    @property
    def name(self) -> str:
        return self._name

    def close(self) -> None:
        """Close the client's connections (``clear_models``, at the end of a run)."""
        self._client.close()

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
        if self.extra_body:
            params["extra_body"] = self.extra_body
        return params

    def chat(self, request: ChatRequest) -> ChatResponse:
        params = self._params(request)
        gate = current_gate()
        if gate is None:
            return call_with_retries(lambda: self._attempt(params), self.retry)
        # For token rate limits: about 4 bytes an input token (a typical count, not the context
        # fit's cautious one), plus the reply's token limit (or a typical reply).
        tokens = prompt_tokens(request, 4.0, 0) + (request.max_tokens or 512)
        return gate.call(self.provider, self.model, tokens, lambda: self._attempt(params))

    def _attempt(self, params: dict[str, Any]) -> ChatResponse:
        """One request; any failure is a ``ProviderError`` of its kind.

        Sent with the client's generic ``post`` (its documented way to any endpoint), the body
        and the reply as plain JSON: ``chat.completions.create`` would walk the body against the
        SDK's type annotations, and the SDK's typed reply would be built field by field, together
        a third of a step's CPU at hundreds of requests a second."""
        body = dict(params)
        body.update(body.pop("extra_body", None) or {})
        try:
            resp = self._client.post("/chat/completions", body=body, cast_to=object)
        except self._openai.OpenAIError as exc:
            raise self._classify(exc) from None
        except ValueError as exc:  # the reply's JSON is cut or garbled (json.JSONDecodeError)
            raise ProviderError(
                f"{self._name}: malformed reply: {type(exc).__name__}: {exc}", kind="bad_response"
            ) from None
        return self._response(resp)

    def _classify(self, exc: Exception) -> ProviderError:
        openai = self._openai
        status = getattr(exc, "status_code", None)
        where = f" (HTTP {status})" if status else ""
        message = redact(f"{self._name}: {type(exc).__name__}{where}: {exc}", self._secrets)
        kind: FailureKind
        if isinstance(exc, openai.APITimeoutError):
            kind = "timeout"
        elif isinstance(exc, openai.APIConnectionError):
            kind = "connection"
        elif isinstance(exc, openai.APIResponseValidationError):
            kind = "bad_response"
        elif status == 429:
            kind = "rate_limited"
        elif status is not None and (status >= 500 or status in (408, 409)):
            kind = "server_error"
        elif status in (401, 403, 404):
            kind = "unavailable"
        else:
            kind = "refused"
        response = getattr(exc, "response", None)
        headers = dict(response.headers) if response is not None else {}
        return ProviderError(
            message, kind=kind, status=status, retry_after=retry_after_seconds(headers)
        )

    def _response(self, resp: object) -> ChatResponse:
        if isinstance(resp, str):  # JSON under another content type: the client gives the text
            try:
                resp = safejson.loads(resp)
            except json.JSONDecodeError:
                resp = None
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
