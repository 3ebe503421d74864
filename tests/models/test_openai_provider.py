"""The OpenAI-compatible provider against a real loopback server."""

from __future__ import annotations

import http.client
import json
import math
import os
import socket
import ssl
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from fake_chat_server import FakeServer, completion, start_fake_server

from pastcast.models import ChatRequest, ModelError, ToolSpec
from pastcast.models._openai import OpenAICompatibleModel
from pastcast.models._pricing import Price, PriceTable
from pastcast.records import Message, RequestedToolCall
from pastcast.retrying import HttpEndpoint, ProviderFailure

KEY = "sk-test-0123456789"


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)


def _model(server: FakeServer, **kw: object) -> OpenAICompatibleModel:
    return OpenAICompatibleModel("gpt-4o-mini", base_url=server.url, **kw)  # type: ignore[arg-type]


def _req(*messages: Message, **kw: object) -> ChatRequest:
    return ChatRequest(messages=messages or (Message(role="user", content="hi"),), **kw)  # type: ignore[arg-type]


def test_plain_chat_usage_and_cost(fake_server: FakeServer) -> None:
    fake_server.add(completion("hello there", prompt_tokens=1000, completion_tokens=500))
    model = _model(fake_server)
    resp = model.chat(_req(temperature=0.1, max_tokens=50, seed=3))
    assert resp.content == "hello there"
    assert resp.finish_reason == "stop"
    assert (resp.usage.model_calls, resp.usage.input_tokens, resp.usage.output_tokens) == (
        1,
        1000,
        500,
    )
    assert math.isclose(resp.usage.cost_usd, (1000 * 0.15 + 500 * 0.60) / 1e6)
    sent = fake_server.requests[0]
    assert sent["model"] == "gpt-4o-mini"
    assert (sent["temperature"], sent["max_tokens"], sent["seed"]) == (0.1, 50, 3)
    assert "tools" not in sent and "response_format" not in sent
    assert fake_server.headers[0]["authorization"] == f"Bearer {KEY}"
    assert model.name == "openai:gpt-4o-mini"


def test_messages_with_tool_calls_are_converted(fake_server: FakeServer) -> None:
    call = RequestedToolCall(id="c1", name="search", arguments={"query": "x"})
    msgs = (
        Message(role="system", content="sys"),
        Message(role="user", content="q"),
        Message(role="assistant", content="", tool_calls=(call,)),
        Message(role="tool", content="result", tool_call_id="c1", name="search"),
    )
    _model(fake_server).chat(_req(*msgs))
    sent = fake_server.requests[0]["messages"]
    assert sent[2]["content"] == ""
    assert sent[2]["tool_calls"] == [
        {
            "id": "c1",
            "type": "function",
            "function": {"name": "search", "arguments": '{"query": "x"}'},
        }
    ]
    assert sent[3] == {"role": "tool", "content": "result", "tool_call_id": "c1"}
    assert all(m["content"] is not None for m in sent)


def test_native_tools_round_trip(fake_server: FakeServer) -> None:
    calls = [
        {
            "id": "t1",
            "type": "function",
            "function": {"name": "search", "arguments": '{"query": "a"}'},
        },
        {"id": "t2", "type": "function", "function": {"name": "read", "arguments": "{not json"}},
    ]
    fake_server.add(completion(None, tool_calls=calls, finish_reason="tool_calls"))
    tool = ToolSpec(
        name="search",
        description="Search documents",
        parameters={"type": "object", "properties": {"query": {"type": "string"}}},
    )
    resp = _model(fake_server).chat(_req(tools=(tool,)))
    assert resp.content == ""
    assert resp.tool_calls[0] == RequestedToolCall(id="t1", name="search", arguments={"query": "a"})
    assert resp.tool_calls[1].arguments == {"_raw": "{not json"}
    sent = fake_server.requests[0]
    assert sent["tool_choice"] == "auto"
    assert sent["tools"][0]["function"]["name"] == "search"
    assert sent["tools"][0]["function"]["parameters"]["properties"]["query"]["type"] == "string"


