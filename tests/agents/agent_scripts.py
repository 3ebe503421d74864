"""Scripted models that react to what an agent sends, for the model-driven agent tests.

``Scripted`` answers every prompt the agents use: in JSON action mode it searches the question
title, reads the first hit and gives a final answer; in native mode it does the same with tool
calls; the two-stage agent gets queries, a reflection, a report and an answer; a memory-on
answer carries a valid notebook. Models are reached through the ``agents-test:NAME`` provider so
agents are built from specs exactly as in a run.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any

from pastcast.models import ChatRequest, ChatResponse, Model, ScriptedModel, register_provider
from pastcast.records import RequestedToolCall

RESPONDERS: dict[str, Callable[[ChatRequest], str | ChatResponse]] = {}
BUILT: dict[str, ScriptedModel] = {}


@register_provider("agents-test")
def _provider(rest: str, **options: Any) -> Model:
    model = ScriptedModel(responder=RESPONDERS[rest], name=f"agents-test:{rest}")
    BUILT[rest] = model
    return model


def use(name: str, responder: Callable[[ChatRequest], str | ChatResponse]) -> str:
    """Register ``responder`` and return the model spec that reaches it."""
    RESPONDERS[name] = responder
    return f"agents-test:{name}"


def first_user(request: ChatRequest) -> str:
    return next(m.content for m in request.messages if m.role == "user")


def labels_of(request: ChatRequest) -> list[str]:
    text = first_user(request)
    m = re.search(r"Possible outcomes[^\n]*:\n((?:- .*\n?)+)", text)
    if m is None:  # Hindcast's prompts: the options as "A" | "B"
        options = re.search(r'(?:Allowed options: |"choice": )(".*"),?$', text, re.MULTILINE)
        assert options, text
        return [json.loads(o) for o in options.group(1).split(" | ")]
    return [line[2:].strip() for line in m.group(1).splitlines() if line.startswith("- ")]


def title_of(request: ChatRequest) -> str:
    m = re.search(r"^Question: (.*)$", first_user(request), re.MULTILINE)
    assert m
    return m.group(1)


def cutoff_of(request: ChatRequest) -> date:
    m = re.search(r"Forecast date \(today\): (\d{4}-\d{2}-\d{2})", first_user(request))
    assert m
    return date.fromisoformat(m.group(1))


def answer(labels: list[str], *, notebook: dict[str, Any] | None = None) -> dict[str, Any]:
    probs = {lb: round(1.0 / len(labels), 6) for lb in labels}
    out: dict[str, Any] = {"probabilities": probs, "rationale": "scripted"}
    if notebook is not None:
        out["notebook"] = notebook
    return out


def notebook(labels: list[str], observed: date, source: str = "doc") -> dict[str, Any]:
    return {
        "assessment": {
            "probabilities": {lb: 1.0 / len(labels) for lb in labels},
            "summary": "scripted view",
            "open_questions": ["what next?"],
        },
        "evidence_ledger": [
            {
                "id": "E1",
                "claim": "something happened",
                "date_observed": observed.isoformat(),
                "source": source,
                "supports": [labels[0]],
                "rules_out": [],
                "status": "active",
            }
        ],
    }


def _last_result(request: ChatRequest) -> Any:
    last = request.messages[-1]
    if last.role in ("user", "tool") and last.content.startswith(("[", "{")):
        try:
            return json.loads(last.content)
        except ValueError:
            return None
    return None


@dataclass
class Scripted:
    """The reacting responder. ``notebook_day`` shifts the ledger date relative to the cutoff
    (-1: the day before, valid; +1: after the cutoff, malformed)."""

    notebook_day: int = -1
    confidence: float = 0.5
    calls: list[ChatRequest] = field(default_factory=list)

    def __call__(self, request: ChatRequest) -> str | ChatResponse:
        self.calls.append(request)
        system = request.messages[0].content
        labels = labels_of(request)
        memory = "belief notebook" in system
        nb = (
            notebook(labels, cutoff_of(request) + timedelta(days=self.notebook_day))
            if memory
            else None
        )
        if system.startswith("You are preparing evidence"):
            return self._research(request)
        if request.tools:
            return self._native(request, labels, nb)
        schema = request.response_schema or {}
        if "action" in schema.get("properties", {}):
            return json.dumps(self._action(request, labels, nb, schema))
        final = answer(labels, notebook=nb)
        return f"Some thinking first.\n```json\n{json.dumps(final)}\n```"

    def _research(self, request: ChatRequest) -> str:
        props = (request.response_schema or {}).get("properties", {})
        title = title_of(request)
        if "confidence" in props:
            return json.dumps(
                {"confidence": self.confidence, "missing": "more", "queries": [f"{title} latest"]}
            )
        if "queries" in props:
            return json.dumps({"queries": [title, title.split()[-1]]})
        return "Key facts: scripted.\nUncertainty: high.\nSuggested direction: none."

    def _action(
        self,
        request: ChatRequest,
        labels: list[str],
        nb: dict[str, Any] | None,
        schema: dict[str, Any],
    ) -> dict[str, Any]:
        tools = schema["properties"]["action"]["enum"]
        result = _last_result(request)
        if "search" in tools and len(request.messages) == 2:
            return {"action": "search", "query": title_of(request), "top_k": 5}
        if "read" in tools and isinstance(result, list) and result and "id" in result[0]:
            return {"action": "read", "doc_id": result[0]["id"]}  # search hits, not prices
        if "market_history" in tools and isinstance(result, dict) and "text" in result:
            return {"action": "market_history"}
        return {"action": "final", **answer(labels, notebook=nb)}

    def _native(
        self, request: ChatRequest, labels: list[str], nb: dict[str, Any] | None
    ) -> ChatResponse:
        result = _last_result(request)
        n = len(request.messages)
        if n == 2:
            call = RequestedToolCall(id="c1", name="search", arguments={"query": title_of(request)})
            return ChatResponse(content="", tool_calls=(call,))
        if isinstance(result, list) and result:
            call = RequestedToolCall(id=f"c{n}", name="read", arguments={"doc_id": result[0]["id"]})
            return ChatResponse(content="", tool_calls=(call,))
        final = answer(labels, notebook=nb)
        return ChatResponse(content=f"Done.\n```json\n{json.dumps(final)}\n```")
