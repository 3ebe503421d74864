"""The model-driven research agent (ReAct): JSON actions under a schema (``action_schema``) or
native tool calls, then the final answer, asked for once when a budget runs out. Modes and
budgets: docs/agents.md, "Tool agent".
"""

from __future__ import annotations

import json
from dataclasses import KW_ONLY, dataclass, field
from typing import Any, Literal

from pastcast.agents._answer import Decoding, finish_answer, over, view_fields
from pastcast.agents._answer_reader import read_answer
from pastcast.agents._no_tools import NoToolsAgent
from pastcast.agents._notebook import NOTEBOOK_SCHEMA, memory_fields, store_notebook
from pastcast.agents._prompts import answer_template, load_prompt
from pastcast.env import TOOLS, BudgetExceeded, Episode
from pastcast.models import (
    ContextOverflow,
    Model,
    ModelError,
    ToolSpec,
    context_limits_of,
    fit_request,
)
from pastcast.records import Forecast, Message

ActionMode = Literal["json", "native"]

PROMPTS: dict[tuple[ActionMode, bool], str] = {
    ("json", False): "json_action.v1",
    ("json", True): "json_action_memory.v1",
    ("native", False): "tool_agent.v1",
    ("native", True): "memory_on.v1",
}
"""Prompt by (action mode, memory on)."""

_FINAL_NOW = (
    "Your research budget for this forecast is spent. Do not call any more tools: reply now "
    "with your final answer."
)


_TOOLS = {t.name: t for t in TOOLS}


def present_form(schema: dict[str, Any]) -> dict[str, Any]:
    """An optional argument's schema (``anyOf: [X, null]``) as X, keeping its description: the
    form it takes when given."""
    alternatives = schema.get("anyOf")
    if not alternatives or {"type": "null"} not in alternatives or len(alternatives) != 2:
        return schema
    given: dict[str, Any] = next(a for a in alternatives if a != {"type": "null"})
    return {k: v for k, v in schema.items() if k not in ("anyOf", "default")} | given


def _merged_arguments(tools: tuple[str, ...]) -> dict[str, Any]:
    """The argument properties of ``tools`` in one flat object (a JSON action carries the fields
    of every tool). A field two tools define differently keeps what they agree on (``doc_id``
    of ``read`` and ``thread``: a string; ``author``, a filter of ``search`` and the argument of
    ``author_posts``: a string)."""
    merged: dict[str, dict[str, Any]] = {}
    for name in tools:
        for key, schema in _TOOLS[name].parameters["properties"].items():
            if key in merged:
                old = merged[key]
                if ("anyOf" in old) != ("anyOf" in schema):  # optional in one tool only
                    old, schema = present_form(old), present_form(schema)
                schema = {k: v for k, v in old.items() if schema.get(k, ...) == v}
            merged[key] = schema
    return merged


def action_schema(
    tools: tuple[str, ...], labels: tuple[str, ...] | None = None, *, memory: bool = False
) -> dict[str, Any]:
    """Schema of one JSON action over the given tools (``()``: only the final action), derived
    from the tools' definitions (``pastcast.env.TOOLS``)."""
    unknown = [t for t in tools if t not in _TOOLS]
    if unknown:
        raise ValueError(f"unknown tool {unknown[0]!r} (known: {', '.join(_TOOLS)})")
    probs: dict[str, Any] = {"type": "object", "additionalProperties": {"type": "number"}}
    if labels:
        probs = {
            "type": "object",
            "properties": {lb: {"type": "number"} for lb in labels},
            "required": list(labels),
        }
    props: dict[str, Any] = {"action": {"type": "string", "enum": [*tools, "final"]}}
    props |= _merged_arguments(tools)
    props |= {"probabilities": probs, "rationale": {"type": "string"}}
    if memory:
        props["notebook"] = NOTEBOOK_SCHEMA
    required = ["action"] if tools else ["action", "probabilities", "rationale"]
    if memory and not tools:
        required.append("notebook")
    return {"type": "object", "properties": props, "required": required}


