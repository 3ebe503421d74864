"""A loopback OpenAI-compatible ``/v1/embeddings`` server for tests and benchmarks: replies in
the real API's shape (``{"object": "list", "data": [{"object": "embedding", "index", "embedding"}],
"model", "usage"}``), with a latency per request and scripted faults (429 with Retry-After, 5xx,
truncated bodies, refusals) or replies of the test's own (``reply``: another body, or chunks
sent as they come), counting what it saw and what it answered."""

from __future__ import annotations

import base64
import hashlib
import json
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, nullcontext
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np

Fault = str  # "429", "500", "503", "truncate", "short" (a body shorter than its length), "400",
# "401" (the credentials refused, echoed in the message as some servers do)
Reply = Callable[[int, bytes], bytes | Iterable[bytes] | None]
"""The body sent for request ``n`` instead of the right one (given): bytes with their length,
chunks (``Transfer-Encoding: chunked``) written as the iterable gives them, None: the right one."""


_ROWS = 4096  # rows of each of the three tables a vector is summed from
_TABLES: dict[int, np.ndarray] = {}  # type: ignore[type-arg]


def _vectors(texts: list[str], dim: int) -> np.ndarray:  # type: ignore[type-arg]
    """The server's embeddings of ``texts``: each the sum of three rows of fixed random tables
    picked by the text's hash (about 1 us a text; a generator seeded per text cost 25 us, so
    the fake server took as much of the shared cores as the client it measures)."""
    tables = _TABLES.get(dim)
    if tables is None:
        tables = _TABLES[dim] = 3.0 * np.random.default_rng(dim).standard_normal((3, _ROWS, dim))
    digests = b"".join(hashlib.sha256(t.encode()).digest()[:6] for t in texts)
    picks = np.frombuffer(digests, dtype="<u2").reshape(len(texts), 3) % _ROWS
    return tables[0][picks[:, 0]] + tables[1][picks[:, 1]] + tables[2][picks[:, 2]]


def vector_of(text: str, dim: int) -> list[float]:
    """The server's embedding of ``text``: fixed by its hash, deliberately not unit length."""
    return _vectors([text], dim)[0].tolist()  # type: ignore[no-any-return]


def encoded(texts: list[str], dim: int, as_base64: bool) -> list[list[float]] | list[str]:
    """The reply's embeddings of ``texts``; base64 straight from the array (a benchmark measures
    the client, so the server spends as little of the shared cores as it can)."""
    vectors = _vectors(texts, dim)
    if not as_base64:
        return vectors.tolist()  # type: ignore[no-any-return]
    packed = vectors.astype("<f4")
    return [base64.b64encode(row.tobytes()).decode() for row in packed]


def reply_body(texts: list[str], dim: int, request: dict[str, object]) -> bytes:
    """The JSON reply to an embeddings request. Base64 items are written as they are: they
    need no escaping, and ``json.dumps`` scanning them cost more than making them."""
    as_base64 = request.get("encoding_format") == "base64"
    embeddings = encoded(texts, dim, as_base64)
    order = reversed(range(len(texts)))  # any order: the index decides
    tail = {
        "model": request["model"],
        "usage": {"prompt_tokens": len(texts), "total_tokens": len(texts)},
    }
    if not as_base64:
        data = [{"object": "embedding", "index": i, "embedding": embeddings[i]} for i in order]
        return json.dumps({"object": "list", "data": data, **tail}).encode()
    items = ",".join(
        f'{{"object":"embedding","index":{i},"embedding":"{embeddings[i]}"}}' for i in order
    )
    return f'{{"object":"list","data":[{items}],{json.dumps(tail)[1:]}'.encode()


