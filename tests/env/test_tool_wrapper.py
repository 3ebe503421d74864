"""Every tool call runs through one wrapper: charged, timed and logged the same way for all
eight tools, whichever way it is called."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from pastcast.env import TOOLS, BudgetExceeded, EnvConfig, Toolbox, ToolError

CUTOFF = datetime(2024, 3, 6, tzinfo=UTC)
ARGUMENTS: dict[str, dict[str, Any]] = {
    "search": {"query": "rocket"},
    "read": {"doc_id": "d1"},
    "thread": {"doc_id": "d1"},
    "author_posts": {"author": "ann"},
    "ancestors": {"doc_id": "d1"},
    "descendants": {"doc_id": "d1"},
    "market_history": {},
    "python": {"code": "print(1)"},
}

DEFAULTS = {
    "search": {"top_k": 10},
    "thread": {"limit": 50},
    "author_posts": {"limit": 20},
    "descendants": {"limit": 50},
}


def _bare(max_tool_calls: int = 10) -> Toolbox:
    """A step offering nothing: every tool refuses."""
    return Toolbox(None, CUTOFF, EnvConfig(max_tool_calls=max_tool_calls))


def test_every_tool_is_covered() -> None:
    assert sorted(t.name for t in TOOLS) == sorted(ARGUMENTS)


@pytest.mark.parametrize("name", sorted(ARGUMENTS))
def test_a_refusal_is_logged_once_with_the_message_the_agent_got(name: str) -> None:
    tools = _bare()
    with pytest.raises(ToolError) as info:
        getattr(tools, name)(**ARGUMENTS[name])
    (call,) = tools.calls
    assert (call.name, call.ok, call.error) == (name, False, str(info.value))
    assert call.arguments == ARGUMENTS[name] | DEFAULTS.get(name, {})  # filters left None: out
    assert call.elapsed_s >= 0 and call.doc_ids == ()


@pytest.mark.parametrize("name", sorted(ARGUMENTS))
def test_a_spent_budget_ends_every_tool_before_it_runs(name: str) -> None:
    tools = _bare(max_tool_calls=1)
    with pytest.raises(ToolError):
        tools.search(query="rocket")
    with pytest.raises(BudgetExceeded):
        getattr(tools, name)(**ARGUMENTS[name])
    assert len(tools.calls) == 1
