"""Chat messages as training libraries read them, and the conversations of an episode.

Two shapes of the same messages: ``ChatMessage`` (every key on every message, so a file loads as
one table with Hugging Face ``datasets`` and TRL's SFT trainer reads it) and the OpenAI
fine-tuning shape (only the keys each role takes). In both a tool call's arguments are JSON text,
as OpenAI sends them: arguments differ in keys from tool to tool, and as objects they would load
as one column with the keys of every tool.
"""

from __future__ import annotations

import json
from typing import Literal

from pastcast.env import TOOLS
from pastcast.errors import FieldError
from pastcast.models import ToolSpec
from pastcast.records import EpisodeRecord, Message, ModelCall, Record, RequestedToolCall

Role = Literal["system", "user", "assistant", "tool"]


class ChatFunction(Record):
    name: str
    arguments: str
    """The arguments as JSON text."""


class ChatToolCall(Record):
    id: str
    type: Literal["function"] = "function"
    function: ChatFunction


class ChatMessage(Record):
    """A message with every key present (None or empty where it does not apply)."""

    role: Role
    content: str
    name: str | None = None
    tool_call_id: str | None = None
    tool_calls: tuple[ChatToolCall, ...] = ()


class OpenAiMessage(Record):
    """A message of OpenAI's chat fine-tuning format: absent keys are left out of the file."""

    role: Role
    content: str | None = None
    tool_calls: tuple[ChatToolCall, ...] | None = None
    tool_call_id: str | None = None


class OpenAiTool(Record):
    type: Literal["function"] = "function"
    function: ToolSpec


def _tool_call(call: RequestedToolCall) -> ChatToolCall:
    arguments = json.dumps(call.arguments, ensure_ascii=False, separators=(",", ":"))
    return ChatToolCall(id=call.id, function=ChatFunction(name=call.name, arguments=arguments))


def _requested(call: ChatToolCall) -> RequestedToolCall:
    try:
        arguments = json.loads(call.function.arguments)
    except ValueError as exc:
        raise FieldError("", f"tool call {call.id}: arguments are not JSON ({exc})") from None
    return RequestedToolCall(id=call.id, name=call.function.name, arguments=arguments)


_SHARED = {"role", "content", "name", "tool_call_id"}
"""The fields ``Message`` and ``ChatMessage`` hold alike (the tool calls differ in shape)."""


def chat_message(message: Message) -> ChatMessage:
    calls = tuple(_tool_call(c) for c in message.tool_calls)
    return ChatMessage(**message.model_dump(include=_SHARED), tool_calls=calls)


def from_chat_message(message: ChatMessage) -> Message:
    """The pastcast message back (the inverse of ``chat_message``)."""
    calls = tuple(_requested(c) for c in message.tool_calls)
    return Message(**message.model_dump(include=_SHARED), tool_calls=calls)


def openai_message(message: Message) -> OpenAiMessage:
    """OpenAI's shape: an assistant turn that only calls tools has no content; a tool result
    names its call by id only."""
    calls = tuple(_tool_call(c) for c in message.tool_calls) or None
    return OpenAiMessage(
        role=message.role,
        content=None if calls and not message.content else message.content,
        tool_calls=calls,
        tool_call_id=message.tool_call_id if message.role == "tool" else None,
    )


def from_openai_messages(messages: tuple[OpenAiMessage, ...]) -> tuple[Message, ...]:
    """The pastcast messages back; a tool result gets the name of the call it answers."""
    names: dict[str, str] = {}
    out: list[Message] = []
    for m in messages:
        calls = tuple(_requested(c) for c in m.tool_calls or ())
        names.update({c.id: c.name for c in calls})
        tool = m.role == "tool"
        out.append(
            Message(
                role=m.role,
                content=m.content or "",
                name=names.get(m.tool_call_id or "") if tool else None,
                tool_call_id=m.tool_call_id,
                tool_calls=calls,
            )
        )
    return tuple(out)


_TOOL_DEFS = {t.name: t for t in TOOLS}


def tool_definitions(names: tuple[str, ...]) -> tuple[OpenAiTool, ...]:
    """The tools a model call offered natively, defined as pastcast defines them
    (``pastcast.env.TOOLS``)."""
    out = []
    for name in names:
        found = _TOOL_DEFS.get(name)
        if found is None:
            raise FieldError("", f"tool {name!r} is not defined by this pastcast")
        out.append(OpenAiTool(function=found.spec))
    return tuple(out)


class Conversation(Record):
    """One conversation of an episode: the last model call of a chain of calls, each sending
    the previous request and its reply and more, with everything it sent and its reply."""

    index: int
    call: ModelCall
    messages: tuple[Message, ...]
    final: bool
    """The episode's last conversation (it holds the final answer)."""


def conversations(episode: EpisodeRecord) -> tuple[Conversation, ...]:
    """The episode's conversations in order. A call that failed is left out (it got no reply);
    a request that does not extend the previous one (another stage, a compacted conversation)
    starts a new conversation."""
    lasts: list[ModelCall] = []
    for call in episode.model_calls:
        if call.reply is None:
            continue
        if lasts:
            prev = lasts[-1]
            sent = (*prev.messages, prev.reply)
            if call.messages[: len(sent)] == sent:
                lasts[-1] = call
                continue
        lasts.append(call)
    return tuple(
        Conversation(
            index=i,
            call=call,
            messages=(*episode.messages_of(call), episode.messages[call.reply]),
            final=i == len(lasts) - 1,
        )
        for i, call in enumerate(lasts)
        if call.reply is not None
    )
