"""The episode tool server: MCP methods over one episode, the setting's tools only, the cutoff
bound in the server, budgets, transcripts, and bad input answered rather than crashing."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from _tiny import ListBackend, tiny_dataset, tiny_documents
from pastcast.agents._heuristic import HeuristicResearchAgent
from pastcast.env import BudgetExceeded, EnvConfig, Episode, ForecastEnv, ToolError
from pastcast.models import ModelError, ScriptedModel
from pastcast.records import Assessment, Message, Notebook, NotebookProblem
from pastcast.toolserver import Connection, EpisodeServer, RemoteEpisode, serve_stdio
from pastcast.toolserver._jsonrpc import Code, RpcError

STEP = tiny_dataset().steps_of("ev-rocket")[0]  # cutoff: day 5; canary documents after it


def _episode(config: EnvConfig | None = None, **env: Any) -> Episode:
    forecast_env = ForecastEnv(tiny_dataset(), ListBackend(tiny_documents()), config, **env)
    return forecast_env.reset(STEP)


def _call(server: EpisodeServer, method: str, params: Any = None, rid: int = 1) -> Any:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params is not None:
        message["params"] = params
    answer = json.loads(server.handle_line(json.dumps(message).encode()))
    assert answer["id"] == rid
    return answer


def _tool_names(server: EpisodeServer) -> list[str]:
    return [t["name"] for t in _call(server, "tools/list")["result"]["tools"]]


def test_initialize_speaks_the_clients_revision_and_gives_the_question() -> None:
    server = EpisodeServer(_episode())
    result = _call(server, "initialize", {"protocolVersion": "2025-06-18"})["result"]
    assert result["protocolVersion"] == "2025-06-18"
    assert result["capabilities"]["tools"] == {"listChanged": False}
    assert "Will the Zephyr rocket launch succeed" in result["instructions"]
    unknown = _call(server, "initialize", {"protocolVersion": "1999-01-01"})["result"]
    assert unknown["protocolVersion"] == "2025-11-25"


def test_only_the_tools_the_setting_allows_are_served() -> None:
    assert _tool_names(EpisodeServer(_episode())) == ["search", "read"]
    market = EpisodeServer(_episode(EnvConfig(market_access=True)))
    assert _tool_names(market) == ["search", "read", "market_history"]
    python = _episode(EnvConfig(python_tool=True), python_runner=lambda code: {})
    assert _tool_names(EpisodeServer(python)) == ["search", "read", "python"]
    # A tool the setting does not offer cannot be called either: refused and logged.
    server = EpisodeServer(_episode())
    result = _call(server, "tools/call", {"name": "market_history"})["result"]
    assert result["isError"] is True
    assert "unknown or unavailable tool" in result["content"][0]["text"]


def test_tool_text_is_the_in_process_text_and_is_logged() -> None:
    args = {"query": "Zephyr rocket launch", "top_k": 5}
    local = _episode().call_tool("search", args)
    episode = _episode()
    server = EpisodeServer(episode)
    result = _call(server, "tools/call", {"name": "search", "arguments": args})["result"]
    assert result == {"content": [{"type": "text", "text": local}], "isError": False}
    assert episode.record("forecast").tool_calls[0].result == local
    cut = {"name": "search", "arguments": args, "_meta": {"pastcast/max_chars": 10}}
    assert _call(server, "tools/call", cut)["result"]["content"][0]["text"] == local[:10]


def test_the_cutoff_is_bound_in_the_server() -> None:
    server = EpisodeServer(_episode())
    # A date in the arguments is no argument of the tool: ignored, the server's cutoff holds.
    late = {"query": "Zephyr rocket launch succeeded", "top_k": 20, "as_of": "2030-01-01"}
    text = _call(server, "tools/call", {"name": "search", "arguments": late})["result"]
    ids = {hit["id"] for hit in json.loads(text["content"][0]["text"])}
    assert ids == {"d1", "d2"}  # published before day 5; not d3, d5 or the canary
    read = {"name": "read", "arguments": {"doc_id": "canary-rocket"}}
    refused = _call(server, "tools/call", read)["result"]
    assert refused["isError"] and "canary" not in json.loads(refused["content"][0]["text"])
    typed = _call(server, "pastcast/tool", read)
    assert typed["error"]["code"] == -32011


def test_episode_view_holds_no_outcome() -> None:
    server = EpisodeServer(_episode())
    described = _call(server, "pastcast/episode")["result"]
    text = json.dumps(described)
    assert described["question"]["event_id"] == "ev-rocket"
    assert "resolved_at" not in text and "canary" not in text
    resource = _call(server, "resources/read", {"uri": "pastcast://episode"})["result"]
    assert json.loads(resource["contents"][0]["text"]) == described
    missing = _call(server, "resources/read", {"uri": "file:///etc/passwd"})
    assert missing["error"]["code"] == -32002


def test_budgets_are_charged_in_the_server() -> None:
    server = EpisodeServer(_episode(EnvConfig(max_tool_calls=1)))
    args = {"name": "search", "arguments": {"query": "Zephyr"}}
    assert "result" in _call(server, "tools/call", args)
    spent = _call(server, "tools/call", args, rid=2)["error"]
    assert spent["code"] == Code.BUDGET_EXHAUSTED
    assert spent["data"] == {"kind": "tool", "limit": 1}
    assert server.budget is not None and server.budget.kind == "tool"


@pytest.mark.parametrize(
    ("line", "code"),
    [
        (b"not json", -32700),
        (b"[1, 2]", -32600),
        (b'{"id": 1, "method": "ping"}', -32600),  # no jsonrpc member
        (b'{"jsonrpc": "2.0", "id": 1, "method": "no/such"}', -32601),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": [1]}', -32602),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": 3}}', -32602),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "pastcast/chat", "params": {}}', -32012),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "pastcast/forecast", "params": {}}', -32602),
        (
            b'{"jsonrpc": "2.0", "id": 1, "method": "pastcast/forecast", '
            b'"params": {"forecast": {"probs": {"Yes": "x"}}}}',
            -32602,
        ),
        (
            b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", '
            b'"params": {"name": "search", "_meta": {"pastcast/max_chars": -1}}}',
            -32602,
        ),
    ],
)
def test_bad_input_is_answered_with_an_error(line: bytes, code: int) -> None:
    server = EpisodeServer(_episode())
    answer = json.loads(server.handle_line(line))
    assert answer["error"]["code"] == code
    assert "\n" not in answer["error"]["message"]
    assert _call(server, "ping")["result"] == {}  # and the server goes on


def test_notifications_get_no_answer() -> None:
    server = EpisodeServer(_episode())
    line = b'{"jsonrpc": "2.0", "method": "notifications/initialized"}'
    assert server.handle_line(line) == b""


def test_the_forecast_ends_the_episode_and_is_checked() -> None:
    episode = _episode()
    server = EpisodeServer(episode)
    notes = Notebook(assessment=Assessment(probabilities={"Yes": 0.7}))
    params = {
        "forecast": {"probs": {"Yes": 0.7, "Maybe": 0.3}},
        "notebook_out": notes.model_dump(mode="json"),
        "notebook_carried": True,
        "notebook_problems": [{"kind": "unparseable"}],
    }
    assert _call(server, "pastcast/forecast", params)["result"] == {}
    assert server.finished and episode.notebook_out == notes and episode.notebook_carried
    assert episode.notebook_problems == (NotebookProblem(kind="unparseable"),)
    assert server.forecast is not None and not server.forecast.usable
    assert server.forecast.failure_reason == "unknown_labels"
    late = _call(server, "tools/call", {"name": "search", "arguments": {"query": "x"}}, rid=2)
    assert late["error"]["code"] == Code.EPISODE_OVER


def test_a_notebook_left_as_text_is_refused_naming_the_field() -> None:
    server = EpisodeServer(_episode())
    params = {"forecast": {"probs": {"Yes": 0.7, "No": 0.3}}, "notebook_out": "notes"}
    answer = _call(server, "pastcast/forecast", params)
    assert answer["error"]["code"] == -32602
    assert answer["error"]["message"].startswith("params.notebook_out: ")
    assert not server.finished


@pytest.mark.parametrize(
    ("probs", "usable", "expected"),
    [
        ({"Yes": "NaN", "No": 0.5}, False, "invalid_probability"),
        ({"Yes": "Infinity", "No": 0.5}, False, "invalid_probability"),
        ({"Yes": 0.3}, True, {"Yes": 0.3, "No": 0.7}),  # the complement, not certainty
        ({"No": 0.25}, True, {"Yes": 0.75, "No": 0.25}),
        ({"Yes": 60}, False, "invalid_probability"),  # a partial answer must be probabilities
        ({"Yes": 1e308, "No": 1e308}, True, {"Yes": 0.5, "No": 0.5}),
        ({"Yes": 0, "No": 0}, False, "no_positive_mass"),
    ],
)
def test_a_submitted_forecast_is_finite_and_partial_answers_are_completed(
    probs: dict[str, Any], usable: bool, expected: Any
) -> None:
    server = EpisodeServer(_episode())
    assert _call(server, "pastcast/forecast", {"forecast": {"probs": probs}})["result"] == {}
    forecast = server.forecast
    assert forecast is not None and forecast.usable is usable
    if usable:
        assert forecast.probs == pytest.approx(expected)
    else:
        assert forecast.failure_reason == expected and forecast.probs == {}


def test_model_calls_go_through_the_episode_to_the_agents_model_only() -> None:
    episode = _episode()
    model = ScriptedModel(["a reply"], name="scripted:agent")
    server = EpisodeServer(episode, model)
    request = {"messages": [{"role": "user", "content": "hello"}], "temperature": 0.5}
    reply = _call(server, "pastcast/chat", {"request": request})["result"]
    assert reply["content"] == "a reply"
    record = episode.record("forecast")
    assert len(record.model_calls) == 1 and record.model_calls[0].model == "scripted:agent"
    assert record.messages[0] == Message(role="user", content="hello")
    other = _call(server, "pastcast/chat", {"request": request, "model": "openai:gpt-4o"})
    assert other["error"]["code"] == -32012 and "scripted:agent" in other["error"]["message"]


@pytest.fixture
def remote() -> Iterator[tuple[RemoteEpisode, EpisodeServer]]:
    """A RemoteEpisode talking to a server thread over a pair of pipes."""
    episode = _episode(EnvConfig(max_tool_calls=6))
    server = EpisodeServer(episode, ScriptedModel(["fine"], name="scripted:m"))
    to_server_r, to_server_w = os.pipe()
    to_client_r, to_client_w = os.pipe()
    with (
        os.fdopen(to_server_r, "rb") as sr,
        os.fdopen(to_client_w, "wb") as sw,
        os.fdopen(to_client_r, "rb") as cr,
        os.fdopen(to_server_w, "wb") as cw,
    ):
        thread = threading.Thread(target=serve_stdio, args=(server, sr, sw), daemon=True)
        thread.start()
        yield RemoteEpisode(Connection(cr, cw)), server
        cw.close()
        thread.join(5)


def test_an_agent_runs_unchanged_on_a_remote_episode(
    remote: tuple[RemoteEpisode, EpisodeServer],
) -> None:
    episode, server = remote
    local_episode = _episode(EnvConfig(max_tool_calls=6))
    agent = HeuristicResearchAgent()
    expected = agent.forecast(local_episode)
    assert agent.forecast(episode) == expected

    def logged(ep: Episode) -> list[dict[str, Any]]:
        return [c.model_dump(exclude={"elapsed_s"}) for c in ep.record("forecast").tool_calls]

    assert logged(server.episode) == logged(local_episode)


def test_remote_errors_are_the_in_process_exceptions(
    remote: tuple[RemoteEpisode, EpisodeServer],
) -> None:
    episode, _ = remote
    with pytest.raises(ToolError, match="not returned by a search"):
        episode.tools.read("canary-rocket")
    assert json.loads(episode.call_tool("read", {"doc_id": "canary-rocket"}))["error"]
    with pytest.raises(ModelError, match="'scripted:m', not 'scripted:other'"):
        episode.chat(ScriptedModel(["x"], name="scripted:other"), _request())
    assert episode.chat(ScriptedModel(["x"], name="scripted:m"), _request()).content == "fine"
    with pytest.raises(BudgetExceeded):
        for _ in range(10):
            episode.tools.search("Zephyr")


def _request() -> Any:
    from pastcast.models import ChatRequest

    return ChatRequest(messages=(Message(role="user", content="hi"),))


def test_rpc_error_is_raised_by_the_connection() -> None:
    server = EpisodeServer(_episode())
    r1, w1 = os.pipe()
    r2, w2 = os.pipe()
    with os.fdopen(w1, "wb") as w, os.fdopen(r2, "rb") as r:
        thread = threading.Thread(
            target=serve_stdio,
            args=(server, os.fdopen(r1, "rb"), os.fdopen(w2, "wb")),
            daemon=True,
        )
        thread.start()
        with pytest.raises(RpcError) as err:
            Connection(r, w).request("no/such")
        assert err.value.code == -32601
        w.close()
        thread.join(5)


def test_a_remote_read_takes_the_filter_block_and_keeps_its_refusals(
    remote: tuple[RemoteEpisode, EpisodeServer],
) -> None:
    episode, server = remote
    hit = episode.tools.search("rocket")[0]
    assert episode.tools.read(hit.id, doc_type="submission").id == hit.id
    with pytest.raises(ToolError, match="does not match the filter"):
        episode.tools.read(hit.id, doc_type="comment")
    with pytest.raises(ToolError, match="not returned by a search"):
        episode.tools.read("canary-rocket", doc_type="submission")
    reads = [c for c in server.episode.record("forecast").tool_calls if c.name == "read"]
    assert [c.arguments.get("doc_type") for c in reads] == ["submission", "comment", "submission"]
