"""Inspect's models as pastcast models: the ``inspect`` provider (``inspect:MODEL``).

pastcast's agents are synchronous and call their model through ``Episode.chat``; the Inspect
solver runs an agent in a worker thread, and each chat call is sent back to the evaluation's
event loop (``anyio.from_thread``), where Inspect's model of the current sample generates. So
Inspect records every call (``inspect view`` shows them) and the episode records exactly what
was sent, as in ``pastcast run``.
"""

from __future__ import annotations

import json
from typing import Any

import anyio.from_thread
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageTool,
    ChatMessageUser,
    GenerateConfig,
    ModelOutput,
    ResponseSchema,
    get_model,
)
from inspect_ai.model import Model as InspectModel
from inspect_ai.tool import ToolCall as InspectToolCall
from inspect_ai.tool import ToolInfo
from inspect_ai.util import JSONSchema, LimitExceededError

from pastcast.env import BudgetExceeded
from pastcast.models import ChatRequest, ChatResponse, ModelError, register_provider
from pastcast.records import Message, RequestedToolCall, Usage

PROVIDER = "inspect"


def inspect_messages(messages: tuple[Message, ...] | list[Message]) -> list[ChatMessage]:
    """pastcast messages as Inspect's chat messages (tool calls and their results kept)."""
    out: list[ChatMessage] = []
    for m in messages:
        if m.role == "system":
            out.append(ChatMessageSystem(content=m.content))
        elif m.role == "user":
            out.append(ChatMessageUser(content=m.content))
        elif m.role == "assistant":
            calls = [
                InspectToolCall(id=c.id, function=c.name, arguments=dict(c.arguments))
                for c in m.tool_calls
            ]
            out.append(ChatMessageAssistant(content=m.content, tool_calls=calls or None))
        else:
            out.append(
                ChatMessageTool(content=m.content, tool_call_id=m.tool_call_id, function=m.name)
            )
    return out


def _config(request: ChatRequest) -> GenerateConfig:
    schema = None
    if request.response_schema is not None:
        schema = ResponseSchema(
            name="answer", json_schema=JSONSchema.model_validate(request.response_schema)
        )
    return GenerateConfig(
        temperature=request.temperature,
        max_tokens=request.max_tokens,
        seed=request.seed,
        top_p=request.top_p,
        reasoning_effort=request.reasoning_effort,
        response_schema=schema,
    )


def _response(output: ModelOutput) -> ChatResponse:
    message = output.message
    calls = tuple(
        RequestedToolCall(id=c.id, name=c.function, arguments=dict(c.arguments))
        for c in message.tool_calls or ()
    )
    u = output.usage
    usage = Usage(
        model_calls=1,
        input_tokens=u.input_tokens if u else 0,
        output_tokens=u.output_tokens if u else 0,
        cost_usd=(u.total_cost or 0.0) if u else 0.0,
    )
    return ChatResponse(
        content=message.text,
        tool_calls=calls,
        usage=usage,
        model=output.model,
        finish_reason=output.stop_reason,
    )


class InspectChatModel:
    """A pastcast ``Model`` over Inspect's model named ``model`` (the evaluation's own model when
    the names agree, so a scripted ``mockllm`` keeps its outputs). Works inside an Inspect
    evaluation, from the solver's worker thread."""

    def __init__(self, model: str) -> None:
        self._model = model

    @property
    def name(self) -> str:
        return f"{PROVIDER}:{self._model}"

    def _inspect_model(self) -> InspectModel:
        active = get_model()
        return active if str(active) == self._model else get_model(self._model)

    async def _generate(self, request: ChatRequest) -> ChatResponse:
        tools = [ToolInfo.model_validate(t.model_dump()) for t in request.tools]
        output = await self._inspect_model().generate(
            inspect_messages(request.messages), tools=tools, config=_config(request)
        )
        if output.error:
            raise ModelError(f"{self.name}: {output.error}")
        return _response(output)

    def chat(self, request: ChatRequest) -> ChatResponse:
        try:
            return anyio.from_thread.run(self._generate, request)
        except LimitExceededError as exc:  # Inspect's token, message or time limit: a budget
            raise BudgetExceeded(f"inspect {exc.type}", int(exc.limit)) from None
        except (ModelError, BudgetExceeded):
            raise
        except RuntimeError as exc:
            if "event loop" in str(exc) or "worker thread" in str(exc):
                raise ModelError(
                    f"{self.name}: the inspect provider runs inside an Inspect evaluation "
                    "(inspect eval pastcast/forecast)"
                ) from None
            raise ModelError(f"{self.name}: {type(exc).__name__}: {exc}") from exc
        except Exception as exc:
            raise ModelError(f"{self.name}: {type(exc).__name__}: {exc}") from exc


@register_provider(PROVIDER)
def inspect_model(rest: str, **options: Any) -> InspectChatModel:
    """Inspect's model ``rest`` (``openai/gpt-4o``, ``mockllm/model``), inside an Inspect
    evaluation."""
    if options:
        raise ValueError(
            f"model {PROVIDER}:{rest}: options {json.dumps(sorted(options))} are Inspect's "
            "(-M/--model-config), not pastcast's"
        )
    return InspectChatModel(rest)