ACTION_SCHEMA: dict[str, Any] = action_schema(tuple(_TOOLS))
"""The JSON action over every tool the environment defines."""


def action_template(
    labels: tuple[str, ...], tools: tuple[str, ...] | None = None, *, memory: bool = False
) -> str:
    """The ``{actions}`` text of the JSON action prompts: one example action per tool (every
    tool when ``tools`` is None), then the final answer with the outcome names."""
    names = tuple(_TOOLS) if tools is None else tools
    final = answer_template(labels)[1:]
    if memory:
        final = final[:-1] + ', "notebook": {<your updated notebook>}}'
    lines = [f"- {_TOOLS[n].example()}" for n in names]
    return "\n".join([*lines, '- {"action": "final", ' + final])


def _tools_text(specs: tuple[ToolSpec, ...]) -> str:
    args = [", ".join(s.parameters.get("properties", {})) for s in specs]
    lines = [f"- {s.name}({a}): {s.description}" for s, a in zip(specs, args, strict=True)]
    return "\n".join(lines) or "(none)"


def research_prompt(
    episode: Episode,
    *,
    action_mode: ActionMode = "native",
    memory: bool = False,
    max_tool_calls: int | None = None,
) -> list[Message]:
    """The opening messages of a research episode (the tool agent's prompt for its action mode,
    with the question, the step's tools and the tool-call budget): what any loop driving a
    model through the episode's tools starts from."""
    specs = episode.tools.specs()
    calls = episode.config.max_tool_calls if max_tool_calls is None else max_tool_calls
    fields = view_fields(episode.question) | {
        "tools": _tools_text(specs),
        "max_tool_calls": str(calls),
        "actions": action_template(
            episode.question.labels, tuple(s.name for s in specs), memory=memory
        ),
    }
    if memory:
        fields |= memory_fields(episode)
    prompt = load_prompt(PROMPTS[(action_mode, memory)])
    return list(prompt.render(fields).messages())


