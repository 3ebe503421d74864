"""Each tool is defined once (a typed Toolbox method): its schema, description, dispatch with
validated arguments and typed result all come from that definition."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from _tiny import T0, ListBackend, tiny_dataset, tiny_documents
from pastcast.env import (
    TOOLS,
    DocumentText,
    EnvConfig,
    ForecastEnv,
    MarketDay,
    SearchResult,
    Toolbox,
    ToolError,
)
from pastcast.records import StepSpec


def _toolbox(**cfg: object) -> Toolbox:
    env = ForecastEnv(tiny_dataset(), ListBackend(tiny_documents()), EnvConfig(**cfg))  # type: ignore[arg-type]
    step = StepSpec(event_id="ev-rocket", step_index=0, cutoff=T0 + timedelta(days=5))
    return env.reset(step).tools


def _optional(schema: dict[str, object], description: str) -> dict[str, object]:
    return {"anyOf": [schema, {"type": "null"}], "default": None, "description": description}


# Hindcast's filter block, every field optional (null: no restriction).
FILTER_BLOCK = {
    "doc_type": _optional(
        {"enum": ["submission", "comment"], "type": "string"},
        "only posts and articles (submission), or only comments",
    ),
    "source": _optional(
        {"type": "string"}, "only this source, e.g. a subreddit name, as read shows it"
    ),
    "author": _optional({"type": "string"}, "only this author's documents"),
    "month": _optional(
        {"type": "string", "pattern": "^[0-9]{4}-(0[1-9]|1[0-2])$"}, "only this month, YYYY-MM"
    ),
    "since": _optional(
        {"type": "string", "format": "date"}, "only documents from this day on, YYYY-MM-DD"
    ),
}


def test_definitions_come_from_the_methods() -> None:
    by_name = {t.name: t for t in TOOLS}
    assert list(by_name) == [
        "search",
        "read",
        "thread",
        "author_posts",
        "ancestors",
        "descendants",
        "market_history",
        "python",
    ]
    search = by_name["search"]
    assert search.description == (
        "Search the news archive. Only documents published before today are searched."
    )
    assert search.parameters == {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "search terms"},
            "top_k": {
                "type": "integer",
                "minimum": 1,
                "maximum": 20,
                "default": 10,
                "description": "number of results",
            },
            **FILTER_BLOCK,
        },
        "required": ["query"],
    }
    assert by_name["market_history"].parameters == {"type": "object", "properties": {}}
    assert search.spec.parameters == search.parameters and search.spec.name == "search"
    assert search.example() == '{"action": "search", "query": "<search terms>", "top_k": 10}'
    # The native specs a step offers are the definitions of its tools.
    tools = _toolbox(market_access=True)
    assert tools.specs() == tuple(t.spec for t in TOOLS if t.requires in ("corpus", "market"))


def test_results_are_typed_and_call_returns_their_json() -> None:
    tools = _toolbox(market_access=True)
    hits = tools.search("Zephyr rocket", top_k=3)
    assert hits and all(isinstance(h, SearchResult) for h in hits)
    assert isinstance(tools.read(hits[0].id), DocumentText)
    assert all(isinstance(d, MarketDay) for d in tools.market_history())
    as_json = tools.call("search", {"query": "Zephyr rocket", "top_k": 3})
    assert as_json == [h.model_dump() for h in hits]
    assert json.loads(tools.calls[-1].result) == as_json  # the run log keeps the same JSON


@pytest.mark.parametrize(
    ("name", "arguments", "problem"),
    [
        ("search", {"query": 7}, "query: Input should be a valid string"),
        ("search", {"top_k": 3}, "query: Field required"),
        ("search", {"query": "rocket", "top_k": "many"}, "top_k: Input should be a valid int"),
        ("search", {"query": "rocket", "top_k": 500}, "top_k: Input should be less than or eq"),
        ("read", {"id": "d1"}, "doc_id: Field required"),
        ("search", {"query": "rocket", "month": "2024-13"}, "month: String should match"),
        ("search", {"query": "rocket", "since": "May 1"}, "since: Input should be a valid date"),
        ("search", {"query": "rocket", "doc_type": "post"}, "doc_type: Input should be"),
    ],
)
def test_invalid_arguments_are_a_logged_tool_error(
    name: str, arguments: dict[str, object], problem: str
) -> None:
    tools = _toolbox(max_tool_calls=5)
    with pytest.raises(ToolError, match=f"{name}: invalid arguments: {problem}"):
        tools.call(name, arguments)
    last = tools.calls[-1]
    assert (last.name, last.ok, last.arguments) == (name, False, arguments)
    assert "invalid arguments" in (last.error or "") and last.doc_ids == ()
    assert len(tools.calls) == 1  # counted against the budget like any call


def test_valid_arguments_are_converted_and_extra_fields_ignored() -> None:
    tools = _toolbox()
    # A JSON action carries every tool's fields; those of other tools are not this call's.
    found = tools.call("search", {"query": "Zephyr rocket", "top_k": "2", "rationale": "x"})
    assert len(found) <= 2
    assert tools.calls[-1].arguments == {"query": "Zephyr rocket", "top_k": 2}
    with pytest.raises(ToolError, match="unknown or unavailable tool 'market_history'"):
        tools.call("market_history", {})
