"""The HTTP tool server against clients that hold it: half-open connections, slowloris headers and
bodies, floods of connections, malformed and oversized requests; raw sockets on 127.0.0.1. Every
refusal is JSON, and the server keeps answering well-behaved clients."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator

import pytest

from _tiny import ListBackend, tiny_dataset, tiny_documents
from pastcast.env import EnvConfig, ForecastEnv
from pastcast.toolserver import EpisodeServer, HttpLimits, HttpToolServer

LIMITS = HttpLimits(header_timeout_s=0.6, body_timeout_s=0.6, max_connections=4)


def _serve(limits: HttpLimits) -> HttpToolServer:
    env = ForecastEnv(tiny_dataset(), ListBackend(tiny_documents()), EnvConfig(max_tool_calls=9))
    server = EpisodeServer(env.reset(tiny_dataset().steps_of("ev-rocket")[0]))
    return HttpToolServer(server, limits=limits)


@pytest.fixture
def web() -> Iterator[HttpToolServer]:
    with _serve(LIMITS) as served:
        yield served


@pytest.fixture
def patient() -> Iterator[HttpToolServer]:
    """A server whose idle connections keep their slots for a while."""
    with _serve(HttpLimits(header_timeout_s=3, body_timeout_s=3, max_connections=4)) as served:
        yield served


def _connect(web: HttpToolServer) -> socket.socket:
    host, port = web.url.removeprefix("http://").rsplit(":", 1)
    sock = socket.create_connection((host, int(port)), timeout=5)
    return sock


def _read_all(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes (a timeout here fails the test)."""
    chunks = []
    while chunk := sock.recv(65536):
        chunks.append(chunk)
    return b"".join(chunks)


def _closed_within(sock: socket.socket, seconds: float) -> float:
    started = time.monotonic()
    sock.settimeout(seconds)
    try:
        _read_all(sock)
    except TimeoutError:
        pytest.fail(f"the server held the connection for over {seconds} s")
    except ConnectionResetError:
        pass
    return time.monotonic() - started


def _status_and_body(raw: bytes) -> tuple[int, object]:
    head, _, body = raw.partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(body)


def _get_tools(web: HttpToolServer) -> int:
    sock = _connect(web)
    with sock:
        request = (
            f"GET /tools HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {web.token}\r\n"
            "Connection: close\r\n\r\n"
        )
        sock.sendall(request.encode())
        return _status_and_body(_read_all(sock))[0]


def test_a_half_open_connection_is_closed_at_the_header_timeout(web: HttpToolServer) -> None:
    with _connect(web) as sock:
        assert _closed_within(sock, 5) < 3


def test_slowloris_headers_are_cut_off_however_slowly_they_trickle(web: HttpToolServer) -> None:
    with _connect(web) as sock:
        sock.sendall(b"GET /tools HTTP/1.1\r\n")
        started = time.monotonic()
        try:
            while time.monotonic() - started < 5:
                sock.sendall(b"X")  # a byte at a time: each read succeeds, the total is late
                time.sleep(0.1)
        except (BrokenPipeError, ConnectionResetError):
            pass
        assert time.monotonic() - started < 3


def test_a_slow_body_is_cut_off_at_the_body_timeout(web: HttpToolServer) -> None:
    with _connect(web) as sock:
        head = (
            f"POST /mcp HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {web.token}\r\n"
            "Content-Length: 1000\r\n\r\n{"
        )
        sock.sendall(head.encode())
        assert _closed_within(sock, 5) < 3


def test_a_kept_alive_idle_connection_is_closed(web: HttpToolServer) -> None:
    with _connect(web) as sock:
        request = f"GET /tools HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {web.token}\r\n\r\n"
        sock.sendall(request.encode())
        assert sock.recv(65536).startswith(b"HTTP/1.1 200")
        assert _closed_within(sock, 5) < 3


def test_connections_past_the_limit_get_503_and_no_thread(patient: HttpToolServer) -> None:
    web = patient
    before = threading.active_count()
    held = [_connect(web) for _ in range(4)]
    try:
        time.sleep(0.1)
        flood = [_connect(web) for _ in range(40)]
        for sock in flood:
            with sock:
                status, body = _status_and_body(_read_all(sock))
                assert status == 503 and "connections" in body["error"]["message"]  # type: ignore[index]
        assert threading.active_count() <= before + 4
    finally:
        for sock in held:
            sock.close()
    time.sleep(0.3)
    assert _get_tools(web) == 200  # the slots came back when their clients went


def test_three_hundred_half_open_connections_hold_a_bounded_number_of_threads(
    web: HttpToolServer,
) -> None:
    before = threading.active_count()
    socks = []
    try:
        for _ in range(300):
            socks.append(_connect(web))
        time.sleep(0.2)
        assert threading.active_count() <= before + LIMITS.max_connections
    finally:
        for sock in socks:
            sock.close()


RAW = {
    "garbage request line": (b"GARBAGE\r\n\r\n", 400),
    "an unknown method": (b"BREW /tools HTTP/1.1\r\nHost: x\r\n\r\n", 501),
    "a header line over 64 KiB": (b"GET /tools HTTP/1.1\r\nX: " + b"a" * 70_000 + b"\r\n\r\n", 431),
    "a request line over 64 KiB": (b"GET /" + b"a" * 70_000 + b" HTTP/1.1\r\n\r\n", 414),
    "over a hundred headers": (
        b"GET /tools HTTP/1.1\r\n" + b"".join(b"X%d: y\r\n" % i for i in range(120)) + b"\r\n",
        431,
    ),
    "an unsupported HTTP version": (b"GET /tools HTTP/9.9\r\n\r\n", 505),
    "a chunked body": (
        b"POST /mcp HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer TOKEN\r\n"
        b"Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
        411,
    ),
    "a negative Content-Length": (
        b"POST /mcp HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer TOKEN\r\n"
        b"Content-Length: -5\r\n\r\n",
        400,
    ),
    "a Content-Length of 400 MiB": (
        b"POST /mcp HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer TOKEN\r\n"
        b"Content-Length: 419430400\r\n\r\n{",
        413,
    ),
    "a non-ASCII bearer token": (
        b"GET /tools HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \xc3\xa9\xff\r\n\r\n",
        401,
    ),
}


@pytest.mark.parametrize("name", sorted(RAW))
def test_a_malformed_request_is_a_json_refusal_and_the_server_goes_on(
    web: HttpToolServer, name: str
) -> None:
    raw, status = RAW[name]
    with _connect(web) as sock:
        sock.sendall(raw.replace(b"TOKEN", web.token.encode()))
        got, body = _status_and_body(_read_all(sock))
    assert got == status
    assert isinstance(body, dict) and isinstance(body["error"]["message"], str)
    assert _get_tools(web) == 200


def test_bad_limits_are_refused() -> None:
    with pytest.raises(ValueError, match="positive"):
        HttpLimits(header_timeout_s=0)
    with pytest.raises(ValueError, match="max_connections"):
        HttpLimits(max_connections=0)