def test_response_schema_styles(fake_server: FakeServer) -> None:
    schema = {"type": "object", "properties": {"p": {"type": "number"}}, "required": ["p"]}
    _model(fake_server).chat(_req(response_schema=schema))
    fmt = fake_server.requests[0]["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["schema"] == schema
    _model(fake_server, schema_style="json_object").chat(_req(response_schema=schema))
    assert fake_server.requests[1]["response_format"] == {"type": "json_object", "schema": schema}


def test_retries_429_then_succeeds(fake_server: FakeServer) -> None:
    fake_server.add({"error": {"message": "slow down"}}, 429, headers={"retry-after-ms": "10"})
    fake_server.add({"error": {"message": "oops"}}, 503, headers={"retry-after-ms": "10"})
    fake_server.add(completion("finally"))
    resp = _model(fake_server, max_retries=3).chat(_req())
    assert resp.content == "finally"
    assert len(fake_server.requests) == 3


def test_gives_up_after_retries_without_leaking_the_key(fake_server: FakeServer) -> None:
    for _ in range(3):
        fake_server.add({"error": {"message": "down"}}, 500, headers={"retry-after-ms": "5"})
    model = _model(fake_server, max_retries=2)
    with pytest.raises(ModelError, match="HTTP 500") as info:
        model.chat(_req())
    assert len(fake_server.requests) == 3
    assert KEY not in str(info.value) and KEY not in repr(model) and KEY not in str(model.spec)


def test_a_key_the_server_echoes_is_not_repeated(fake_server: FakeServer) -> None:
    fake_server.add({"error": {"message": f"Incorrect API key provided: {KEY}"}}, 401)
    with pytest.raises(ModelError, match="HTTP 401") as info:
        _model(fake_server, max_retries=0).chat(_req())
    assert fake_server.headers[-1]["authorization"] == f"Bearer {KEY}"
    assert KEY not in str(info.value) and "Incorrect API key provided: ***" in str(info.value)


def test_client_errors_are_not_retried(fake_server: FakeServer) -> None:
    fake_server.add({"error": {"message": "bad request"}}, 400)
    with pytest.raises(ModelError, match="HTTP 400"):
        _model(fake_server, max_retries=3).chat(_req())
    assert len(fake_server.requests) == 1


def test_timeout(fake_server: FakeServer) -> None:
    fake_server.add(completion("late"), delay_s=2.0)
    with pytest.raises(ModelError, match=r"no complete reply within timeout_s=0\.3") as info:
        _model(fake_server, timeout_s=0.3, max_retries=0).chat(_req())
    assert getattr(info.value, "kind", None) == "timeout"


def test_api_key_comes_from_the_named_variable(
    fake_server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(ModelError, match="MY_KEY is not set"):
        _model(fake_server, api_key_env="MY_KEY")
    monkeypatch.setenv("MY_KEY", "sk-other")
    _model(fake_server, api_key_env="MY_KEY").chat(_req())
    assert fake_server.headers[-1]["authorization"] == "Bearer sk-other"


def test_unpriced_model_costs_zero_and_custom_prices(fake_server: FakeServer, tmp_path) -> None:  # type: ignore[no-untyped-def]
    fake_server.add(completion(prompt_tokens=10**6, completion_tokens=0))
    resp = OpenAICompatibleModel("mystery", base_url=fake_server.url).chat(_req())
    assert resp.usage.cost_usd == 0.0
    f = tmp_path / "prices.toml"
    f.write_text("[mystery]\ninput = 2.0\noutput = 4.0\n")
    table = PriceTable.load(f)
    assert table.price("mystery") == Price(input=2.0, output=4.0)
    assert table.price("gpt-4o-mini-2024-07-18") == table.price("gpt-4o-mini")
    fake_server.add(completion(prompt_tokens=10**6, completion_tokens=10**6))
    resp = OpenAICompatibleModel("mystery", base_url=fake_server.url, prices=table).chat(_req())
    assert math.isclose(resp.usage.cost_usd, 6.0)
    bad = tmp_path / "bad.json"
    bad.write_text('{"m": {"input": -1, "output": 1}}')
    with pytest.raises(ValueError, match=r"bad.json: m: field input"):
        PriceTable.load(bad)


def test_calls_from_many_threads_all_get_their_reply(fake_server: FakeServer) -> None:
    model = _model(fake_server)
    replies: list[str] = []

    def call(i: int) -> None:
        replies.append(model.chat(_req(Message(role="user", content=f"q{i}"))).content)

    threads = [threading.Thread(target=call, args=(i,)) for i in range(40)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert replies == ["hello"] * 40
    assert sorted(r["messages"][0]["content"] for r in fake_server.requests) == sorted(
        f"q{i}" for i in range(40)
    )


def test_a_proxy_set_in_the_environment_carries_the_requests(
    fake_server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # api.example resolves nowhere: only the proxy (the loopback server) can answer.
    proxy = fake_server.url.removesuffix("/v1").replace("http://", "http://u:p%40ss@")
    monkeypatch.setenv("HTTP_PROXY", proxy)
    model = OpenAICompatibleModel("gpt-4o-mini", base_url="http://api.example/v1")
    assert model.chat(_req()).content == "hello"
    assert fake_server.headers[-1]["host"] == "api.example"
    assert fake_server.headers[-1]["proxy-authorization"] == "Basic dTpwQHNz"  # u:p@ss
    monkeypatch.setenv("NO_PROXY", "api.example")
    direct = OpenAICompatibleModel("gpt-4o-mini", base_url="http://api.example/v1", max_retries=0)
    with pytest.raises(ModelError, match="connection failed"):
        direct.chat(_req())
    model.close()


def test_the_url_and_headers_the_environment_sets_are_used_as_the_official_client_does(
    fake_server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", fake_server.url)
    monkeypatch.setenv("OPENAI_ORG_ID", "org-1")
    monkeypatch.setenv("OPENAI_PROJECT_ID", "proj-1")
    model = OpenAICompatibleModel("gpt-4o-mini")
    assert model.chat(_req()).content == "hello"
    sent = fake_server.headers[-1]
    assert (sent["openai-organization"], sent["openai-project"]) == ("org-1", "proj-1")
    assert model.spec["base_url"] is None  # the log records what was given, not the environment
    model.close()


def test_a_kept_connection_is_reused_whatever_its_descriptor_number() -> None:
    # A long-lived process holds many files: a kept connection's descriptor may be above 1023,
    # which select() refuses; each call must still get its reply on it.
    state, server = start_fake_server()
    server.RequestHandlerClass.protocol_version = "HTTP/1.1"  # connections kept between calls
    held: list[int] = []
    try:
        while not held or held[-1] < 1100:
            held.append(os.open(os.devnull, os.O_RDONLY))
        model = _model(state)
        assert [model.chat(_req()).content for _ in range(3)] == ["hello"] * 3
        assert len(state.requests) == 3
    finally:
        for fd in held:
            os.close(fd)
        server.shutdown()
        server.server_close()


def test_a_request_goes_out_in_one_write(
    fake_server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The standard client writes a request's headers and its body apart; one write is one
    # system call, and one wait for the interpreter, fewer a request.
    sent: list[bytes] = []
    real_send = http.client.HTTPConnection.send

    def send(self: http.client.HTTPConnection, data: bytes) -> None:
        sent.append(bytes(data))
        real_send(self, data)

    monkeypatch.setattr(http.client.HTTPConnection, "send", send)
    model = _model(fake_server)
    assert model.chat(_req(Message(role="user", content="q1"))).content == "hello"
    assert len(sent) == 1
    head, _, body = sent[0].partition(b"\r\n\r\n")
    assert head.startswith(b"POST /v1/chat/completions HTTP/1.1\r\n")
    assert f"content-length: {len(body)}".encode() in head.lower()
    assert json.loads(body)["messages"][0]["content"] == "q1"
    assert fake_server.requests[-1]["messages"][0]["content"] == "q1"
    model.close()


def test_the_host_name_codec_is_looked_up_before_any_connection() -> None:
    # getaddrinfo encodes a host name with the idna codec, imported on first use: 256 threads
    # connecting at once each waited on the import lock for it. An endpoint looks it up when
    # made, in a fresh process, where nothing else has.
    code = (
        "import sys\n"
        "from pastcast.retrying import HttpEndpoint\n"
        "before = 'encodings.idna' in sys.modules\n"
        "HttpEndpoint('http://127.0.0.1:9/v1', headers={}, timeout_s=1.0, where='x')\n"
        "print(before, 'encodings.idna' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.split() == ["False", "True"]


@pytest.mark.timeout(30)  # a send the deadline does not bound blocks for ever
def test_a_server_that_never_reads_the_request_is_a_timeout() -> None:
    # The request's send is bounded by the same deadline as its reply: a body far beyond the
    # socket buffers, to a server that accepts and never reads.
    listener = socket.create_server(("127.0.0.1", 0))
    accepted: list[socket.socket] = []
    threading.Thread(target=lambda: accepted.append(listener.accept()[0]), daemon=True).start()
    endpoint = HttpEndpoint(
        f"http://127.0.0.1:{listener.getsockname()[1]}/v1",
        headers={"content-type": "application/json"},
        timeout_s=1.0,
        where="never-reads",
    )
    started = time.monotonic()
    try:
        with pytest.raises(ProviderFailure, match=r"no complete reply within timeout_s=1") as out:
            endpoint.post("/chat/completions", b"x" * (64 << 20))
        assert out.value.kind == "timeout"
        assert time.monotonic() - started < 3
    finally:
        endpoint.close()
        for conn in accepted:
            conn.close()
        listener.close()


def test_a_tls_connection_keeps_its_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    # Over HTTPS too (a local server with its own certificate): a reply comes back on a kept
    # connection, and one later than timeout_s is a timeout, in time.
    here = Path(__file__).parent
    monkeypatch.setenv("SSL_CERT_FILE", str(here / "localhost-cert.pem"))  # its own CA
    state, server = start_fake_server()
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(here / "localhost-cert.pem", here / "localhost-key.pem")
    server.socket = tls.wrap_socket(server.socket, server_side=True)
    server.RequestHandlerClass.protocol_version = "HTTP/1.1"  # connections kept between calls
    url = state.url.replace("http://", "https://")
    try:
        model = OpenAICompatibleModel("gpt-4o-mini", base_url=url, timeout_s=0.5, max_retries=0)
        assert [model.chat(_req()).content for _ in range(2)] == ["hello"] * 2
        state.add(completion("late"), delay_s=2.0)
        started = time.monotonic()
        with pytest.raises(ModelError, match=r"no complete reply within timeout_s=0\.5") as info:
            model.chat(_req())
        assert getattr(info.value, "kind", None) == "timeout"
        assert time.monotonic() - started < 1.5
        model.close()
    finally:
        server.shutdown()
        server.server_close()
