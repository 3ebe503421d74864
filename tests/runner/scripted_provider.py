"""A scripted chat provider behind a real loopback HTTP server, with injectable faults.

Answers depend only on the request's content (the question, the forecast date, the turn), never
on timing or order, so a run with faults and retries ends with exactly the forecasts of a run
without them. Faults are drawn per distinct request from a seeded generator: a request chosen to
fail fails its first ``per_request`` attempts with one of: 429 with Retry-After, 503, a reply
slower than the client's timeout, a truncated JSON body, a connection reset.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import socket
import struct
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

FAULT_KINDS = ("429", "503", "timeout", "truncated", "reset")


@dataclass
class Faults:
    rate: float = 0.0
    kinds: tuple[str, ...] = FAULT_KINDS
    per_request: int = 1
    seed: int = 0
    retry_after_s: float = 0.05
    timeout_s: float = 1.2
    """How long a "timeout" reply takes (longer than the client's timeout)."""


@dataclass
class ProviderState:
    url: str = ""
    latency_s: float = 0.0
    faults: Faults = field(default_factory=Faults)
    down: bool = False
    """Every request gets a 503 while set."""
    missing: bool = False
    """Every request gets a 404 (model not found) while set."""
    requests: int = 0
    served: int = 0
    faults_served: Counter[str] = field(default_factory=Counter)
    in_flight: int = 0
    max_in_flight: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)
    seen: Counter[str] = field(default_factory=Counter)


def _labels(text: str) -> list[str]:
    m = re.search(r"Possible outcomes \(exactly one will occur\):\n((?:- .*\n?)+)", text)
    if not m:
        return ["Yes", "No"]
    return [line[2:].strip() for line in m.group(1).splitlines() if line.startswith("- ")]


def _probs(labels: list[str], key: str) -> dict[str, float]:
    rng = random.Random(hashlib.sha256(key.encode()).hexdigest())
    weights = [rng.uniform(0.05, 1.0) for _ in labels]
    total = sum(weights)
    return {lb: round(w / total, 6) for lb, w in zip(labels, weights, strict=True)}


def answer(body: dict[str, Any]) -> str:
    """The reply to a chat request, from its content alone."""
    messages = body.get("messages", [])
    user = next((m["content"] for m in messages if m.get("role") == "user"), "")
    system = next((m["content"] for m in messages if m.get("role") == "system"), "")
    title = re.search(r"Question: (.*)", user)
    date = re.search(r"Forecast date \(today\): (.*)", user)
    key = f"{title.group(1) if title else user[:200]}|{date.group(1) if date else ''}"
    labels = _labels(user)
    first_turn = not any(m.get("role") == "assistant" for m in messages)
    if first_turn and '"action": "search"' in system:
        return json.dumps({"action": "search", "query": title.group(1) if title else "news"})
    probs = _probs(labels, key)
    notebook = {
        "assessment": {"probabilities": probs, "summary": f"scripted {key}", "open_questions": []},
        "evidence_ledger": [],
    }
    return json.dumps(
        {
            "action": "final",
            "probabilities": probs,
            "rationale": "scripted",
            "notebook": notebook,
            "queries": [title.group(1) if title else "news"],
            "confidence": 0.95,
        }
    )


def completion(content: str, model: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": 1700000000,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
    }


def _fault(state: ProviderState, digest: str, attempt: int) -> str | None:
    f = state.faults
    if f.rate <= 0 or attempt >= f.per_request:
        return None
    rng = random.Random(f"{f.seed}:{digest}")
    if rng.random() >= f.rate:
        return None
    return rng.choice(f.kinds)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024  # hundreds of clients connect at once

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # clients killed or timing out mid-request are part of the tests


def start_provider(
    latency_s: float = 0.0, faults: Faults | None = None
) -> tuple[ProviderState, ThreadingHTTPServer]:
    state = ProviderState(latency_s=latency_s, faults=faults or Faults())

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def setup(self) -> None:
            super().setup()
            # Headers and body go out in two writes: without this, Nagle's algorithm holds the
            # body until the client's delayed ACK (40 ms a reply on a kept-alive connection).
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def _send(self, status: int, data: bytes, headers: dict[str, str] | None = None) -> None:
            try:
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("content-length", 0)))
            body = json.loads(raw or b"{}")
            digest = hashlib.sha256(raw).hexdigest()
            with state.lock:
                state.requests += 1
                attempt = state.seen[digest]
                state.seen[digest] += 1
                state.in_flight += 1
                state.max_in_flight = max(state.max_in_flight, state.in_flight)
            try:
                self._reply(body, digest, attempt)
            finally:
                with state.lock:
                    state.in_flight -= 1

        def _reply(self, body: dict[str, Any], digest: str, attempt: int) -> None:
            if state.missing:
                self._send(404, b'{"error": {"message": "model not found"}}')
                return
            if state.down:
                self._send(503, b'{"error": {"message": "down"}}')
                return
            kind = _fault(state, digest, attempt)
            if kind is not None:
                with state.lock:
                    state.faults_served[kind] += 1
            if kind == "429":
                retry = {"retry-after": str(state.faults.retry_after_s)}
                self._send(429, b'{"error": {"message": "slow down"}}', retry)
                return
            if kind == "503":
                self._send(503, b'{"error": {"message": "overloaded"}}')
                return
            if kind == "reset":
                self.connection.setsockopt(
                    socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
                )
                self.connection.close()
                self.close_connection = True
                return
            time.sleep(state.faults.timeout_s if kind == "timeout" else state.latency_s)
            data = json.dumps(completion(answer(body), str(body.get("model")))).encode()
            if kind == "truncated":
                data = data[: len(data) // 2]
            with state.lock:
                state.served += 1
            self._send(200, data)

    server = _Server(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    return state, server
