"""The transformers provider's parts that need no model: native tool calls read back from the
``<tool_call>`` blocks a chat template writes, and the window read from ``config.json``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pastcast.models import ModelError, context_limits_for
from pastcast.models._transformers import read_tool_calls


def test_tool_call_blocks_become_calls_and_leave_the_text() -> None:
    text = (
        'Let me look.<tool_call>{"name": "search", "arguments": {"query": "storm"}}</tool_call>'
        '\n<tool_call>\n{"name": "read", "arguments": "{\\"doc_id\\": \\"d1\\"}"}\n</tool_call>'
    )
    content, calls = read_tool_calls(text)
    assert content == "Let me look."
    assert [(c.name, c.arguments) for c in calls] == [
        ("search", {"query": "storm"}),
        ("read", {"doc_id": "d1"}),
    ]
    assert len({c.id for c in calls}) == 2


def test_a_block_that_is_no_call_is_kept_for_the_agent_to_report() -> None:
    content, calls = read_tool_calls("<tool_call>search storm</tool_call>")
    assert content == ""
    assert [(c.name, c.arguments) for c in calls] == [("", {"_raw": "search storm"})]
    assert read_tool_calls("no calls here") == ("no calls here", ())


def test_the_window_is_the_models_position_limit(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(json.dumps({"n_positions": 4096}))
    limits = context_limits_for(f"transformers:{tmp_path}", {"reply_cap": 64})
    assert limits is not None
    assert (limits.window, limits.default_max_tokens) == (4096, 64)
    (tmp_path / "config.json").write_text(json.dumps({"vocab_size": 10}))
    with pytest.raises(ModelError, match="states no context size"):
        context_limits_for(f"transformers:{tmp_path}", {})
