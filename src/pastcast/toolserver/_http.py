"""The HTTP/JSON form of the tool server, on the loopback interface only: ``POST /mcp`` takes one
JSON-RPC message, the plain routes answer with one method's result. Every request needs
``Authorization: Bearer TOKEN`` (another local user cannot spend the episode's budget), and no
client holds the server (``HttpLimits``). Routes, statuses, limits: docs/isolation.md
("Transports").
"""

from __future__ import annotations

import contextlib
import hmac
import json
import secrets
import socket
import threading
import time
from dataclasses import dataclass
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from pastcast import safejson
from pastcast.toolserver._jsonrpc import MAX_LINE, Code, RpcError, error_response
from pastcast.toolserver._server import MAX_CHARS_META, EpisodeServer


@dataclass(frozen=True)
class HttpLimits:
    """What one client may hold of the HTTP tool server."""

    header_timeout_s: float = 10.0
    """The request line and headers, from the connection's start or the previous answer."""
    body_timeout_s: float = 30.0
    """The body, from the end of the headers."""
    max_connections: int = 16
    """Connections served at once; one more is answered 503 and closed."""

    def __post_init__(self) -> None:
        if not (self.header_timeout_s > 0 and self.body_timeout_s > 0):
            raise ValueError("HttpLimits: the timeouts must be positive")
        if self.max_connections < 1:
            raise ValueError("HttpLimits: max_connections must be at least 1")


_STATUS: dict[int, HTTPStatus] = {
    Code.PARSE_ERROR: HTTPStatus.BAD_REQUEST,
    Code.INVALID_REQUEST: HTTPStatus.BAD_REQUEST,
    Code.INVALID_PARAMS: HTTPStatus.BAD_REQUEST,
    Code.METHOD_NOT_FOUND: HTTPStatus.NOT_FOUND,
    Code.RESOURCE_NOT_FOUND: HTTPStatus.NOT_FOUND,
    Code.EPISODE_OVER: HTTPStatus.CONFLICT,
    Code.TOOL_REFUSED: HTTPStatus.UNPROCESSABLE_ENTITY,
    Code.BUDGET_EXHAUSTED: HTTPStatus.TOO_MANY_REQUESTS,
    Code.MODEL_FAILED: HTTPStatus.BAD_GATEWAY,
}
_GET_ROUTES = {"/episode": "pastcast/episode", "/tools": "tools/list"}
_POST_ROUTES = {"/chat": "pastcast/chat", "/forecast": "pastcast/forecast"}


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"
    default_request_version = "HTTP/1.1"  # so that a garbled request line gets a status line too

    def log_message(self, format: str, *args: Any) -> None:  # requests are in the transcript
        return

    def setup(self) -> None:
        super().setup()
        limits = self.server.limits
        # Each read and write waits at most this long; the server's watch bounds the total.
        self.connection.settimeout(max(limits.header_timeout_s, limits.body_timeout_s))

    def handle_one_request(self) -> None:
        self.server.watch(self.connection, self.server.limits.header_timeout_s)
        super().handle_one_request()

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """http.server's own refusals (a malformed request line, headers too long or too many,
        an unknown method) as JSON like every other, and the connection closed."""
        self.close_connection = True
        try:
            text = message or HTTPStatus(code).phrase
        except ValueError:
            text = str(code)
        self._refuse(code, Code.INVALID_REQUEST, text)

    def _send(self, status: int, body: Any) -> None:
        data = json.dumps(body, ensure_ascii=False).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(data)

    def _refuse(self, status: int, code: int, message: str) -> None:
        self._send(status, {"error": {"code": code, "message": message}})

    def _authorized(self) -> bool:
        """The headers are in (the header deadline no longer applies); whether the bearer token
        is the server's, refused otherwise."""
        self.server.unwatch(self.connection)
        given = self.headers.get("Authorization", "")
        expected = f"Bearer {self.server.token}"
        if hmac.compare_digest(given.encode("utf-8", "surrogateescape"), expected.encode()):
            return True
        self.close_connection = True  # a body it may have sent is not read
        self._refuse(HTTPStatus.UNAUTHORIZED, Code.INVALID_REQUEST, "missing or wrong bearer token")
        return False

    def _body(self) -> tuple[bool, Any]:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            self.close_connection = True
            self._refuse(HTTPStatus.LENGTH_REQUIRED, Code.INVALID_REQUEST, "send a Content-Length")
            return False, None
        try:
            length = int(self.headers.get("Content-Length", "0"))
        except ValueError:
            length = -1
        if not 0 <= length <= MAX_LINE:
            self.close_connection = True
            status = HTTPStatus.REQUEST_ENTITY_TOO_LARGE if length > 0 else HTTPStatus.BAD_REQUEST
            self._refuse(
                status, Code.INVALID_REQUEST, f"bad Content-Length, or over {MAX_LINE} bytes"
            )
            return False, None
        self.server.watch(self.connection, self.server.limits.body_timeout_s)
        raw = self.rfile.read(length) if length else b"{}"
        self.server.unwatch(self.connection)
        if len(raw) < length:  # the client went, or its time ran out
            self.close_connection = True
            return False, None
        try:
            return True, safejson.loads(raw)
        except ValueError as exc:
            self._refuse(HTTPStatus.BAD_REQUEST, Code.PARSE_ERROR, f"body is not JSON: {exc}")
            return False, None

    def _method(self, method: str, params: Any) -> None:
        if not isinstance(params, dict):
            self._refuse(
                HTTPStatus.BAD_REQUEST, Code.INVALID_PARAMS, "body: expected a JSON object"
            )
            return
        try:
            result = self.server.episode.call(method, params)
        except RpcError as exc:
            status = _STATUS.get(exc.code, HTTPStatus.INTERNAL_SERVER_ERROR)
            self._send(status, {"error": error_response(None, exc)["error"]})
            return
        self._send(HTTPStatus.OK, result)

    def do_GET(self) -> None:
        if not self._authorized():
            return
        path = urlsplit(self.path).path
        if path in _GET_ROUTES:
            self._method(_GET_ROUTES[path], {})
        else:
            self._refuse(HTTPStatus.NOT_FOUND, Code.METHOD_NOT_FOUND, f"no route GET {path}")

    def do_POST(self) -> None:
        if not self._authorized():
            return
        url = urlsplit(self.path)
        ok, body = self._body()
        if not ok:
            return
        if url.path == "/mcp":
            answer = self.server.episode.handle(body)
            if answer is None:
                self.send_response(HTTPStatus.ACCEPTED)
                self.send_header("Content-Length", "0")
                self.end_headers()
            else:
                self._send(HTTPStatus.OK, answer)
        elif url.path.startswith("/tools/"):
            params: dict[str, Any] = {"name": url.path[len("/tools/") :], "arguments": body}
            cut = parse_qs(url.query).get("max_chars")
            if cut:
                try:
                    params["_meta"] = {MAX_CHARS_META: int(cut[0])}
                except ValueError:
                    self._refuse(
                        HTTPStatus.BAD_REQUEST, Code.INVALID_PARAMS, "max_chars: not a number"
                    )
                    return
            self._method("tools/call", params)
        elif url.path in _POST_ROUTES:
            self._method(_POST_ROUTES[url.path], body)
        else:
            self._refuse(HTTPStatus.NOT_FOUND, Code.METHOD_NOT_FOUND, f"no route POST {url.path}")


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    request_queue_size = 128  # a burst of connections waits to be accepted (or turned away)

    def __init__(
        self, address: tuple[str, int], episode: EpisodeServer, token: str, limits: HttpLimits
    ) -> None:
        super().__init__(address, _Handler)
        self.episode = episode
        self.token = token
        self.limits = limits
        self._slots = threading.BoundedSemaphore(limits.max_connections)
        self._deadlines: dict[socket.socket, float] = {}
        self._watch_lock = threading.Lock()
        self._closing = threading.Event()
        tick = min(0.25, limits.header_timeout_s / 4, limits.body_timeout_s / 4)
        self._watcher = threading.Thread(target=self._close_late, args=(tick,), daemon=True)
        self._watcher.start()

    def watch(self, conn: socket.socket, seconds: float) -> None:
        """Close ``conn`` if it is still being read from in ``seconds``."""
        with self._watch_lock:
            self._deadlines[conn] = time.monotonic() + seconds

    def unwatch(self, conn: socket.socket) -> None:
        with self._watch_lock:
            self._deadlines.pop(conn, None)

    def _close_late(self, tick: float) -> None:
        while not self._closing.wait(tick):
            now = time.monotonic()
            with self._watch_lock:
                late = [c for c, t in self._deadlines.items() if t <= now]
                for conn in late:
                    del self._deadlines[conn]
            for conn in late:  # the reading thread sees the end of its input and finishes
                with contextlib.suppress(OSError):
                    conn.shutdown(socket.SHUT_RDWR)

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self._slots.acquire(blocking=False):
            _turn_away(request, self.limits.max_connections)
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.unwatch(request)
            self._slots.release()

    def handle_error(self, request: Any, client_address: Any) -> None:
        return  # a client that went mid-answer (or was closed at its deadline) is no error here

    def server_close(self) -> None:
        self._closing.set()
        super().server_close()


