"""The HTTP/JSON form: loopback only, a bearer token, the same methods as MCP on stdio."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest

from _tiny import ListBackend, tiny_dataset, tiny_documents
from pastcast.env import EnvConfig, ForecastEnv
from pastcast.toolserver import EpisodeServer, HttpToolServer


@pytest.fixture
def served() -> Iterator[tuple[httpx.Client, EpisodeServer, HttpToolServer]]:
    env = ForecastEnv(tiny_dataset(), ListBackend(tiny_documents()), EnvConfig(max_tool_calls=2))
    server = EpisodeServer(env.reset(tiny_dataset().steps_of("ev-rocket")[0]))
    with HttpToolServer(server) as web:
        auth = {"Authorization": f"Bearer {web.token}"}
        with httpx.Client(base_url=web.url, headers=auth, timeout=10) as client:
            yield client, server, web


def test_it_listens_on_the_loopback_and_needs_the_token(
    served: tuple[httpx.Client, EpisodeServer, HttpToolServer],
) -> None:
    client, _, web = served
    assert web.url.startswith("http://127.0.0.1:")
    anonymous = httpx.get(f"{web.url}/tools", timeout=10)
    assert anonymous.status_code == 401
    wrong = httpx.get(f"{web.url}/tools", headers={"Authorization": "Bearer x"}, timeout=10)
    assert wrong.status_code == 401
    assert [t["name"] for t in client.get("/tools").json()["tools"]] == ["search", "read"]


def test_plain_routes_are_the_mcp_methods(
    served: tuple[httpx.Client, EpisodeServer, HttpToolServer],
) -> None:
    client, server, _ = served
    assert client.get("/episode").json()["question"]["event_id"] == "ev-rocket"
    hit = client.post("/tools/search?max_chars=2000", json={"query": "Zephyr rocket"}).json()
    assert {h["id"] for h in json.loads(hit["content"][0]["text"])} == {"d1", "d2"}
    refused = client.post("/tools/read", json={"doc_id": "canary-rocket"}).json()
    assert refused["isError"] is True
    mcp = client.post("/mcp", json={"jsonrpc": "2.0", "id": 7, "method": "tools/list"}).json()
    assert mcp["id"] == 7 and len(mcp["result"]["tools"]) == 2
    note = client.post("/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"})
    assert note.status_code == 202
    spent = client.post("/tools/search", json={"query": "x"})
    assert spent.status_code == 429 and spent.json()["error"]["data"]["kind"] == "tool"
    assert client.post("/chat", json={"request": {"messages": []}}).status_code == 502
    answer = client.post("/forecast", json={"forecast": {"probs": {"Yes": 0.9, "No": 0.1}}})
    assert answer.status_code == 200 and server.finished
    assert client.post("/tools/search", json={"query": "x"}).status_code == 409


@pytest.mark.parametrize(
    ("method", "path", "body", "status"),
    [
        ("POST", "/tools/search", b"not json", 400),
        ("POST", "/tools/search", b"[1]", 400),
        ("POST", "/tools/search?max_chars=x", b"{}", 400),
        ("POST", "/nowhere", b"{}", 404),
        ("GET", "/nowhere", b"", 404),
        ("POST", "/forecast", b'{"forecast": 3}', 400),
    ],
)
def test_bad_requests_get_a_status_and_one_line(
    served: tuple[httpx.Client, EpisodeServer, HttpToolServer],
    method: str,
    path: str,
    body: bytes,
    status: int,
) -> None:
    client, _, _ = served
    response = client.request(method, path, content=body)
    assert response.status_code == status
    assert "\n" not in response.json()["error"]["message"]
