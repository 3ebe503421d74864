"""A real loopback HTTP server speaking the chat-completions JSON, scripted per test.

Tests talk to an actual socket, as the models do (no request mocking).
"""

from __future__ import annotations

import json
import socket
import struct
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def completion(
    content: str | None = "hello",
    *,
    tool_calls: list[dict[str, Any]] | None = None,
    prompt_tokens: int = 11,
    completion_tokens: int = 7,
    model: str = "gpt-4o-mini",
    finish_reason: str = "stop",
) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1700000000,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


@dataclass
class Reply:
    body: dict[str, Any]
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    raw: bytes | None = None
    """Sent instead of the JSON of ``body`` (a truncated or garbled reply)."""
    reset: bool = False
    """Close the connection with a TCP reset instead of replying."""


def reset_connection(conn: socket.socket) -> None:
    """Abort a connection: SO_LINGER with a zero timeout makes close() send a RST."""
    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    conn.close()


@dataclass
class FakeServer:
    url: str
    replies: list[Reply] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)

    def add(self, body: dict[str, Any], status: int = 200, **kw: Any) -> None:
        self.replies.append(Reply(body, status, **kw))


def start_fake_server() -> tuple[FakeServer, ThreadingHTTPServer]:
    state = FakeServer(url="")
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length", 0))
            body = json.loads(self.rfile.read(length) or b"{}")
            with lock:
                state.requests.append(body)
                state.headers.append({k.lower(): v for k, v in self.headers.items()})
                reply = state.replies.pop(0) if state.replies else Reply(completion())
            if reply.delay_s:
                time.sleep(reply.delay_s)
            if reply.reset:
                reset_connection(self.connection)
                self.close_connection = True
                return
            data = reply.raw if reply.raw is not None else json.dumps(reply.body).encode()
            try:
                self.send_response(reply.status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for k, v in reply.headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    return state, server
