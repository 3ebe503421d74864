"""The HTTP/JSON form of the tool server, on the loopback interface only.

``POST /mcp`` takes one JSON-RPC message (MCP's streamable HTTP transport, answered with plain
JSON: 202 for a notification). The same methods as plain routes, each answering with the
method's result as its body:

- ``GET /episode`` (``pastcast/episode``), ``GET /tools`` (``tools/list``)
- ``POST /tools/NAME`` with the arguments as the body, ``?max_chars=N`` optional (``tools/call``)
- ``POST /chat`` with ``{"request": ChatRequest}`` (``pastcast/chat``)
- ``POST /forecast`` with ``{"forecast": ...}`` (``pastcast/forecast``)

A refusal is ``{"error": {"code", "message", "data"}}`` with a status by kind (400 bad request,
404 unknown, 409 episode over, 422 tool refused, 429 budget spent, 502 model failed). Every
request needs ``Authorization: Bearer TOKEN`` (the token is printed when the server starts), so
another local user cannot spend the episode's budget.
"""

from __future__ import annotations

import hmac
import json
import secrets
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from pastcast import safejson
from pastcast.toolserver._jsonrpc import (
    BUDGET_EXHAUSTED,
    EPISODE_OVER,
    INVALID_PARAMS,
    INVALID_REQUEST,
    MAX_LINE,
    METHOD_NOT_FOUND,
    MODEL_FAILED,
    PARSE_ERROR,
    RESOURCE_NOT_FOUND,
    TOOL_REFUSED,
    RpcError,
    error_response,
)
from pastcast.toolserver._server import MAX_CHARS_META, EpisodeServer

__all__ = ["HttpToolServer"]

_STATUS = {
    PARSE_ERROR: HTTPStatus.BAD_REQUEST,
    INVALID_REQUEST: HTTPStatus.BAD_REQUEST,
    INVALID_PARAMS: HTTPStatus.BAD_REQUEST,
    METHOD_NOT_FOUND: HTTPStatus.NOT_FOUND,
    RESOURCE_NOT_FOUND: HTTPStatus.NOT_FOUND,
    EPISODE_OVER: HTTPStatus.CONFLICT,
    TOOL_REFUSED: HTTPStatus.UNPROCESSABLE_ENTITY,
    BUDGET_EXHAUSTED: HTTPStatus.TOO_MANY_REQUESTS,
    MODEL_FAILED: HTTPStatus.BAD_GATEWAY,
}


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # requests are in the transcript
        return

    def _send(self, status: int, body: Any) -> None:
        data = json.dumps(body, ensure_ascii=False).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _refuse(self, status: int, code: int, message: str) -> None:
        self._send(status, {"error": {"code": code, "message": message}})

    def _authorized(self) -> bool:
        given = self.headers.get("Authorization", "")
        expected = f"Bearer {self.server.token}"
        if hmac.compare_digest(given.encode(), expected.encode()):
            return True
        self._refuse(HTTPStatus.UNAUTHORIZED, INVALID_REQUEST, "missing or wrong bearer token")
        return False

    def _body(self) -> tuple[bool, Any]:
        try:
            length = int(self.headers.get("Content-Length", "0"))
        except ValueError:
            length = -1
        if not 0 <= length <= MAX_LINE:
            self.close_connection = True
            self._refuse(HTTPStatus.BAD_REQUEST, INVALID_REQUEST, "bad or too large Content-Length")
            return False, None
        raw = self.rfile.read(length) if length else b"{}"
        try:
            return True, safejson.loads(raw)
        except ValueError as exc:
            self._refuse(HTTPStatus.BAD_REQUEST, PARSE_ERROR, f"body is not JSON: {exc}")
            return False, None

    def _method(self, method: str, params: Any) -> None:
        if not isinstance(params, dict):
            self._refuse(HTTPStatus.BAD_REQUEST, INVALID_PARAMS, "body: expected a JSON object")
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
        if path == "/episode":
            self._method("pastcast/episode", {})
        elif path == "/tools":
            self._method("tools/list", {})
        else:
            self._refuse(HTTPStatus.NOT_FOUND, METHOD_NOT_FOUND, f"no route GET {path}")

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
                    self._refuse(HTTPStatus.BAD_REQUEST, INVALID_PARAMS, "max_chars: not a number")
                    return
            self._method("tools/call", params)
        elif url.path == "/chat":
            self._method("pastcast/chat", body)
        elif url.path == "/forecast":
            self._method("pastcast/forecast", body)
        else:
            self._refuse(HTTPStatus.NOT_FOUND, METHOD_NOT_FOUND, f"no route POST {url.path}")


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], episode: EpisodeServer, token: str) -> None:
        super().__init__(address, _Handler)
        self.episode = episode
        self.token = token


class HttpToolServer:
    """Serves one episode over HTTP on ``host`` (loopback by default) and ``port`` (0: any free
    one); ``url`` and ``token`` say where and how to connect."""

    def __init__(
        self,
        server: EpisodeServer,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        token: str | None = None,
    ) -> None:
        self.episode = server
        self.token = token or secrets.token_urlsafe(24)
        self._http = _Server((host, port), server, self.token)
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
