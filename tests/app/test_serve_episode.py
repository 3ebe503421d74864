"""One step's episode served from Python (``serve_episode``): it ends as a run's episode ends
(``play_episode``), and its record is written where asked."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from pastcast.app import serve_episode
from pastcast.env import EnvConfig
from pastcast.errors import FieldError


def _lines(*messages: dict[str, object]) -> io.BytesIO:
    return io.BytesIO(b"".join(json.dumps(m).encode() + b"\n" for m in messages))


def _search(rid: int) -> dict[str, object]:
    arguments = {"query": "election"}
    params = {"name": "search", "arguments": arguments}
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}


FORECAST = {
    "jsonrpc": "2.0",
    "id": 9,
    "method": "pastcast/forecast",
    "params": {"forecast": {"probs": {"Yes": 0.6, "No": 0.4}}},
}


def test_a_forecast_ends_the_episode_and_is_recorded(tmp_path: Path) -> None:
    record = tmp_path / "record.json"
    out = io.BytesIO()
    served = serve_episode("world-002", record=record, stdio=(_lines(_search(1), FORECAST), out))
    assert served.forecast.usable and served.forecast.probs == {"Yes": 0.6, "No": 0.4}
    assert served.episode.termination == "forecast"
    assert [c.name for c in served.episode.tool_calls] == ["search"]
    assert json.loads(record.read_text()) == served.as_dict()
    assert len(out.getvalue().splitlines()) == 2  # both answered


def test_a_spent_budget_ends_the_episode_as_in_a_run() -> None:
    calls = _lines(_search(1), _search(2))
    served = serve_episode(
        "world-002", env=EnvConfig(max_tool_calls=1), stdio=(calls, io.BytesIO())
    )
    assert served.episode.termination == "tool_budget"
    assert not served.forecast.usable
    assert served.forecast.failure_reason == "budget_exhausted"


def test_an_agent_that_leaves_without_a_forecast_is_an_error_saying_so() -> None:
    served = serve_episode("world-002", stdio=(io.BytesIO(), io.BytesIO()))
    assert served.episode.termination == "error"
    assert served.forecast.failure_reason == "agent_error"
    assert "left without a forecast" in (served.episode.error or "")


def test_problems_before_serving_name_their_field(tmp_path: Path) -> None:
    mine = tmp_path / "mine.json"
    mine.write_text("{}")
    with pytest.raises(FieldError) as caught:
        serve_episode("world-002", record=mine, stdio=(_lines(FORECAST), io.BytesIO()))
    assert caught.value.field == "record"
    with pytest.raises(FieldError) as caught:
        serve_episode("world-002", 999, stdio=(_lines(FORECAST), io.BytesIO()))
    assert caught.value.field == "step" and "no such step" in caught.value.reason
    assert mine.read_text() == "{}"