@dataclass
class ToolAgent:
    """ReAct loop in ``action_mode`` ``json`` or ``native``.

    ``memory``: True uses the notebook prompts and writes ``episode.notebook_out``; None
    decides per episode (a notebook was handed in). The registry passes the run setting, so
    ``@memory_on`` turns it on from the first step.
    """

    model: Model
    _: KW_ONLY
    action_mode: ActionMode = "json"
    max_iterations: int | None = None
    max_tool_calls: int | None = None
    memory: bool | None = None
    normalize_typography: bool = False
    max_result_chars: int = 12_000
    decoding: Decoding = field(default_factory=Decoding)
    no_tools: Decoding | None = None
    """The decoding of the one call made without tools, over ``decoding`` (None: it alone)."""

    def __post_init__(self) -> None:
        if self.action_mode not in ("json", "native"):
            raise ValueError(f"action_mode must be 'json' or 'native', not {self.action_mode!r}")

    def forecast(self, episode: Episode) -> Forecast:
        specs = episode.tools.specs()
        if not specs:
            return NoToolsAgent(
                self.model,
                constrained=self.action_mode == "json",
                normalize_typography=self.normalize_typography,
                decoding=over(self.decoding, self.no_tools),
            ).forecast(episode)
        memory = self.memory if self.memory is not None else episode.notebook_in is not None
        cfg = episode.config
        calls_left = min(self.max_tool_calls or cfg.max_tool_calls, cfg.max_tool_calls)
        messages = research_prompt(
            episode, action_mode=self.action_mode, memory=memory, max_tool_calls=calls_left
        )
        turns = min(self.max_iterations or cfg.max_tool_iterations, cfg.max_tool_iterations)
        prompt_len = len(messages)
        for _ in range(turns):
            try:
                final, calls_left = self._turn(episode, messages, specs, memory, calls_left)
            except ModelError:
                if len(messages) <= prompt_len:
                    raise
                # The conversation outgrew what the model accepts (a bounded model's context,
                # found before sending: ContextOverflow; or a server's refusal): compact the
                # research so far and ask for the answer.
                messages[:] = self._compacted_to_fit(messages, prompt_len)
                break
            if final is not None:
                return self._finish(episode, messages, final, memory)
            if calls_left <= 0:
                break
        return self._finish(episode, messages, self._final_now(episode, messages, memory), memory)

    def _turn(
        self,
        episode: Episode,
        messages: list[Message],
        specs: tuple[ToolSpec, ...],
        memory: bool,
        calls_left: int,
    ) -> tuple[str | None, int]:
        """One model turn: (the final reply's text, or None to go on; tool calls left)."""
        if self.action_mode == "json":
            names = tuple(s.name for s in specs)
            schema = action_schema(names, episode.question.labels, memory=memory)
            request = self.decoding.request(messages, response_schema=schema)
            reply = episode.chat(self.model, request)
            messages.append(Message(role="assistant", content=reply.content))
            objects = read_answer(reply.content).objects()
            action = next((obj for obj in objects if "action" in obj), None)
            if action is None or action.get("action") == "final":
                return reply.content, calls_left
            name = str(action.get("action"))
            args = {k: v for k, v in action.items() if k != "action"}
            result = self._call(episode, name, args)
            if result is None:
                return None, 0
            messages.append(Message(role="user", content=result))
            return None, calls_left - 1
        reply = episode.chat(self.model, self.decoding.request(messages, tools=specs))
        messages.append(
            Message(role="assistant", content=reply.content or "", tool_calls=reply.tool_calls)
        )
        if not reply.tool_calls:
            return reply.content, calls_left
        for call in reply.tool_calls:
            result = (
                self._call(episode, call.name, call.arguments)
                if calls_left > 0
                else json.dumps({"error": "tool call budget spent"})
            )
            if result is None:  # the environment's budget is spent: answer the call, then stop
                result, calls_left = json.dumps({"error": "tool call budget spent"}), 0
            calls_left -= 1
            messages.append(
                Message(role="tool", content=result, tool_call_id=call.id, name=call.name)
            )
        return None, max(calls_left, 0)

    def _call(self, episode: Episode, name: str, args: dict[str, Any]) -> str | None:
        """Run a tool; its result (or refusal) as text, or None when the budget is spent. The
        text is cut to ``max_result_chars``, and to a quarter of a bounded model's window: one
        read must leave room for the conversation around it."""
        cut = self.max_result_chars
        if (limits := context_limits_of(self.model)) is not None:
            cut = min(cut, int(limits.window * limits.bytes_per_token / 4))
        try:
            return episode.call_tool(name, args, max_chars=cut)
        except BudgetExceeded:
            return None

    def _compacted_to_fit(self, messages: list[Message], keep: int) -> list[Message]:
        """The prompt messages, then the research shortened to 400 characters a message (tool
        calls dropped); for a bounded model, the oldest research messages dropped until the
        final request fits its window."""
        out = [
            *messages[:keep],
            *(
                Message(role="user" if m.role == "tool" else m.role, content=m.content[:400])
                for m in messages[keep:]
            ),
        ]
        limits = context_limits_of(self.model)
        if limits is None:
            return out
        ask = Message(role="user", content=_FINAL_NOW)
        while len(out) > keep:
            try:
                fit_request(self.decoding.request([*out, ask]), limits)
            except ContextOverflow:
                del out[keep]
                continue
            break
        return out

    def _final_now(self, episode: Episode, messages: list[Message], memory: bool) -> str:
        messages.append(Message(role="user", content=_FINAL_NOW))
        labels = episode.question.labels
        schema = action_schema((), labels, memory=memory) if self.action_mode == "json" else None
        reply = episode.chat(self.model, self.decoding.request(messages, response_schema=schema))
        messages.append(Message(role="assistant", content=reply.content))
        return reply.content

    def _finish(
        self, episode: Episode, messages: list[Message], reply: str, memory: bool
    ) -> Forecast:
        forecast = finish_answer(
            episode,
            self.model,
            self.decoding,
            messages,
            reply,
            normalize_typography=self.normalize_typography,
        )
        if memory:
            store_notebook(episode, reply)
        return forecast