def _turn_away(conn: socket.socket, limit: int) -> None:
    body = json.dumps(
        {"error": {"code": Code.INVALID_REQUEST, "message": f"over {limit} connections; try later"}}
    ).encode("utf-8")
    head = (
        "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    with contextlib.suppress(OSError):
        conn.settimeout(1.0)
        conn.sendall(head.encode("ascii") + body)


class HttpToolServer:
    """Serves one episode over HTTP on ``host`` (loopback by default) and ``port`` (0: any free
    one), within ``limits``; ``url`` and ``token`` say where and how to connect."""

    def __init__(
        self,
        server: EpisodeServer,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        token: str | None = None,
        limits: HttpLimits | None = None,
    ) -> None:
        self.episode = server
        self.token = token or secrets.token_urlsafe(24)
        self._http = _Server((host, port), server, self.token, limits or HttpLimits())
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self._http.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> HttpToolServer:
        """Serve in a background thread."""
        self._thread = threading.Thread(target=self._http.serve_forever, daemon=True)
        self._thread.start()
        return self

    def serve_until_finished(self, poll_s: float = 0.2) -> None:
        """Serve in this thread until the forecast is in (or KeyboardInterrupt)."""
        self.start()
        assert self._thread is not None
        try:
            while not self.episode.finished:
                self._thread.join(poll_s)
        finally:
            self.close()

    def close(self) -> None:
        if self._thread is not None:
            self._http.shutdown()
            self._thread.join()
            self._thread = None
        self._http.server_close()

    def __enter__(self) -> HttpToolServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()