class EmbeddingServer:
    """Serve until ``close``; ``url`` is the base URL (``http://127.0.0.1:PORT/v1``)."""

    def __init__(
        self,
        *,
        dim: int = 16,
        latency_s: float = 0.0,
        faults: Callable[[int], Fault | None] | None = None,
        max_batch: int | None = None,
        slots: int | None = None,
        base64: bool = True,
        reply: Reply | None = None,
    ) -> None:
        self.dim = dim
        self.reply = reply or (lambda n, payload: None)
        self.base64 = base64  # False: a request asking for base64 is refused, as some servers do
        # requests served at once (like a GPU server's batch slots); the rest wait their turn
        self.slots = threading.BoundedSemaphore(slots) if slots else None
        self.latency_s = latency_s
        self.faults = faults or (lambda n: None)
        self.max_batch = max_batch
        self.lock = threading.Lock()
        self.requests = 0
        self.answered: Counter[str] = Counter()  # texts in complete, successful replies
        self.received: Counter[str] = Counter()  # texts in any request
        self.failed = Counter[str]()  # fault kind -> requests
        self.authorization: set[str] = set()
        self.models: set[str] = set()  # the model names requests asked for
        self.at_once = 0  # requests being served now (read, not yet answered)
        self.most_at_once = 0
        self.connections = 0  # opened by clients so far
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as real servers

            def log_message(self, *args: object) -> None:
                pass

            def setup(self) -> None:
                super().setup()
                with server.lock:
                    server.connections += 1
                # headers and body are two writes: without this, Nagle's algorithm holds the
                # body until the client's delayed ACK (40 ms a reply), as real servers avoid
                self.request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length))
                texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
                with server.lock:
                    n = server.requests
                    server.requests += 1
                    server.at_once += 1
                    server.most_at_once = max(server.most_at_once, server.at_once)
                    server.received.update(texts)
                    server.authorization.add(self.headers.get("Authorization", ""))
                    server.models.add(str(body.get("model")))
                fault = server.faults(n)
                if server.max_batch is not None and len(texts) > server.max_batch:
                    fault = "400"
                refused = not server.base64 and body.get("encoding_format") == "base64"
                if refused:
                    fault = "400"
                failing = fault in ("429", "500", "503", "400", "401")
                with server.batch_time():
                    if refused:
                        message = "encoding_format 'base64' is not supported"
                        payload = json.dumps({"error": {"message": message}}).encode()
                    elif fault == "401":
                        echoed = self.headers.get("Authorization", "").removeprefix("Bearer ")
                        message = f"Incorrect API key provided: {echoed}"
                        payload = json.dumps({"error": {"message": message}}).encode()
                    elif failing:
                        payload = json.dumps({"error": {"message": f"scripted {fault}"}}).encode()
                    else:
                        payload = reply_body(texts, server.dim, body)
                with server.lock:  # before the reply: its client may send again once it is read
                    server.at_once -= 1
                if failing:
                    assert fault is not None
                    with server.lock:
                        server.failed[fault] += 1
                    self.send_response(int(fault))
                    if fault == "429":
                        self.send_header("Retry-After", "0.01")
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                    return
                if fault == "truncate":  # a body cut short, with a length that says so
                    payload = payload[: len(payload) // 2]
                own = server.reply(n, payload)
                if own is not None and not isinstance(own, bytes):
                    self.send_chunks(own)
                    return
                payload = own if own is not None else payload
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                if fault == "short":  # the length promises more than is sent, then it closes
                    self.send_header("Content-Length", str(len(payload) + 100))
                    self.send_header("Connection", "close")
                    self.end_headers()
                    self.wfile.write(payload)
                    self.close_connection = True
                    with server.lock:
                        server.failed[fault] += 1
                    return
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
                with server.lock:
                    if fault == "truncate":
                        server.failed[fault] += 1
                    else:
                        server.answered.update(texts)

            def send_chunks(self, chunks: Iterable[bytes]) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                try:
                    for chunk in chunks:
                        if chunk:
                            self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                            self.wfile.flush()
                    self.wfile.write(b"0\r\n\r\n")
                except OSError:  # the client hung up (what a bounded client does)
                    self.close_connection = True

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    @contextmanager
    def batch_time(self) -> Iterator[None]:
        """A batch's time in the server: ``latency_s`` in one of the ``slots``, making the reply
        included, as a GPU server's time for a batch is all its work on it (the reply made
        after the wait would add this process's CPU time, on the client's cores, to each
        request)."""
        if not self.latency_s:
            yield
            return
        with self.slots if self.slots is not None else nullcontext():
            started = time.perf_counter()
            yield
            time.sleep(max(0.0, self.latency_s - (time.perf_counter() - started)))

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


@contextmanager
def embedding_server(**options: object) -> Iterator[EmbeddingServer]:
    server = EmbeddingServer(**options)  # type: ignore[arg-type]
    try:
        yield server
    finally:
        server.close()


if __name__ == "__main__":  # serve from a process of its own: python embedding_server.py JSON
    import sys

    options = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
    running = EmbeddingServer(**options)
    print(running.url, flush=True)
    sys.stdin.read()  # until the parent closes the pipe
    running.close()
