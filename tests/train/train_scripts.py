"""A scripted forecaster for the training tests: it searches, reads the first hit and answers,
in JSON action mode or with native tool calls; its confidence in the first outcome grows with
the rollout, so rollouts of a step score differently. Reached as ``train-test:NAME`` models."""

from __future__ import annotations

import json
import re
from typing import Any

from pastcast.models import ChatRequest, ChatResponse, Model, ScriptedModel, register_provider
from pastcast.records import RequestedToolCall, Usage


def _first_user(request: ChatRequest) -> str:
    return next(m.content for m in request.messages if m.role == "user")


def labels_of(request: ChatRequest) -> list[str]:
    m = re.search(r"Possible outcomes[^\n]*:\n((?:- .*\n?)+)", _first_user(request))
    assert m, _first_user(request)
    return [line[2:].strip() for line in m.group(1).splitlines() if line.startswith("- ")]


def _title(request: ChatRequest) -> str:
    m = re.search(r"^Question: (.*)$", _first_user(request), re.MULTILINE)
    assert m
    return m.group(1)


def answer(request: ChatRequest) -> dict[str, Any]:
    labels = labels_of(request)
    top = min(0.2 + 0.3 * request.rollout, 0.9)
    rest = (1.0 - top) / (len(labels) - 1)
    probs = {lb: round(top if i == 0 else rest, 6) for i, lb in enumerate(labels)}
    return {"probabilities": probs, "rationale": "scripted"}


def _last_result(request: ChatRequest) -> Any:
    last = request.messages[-1]
    if last.role in ("user", "tool") and last.content.startswith("["):
        try:
            return json.loads(last.content)
        except ValueError:
            return None
    return None


def respond(request: ChatRequest) -> str | ChatResponse:
    result = _last_result(request)
    usage = Usage(model_calls=1, input_tokens=100, output_tokens=20)
    if request.tools:  # native tool calls
        if len(request.messages) == 2:
            call = RequestedToolCall(id="c1", name="search", arguments={"query": _title(request)})
            return ChatResponse(content="", tool_calls=(call,), usage=usage)
        if isinstance(result, list) and result:
            call = RequestedToolCall(id="c2", name="read", arguments={"doc_id": result[0]["id"]})
            return ChatResponse(content="", tool_calls=(call,), usage=usage)
        final = json.dumps(answer(request))
        return ChatResponse(content=f"Done.\n```json\n{final}\n```", usage=usage)
    schema = request.response_schema or {}
    if "action" in schema.get("properties", {}):
        tools = schema["properties"]["action"]["enum"]
        if "search" in tools and len(request.messages) == 2:
            return json.dumps({"action": "search", "query": _title(request), "top_k": 3})
        if "read" in tools and isinstance(result, list) and result:
            return json.dumps({"action": "read", "doc_id": result[0]["id"]})
        return json.dumps({"action": "final", **answer(request)})
    return json.dumps(answer(request))


@register_provider("train-test")
def _provider(rest: str, **options: Any) -> Model:
    if rest == "garbled":  # answers nothing a reader can use: every forecast is unusable
        return ScriptedModel(["I would rather not say."], cycle=True, name="train-test:garbled")
    return ScriptedModel(responder=respond, name=f"train-test:{rest}")
