"""A model-driven research agent with a JSON action format (search / read / python / final).

The action format is constrained by a JSON schema for models without reliable native tool
calling; each turn the model emits one action, the environment executes it through the step's
cutoff-bound tools, and the result comes back as the next user message.
"""

from __future__ import annotations

import json
from typing import Any

from pastcast.agents._jsonish import find_blocks, load_object, strip_thinking
from pastcast.agents._parsing import parse_forecast
from pastcast.env import Episode, ToolError
from pastcast.models import ChatRequest, Model
from pastcast.records import Forecast, Message

__all__ = ["ACTION_SCHEMA", "JsonActionAgent"]

ACTION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "action": {
            "type": "string",
            "enum": ["search", "read", "python", "market_history", "final"],
        },
        "query": {"type": "string"},
        "top_k": {"type": "integer"},
        "doc_id": {"type": "string"},
        "code": {"type": "string"},
        "probabilities": {"type": "object", "additionalProperties": {"type": "number"}},
        "rationale": {"type": "string"},
        "notebook": {"type": "string"},
    },
    "required": ["action"],
}

_SYSTEM = (
    "You are a careful forecaster. Research the question with the tools, then give calibrated "
    "probabilities for every outcome. Reply with exactly one JSON object per turn:\n"
    '{"action": "search", "query": "...", "top_k": 10} | {"action": "read", "doc_id": "..."} | '
    '{"action": "python", "code": "..."} | {"action": "final", "probabilities": '
    '{"<outcome>": p, ...}, "rationale": "...", "notebook": "..."}'
)


class JsonActionAgent:
    """ReAct loop over JSON actions; ``max_iterations`` caps model turns within the step budget."""

    def __init__(self, model: Model, *, max_iterations: int = 20, system: str = _SYSTEM) -> None:
        self.model = model
        self.max_iterations = max_iterations
        self.system = system

    def _first_user_message(self, episode: Episode) -> str:
        tools = ", ".join(s.name for s in episode.tools.specs()) or "none"
        parts = [episode.question.render(), f"Available tools: {tools}."]
        if episode.notebook_in:
            parts.append(f"Your notebook from the previous forecast date:\n{episode.notebook_in}")
        return "\n\n".join(parts)

    def forecast(self, episode: Episode) -> Forecast:
        labels = episode.question.labels
        messages = [
            Message(role="system", content=self.system),
            Message(role="user", content=self._first_user_message(episode)),
        ]
        limit = min(self.max_iterations, episode.config.max_tool_iterations + 1)
        for _ in range(limit):
            request = ChatRequest(messages=tuple(messages), response_schema=ACTION_SCHEMA)
            reply = episode.chat(self.model, request)
            messages.append(Message(role="assistant", content=reply.content))
            action = _last_action(reply.content)
            if action is None or action.get("action") == "final":
                forecast = parse_forecast(reply.content, labels)
                notebook = action.get("notebook") if action else None
                if isinstance(notebook, str):
                    episode.notebook_out = notebook
                return forecast
            name = str(action.get("action"))
            args = {k: v for k, v in action.items() if k != "action"}
            try:
                result: Any = episode.tools.call(name, args)
            except ToolError as exc:
                result = {"error": str(exc)}
            messages.append(Message(role="user", content=json.dumps(result)[:20_000]))
        return Forecast(
            usable=False, failure_reason="no_final_answer", raw_text=messages[-1].content
        )


def _last_action(text: str) -> dict[str, Any] | None:
    for block in reversed(find_blocks(strip_thinking(text))):
        obj, _ = load_object(block.text)
        if obj is not None and "action" in obj:
            return obj
    return None
