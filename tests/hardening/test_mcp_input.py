"""The episode tool server under hostile JSON-RPC input: whatever a line holds (nesting past any
limit, bytes that are not UTF-8, numbers of thousands of digits, ids of the wrong type, lines
past the size limit), it is answered with a JSON-RPC error and the conversation goes on, on every
transport (a line, stdio, HTTP, a sandboxed agent's pipes)."""

from __future__ import annotations

import io
import json
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from _tiny import ListBackend, tiny_dataset, tiny_documents
from pastcast.agents import agent_spec
from pastcast.env import EnvConfig, ForecastEnv
from pastcast.runlog import read_run_log
from pastcast.runner import RunConfig, run_benchmark
from pastcast.toolserver import MAX_LINE, EpisodeServer, HttpToolServer, serve_stdio

HOSTILE_AGENT = Path(__file__).resolve().parent / "hostile_agent.py"
PING = b'{"jsonrpc": "2.0", "id": 99, "method": "ping"}'


def _server() -> EpisodeServer:
    env = ForecastEnv(tiny_dataset(), ListBackend(tiny_documents()), EnvConfig(max_tool_calls=5))
    return EpisodeServer(env.reset(tiny_dataset().steps_of("ev-rocket")[0]))


def _nested_in_a_request(depth: int) -> bytes:
    inner = b"[" * depth + b"]" * depth
    return (
        b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "search", '
        b'"arguments": {"query": ' + inner + b"}}}"
    )


HOSTILE = {
    "open brackets": (b"[" * 100_000, -32700),
    "closed nesting": (b"[" * 50_000 + b"]" * 50_000, -32700),
    "nesting inside a request": (_nested_in_a_request(20_000), -32700),
    "objects nested": (b'{"a":' * 30_000 + b"1" + b"}" * 30_000, -32700),
    "not UTF-8": (b'{"jsonrpc": "2.0", "id": 1, "method": "\xff\xfe"}', -32700),
    "a number of 10,000 digits": (b'{"jsonrpc": "2.0", "id": ' + b"7" * 10_000 + b"}", -32700),
    "an id that is an object": (b'{"jsonrpc": "2.0", "id": {"x": 1}, "method": "ping"}', -32600),
    "an id that is a list": (b'{"jsonrpc": "2.0", "id": [1], "method": "ping"}', -32600),
    "an id that is true": (b'{"jsonrpc": "2.0", "id": true, "method": "ping"}', -32600),
    "a NUL byte": (b'{"jsonrpc": "2.0", "id": 1,\x00 "method": "ping"}', -32700),
    "a lone surrogate escape in the method": (
        b'{"jsonrpc": "2.0", "id": 1, "method": "\\ud800"}',
        -32601,
    ),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_a_hostile_line_is_answered_with_an_error_and_the_server_goes_on(name: str) -> None:
    line, code = HOSTILE[name]
    server = _server()
    answer = json.loads(server.handle_line(line))
    assert answer["error"]["code"] == code
    assert "\n" not in answer["error"]["message"]
    if code == -32600:
        assert answer["id"] is None
    assert json.loads(server.handle_line(PING))["result"] == {}


def test_on_stdio_a_nested_and_an_overlong_line_are_answered_and_skipped() -> None:
    lines = [b"[" * 100_000, b"x" * (MAX_LINE + 10), PING]
    reader = io.BytesIO(b"\n".join(lines) + b"\n")
    writer = io.BytesIO()
    serve_stdio(_server(), reader, writer)
    answers = [json.loads(a) for a in writer.getvalue().splitlines()]
    assert [a.get("error", {}).get("code") for a in answers] == [-32700, -32700, None]
    assert answers[2]["id"] == 99 and answers[2]["result"] == {}


@pytest.fixture
def web() -> Iterator[HttpToolServer]:
    with HttpToolServer(_server()) as served:
        yield served


def test_over_http_a_nested_body_is_a_400_and_the_connection_stays_usable(
    web: HttpToolServer,
) -> None:
    auth = {"Authorization": f"Bearer {web.token}"}
    with httpx.Client(base_url=web.url, headers=auth, timeout=10) as client:
        deep = client.post("/mcp", content=b"[" * 100_000)
        assert deep.status_code == 400 and deep.json()["error"]["code"] == -32700
        deep_tool = client.post("/tools/search", content=b'{"q":' * 20_000)
        assert deep_tool.status_code == 400
        ping = client.post("/mcp", content=PING)
        assert ping.status_code == 200 and ping.json()["result"] == {}


@pytest.fixture
def open_dir() -> Iterator[Path]:
    from pastcast.sandbox import sandbox_available

    ok, why = sandbox_available()
    if not ok:
        pytest.skip(f"no isolating sandbox here: {why}")
    path = Path(tempfile.mkdtemp(prefix="pastcast-hostile-", dir="/tmp"))
    path.chmod(0o755)  # the sandbox's user reads the script here
    try:
        yield path
    finally:
        shutil.rmtree(path)


def test_a_sandboxed_agents_hostile_lines_are_answered_and_its_forecast_counts(
    tmp_path: Path, open_dir: Path
) -> None:
    script = open_dir / "hostile_agent.py"
    shutil.copy(HOSTILE_AGENT, script)
    script.chmod(0o644)
    config = RunConfig(
        agents=(agent_spec("external", command=["python3", str(script)]),), max_events=1
    )
    out = tmp_path / "run.jsonl"
    run_benchmark(tiny_dataset(), ListBackend(tiny_documents()), config, out, progress=False)
    steps = read_run_log(out).steps
    assert steps
    for step in steps:
        assert step.episode.error is None, step.episode.error
        assert step.forecast.usable
        assert step.forecast.rationale == "codes -32700 -32600 -32700 -32700 -32700; ping {}"
