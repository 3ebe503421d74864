"""Retries of remote calls, shared by every client of a remote service (chat models, embedding
servers, market APIs): failures by kind, full-jitter backoff honouring ``Retry-After``, and the
token bucket behind per-provider rate limits.

A client turns each failed attempt into a ``ProviderFailure``: transient kinds are retried,
configuration kinds and refused requests are not. The module sits at the bottom of the layers so
that the corpus and the models share one retry loop without importing each other. ``redact_url``
and ``redact`` keep secrets (passwords in URLs, API keys) out of what a client says of a failure.
``HttpEndpoint`` is the HTTP the chat models and the remote embedders post their JSON with.
"""

from __future__ import annotations

import base64
import codecs
import contextlib
import functools
import http.client
import io
import queue
import random
import re
import select
import socket
import threading
import time
import urllib.request
from collections.abc import Callable, Iterable, Mapping
from email.utils import parsedate_to_datetime
from typing import Any, Literal, TypeVar
from urllib.parse import unquote, urlsplit, urlunsplit

from pydantic import Field

from pastcast.records import Record

__all__ = [
    "TRANSIENT_KINDS",
    "FailureKind",
    "HttpEndpoint",
    "ProviderFailure",
    "RetryPolicy",
    "TokenBucket",
    "call_with_retries",
    "failure_kind_of_status",
    "redact",
    "redact_url",
    "retry_after_seconds",
]

T = TypeVar("T")

FailureKind = Literal[
    "rate_limited",  # 429
    "server_error",  # 5xx, 408, 409
    "timeout",
    "connection",  # refused, reset, closed mid-reply
    "bad_response",  # a reply that is not the protocol's JSON (truncated, garbled)
    "paused",  # the provider's circuit stayed open longer than the run waits
    "unavailable",  # the model or endpoint does not exist, credentials refused (401/403/404)
    "refused",  # the request itself was rejected (400, 413, 422: e.g. context overflow)
]

TRANSIENT_KINDS: frozenset[FailureKind] = frozenset(
    {"rate_limited", "server_error", "timeout", "connection", "bad_response"}
)


class ProviderFailure(RuntimeError):
    """A remote call that failed; ``kind`` says why, ``retry_after`` what the provider asked."""

    def __init__(
        self,
        message: str,
        *,
        kind: FailureKind,
        status: int | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.kind: FailureKind = kind
        self.status = status
        self.retry_after = retry_after

    @property
    def transient(self) -> bool:
        """Worth another attempt now (after a backoff)."""
        return self.kind in TRANSIENT_KINDS


def redact_url(url: str) -> str:
    """The URL without its password (in the user part or as a ``password`` parameter), for
    messages and logs."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparsable URL>"
    netloc = parts.netloc
    if "@" in netloc:
        user, _, host = netloc.rpartition("@")
        netloc = f"{user.partition(':')[0]}@{host}"
    query = "&".join(
        p for p in parts.query.split("&") if unquote(p.partition("=")[0]) != "password"
    )
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


# the scheme's length bounded: an unbounded one made a long run of letters quadratic to scan
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]{0,31}://[^\s'\"<>]+")


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with each of ``secrets`` (an API key) replaced by ``***`` and every URL in it
    without its password (``redact_url``)."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    return _URL.sub(lambda m: redact_url(m.group()), text) if "://" in text else text


def failure_kind_of_status(status: int) -> FailureKind:
    """The kind of an HTTP error status, as every client classifies it."""
    if status == 429:
        return "rate_limited"
    if status >= 500 or status in (408, 409):
        return "server_error"
    return "unavailable" if status in (401, 403, 404) else "refused"


def retry_after_seconds(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """Seconds a reply's ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date) asks
    to wait, or None."""
    lower = {k.lower(): v for k, v in headers.items()}
    ms = lower.get("retry-after-ms")
    if ms is not None:
        with contextlib.suppress(ValueError):
            return max(0.0, float(ms) / 1000.0)
    value = lower.get("retry-after")
    if value is None:
        return None
    with contextlib.suppress(ValueError):
        return max(0.0, float(value))
    try:
        when = parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError):
        return None
    return max(0.0, when - (time.time() if now is None else now))


class RetryPolicy(Record):
    """How often and how long to retry transient failures: full-jitter exponential backoff
    (a uniform draw in [0, min(max_delay_s, base_delay_s * 2**attempt)]), never shorter than the
    provider's Retry-After (which is capped by ``max_retry_after_s``)."""

    max_retries: int = Field(default=4, ge=0)
    base_delay_s: float = Field(default=0.5, ge=0)
    max_delay_s: float = Field(default=30.0, ge=0)
    max_retry_after_s: float = Field(default=300.0, ge=0)

    def delay(self, attempt: int, retry_after: float | None, rng: random.Random) -> float:
        """Seconds to wait before retry number ``attempt + 1`` (``attempt`` counts from 0)."""
        ceiling = min(self.max_delay_s, self.base_delay_s * (2.0**attempt))
        jittered = rng.uniform(0.0, ceiling)
        if retry_after is None:
            return jittered
        return max(min(retry_after, self.max_retry_after_s), jittered)


def call_with_retries(
    attempt: Callable[[], T],
    policy: RetryPolicy,
    *,
    on_retry: Callable[[ProviderFailure, float], None] | None = None,
    sleep: Callable[[float], None] = time.sleep,
    rng: random.Random | None = None,
) -> T:
    """``attempt()``, retried on transient ``ProviderFailure`` up to ``policy.max_retries``
    times; ``on_retry(error, delay)`` is told before each wait. The last error is raised as it
    is."""
    draw = rng or random.Random()
    for n in range(policy.max_retries + 1):
        try:
            return attempt()
        except ProviderFailure as exc:
            if not exc.transient or n == policy.max_retries:
                raise
            wait = policy.delay(n, exc.retry_after, draw)
            if on_retry is not None:
                on_retry(exc, wait)
            sleep(wait)
    raise AssertionError("unreachable")  # the loop returns or raises


class TokenBucket:
    """``rate_per_minute`` units a minute, with bursts of up to ``burst_s`` seconds' worth.

    ``take(n)`` waits until ``n`` units are there (a request larger than the burst waits for a
    full bucket and leaves it in debt); ``adjust(d)`` corrects a charge once the real amount is
    known (tokens used against tokens estimated).
    """

    def __init__(
        self,
        rate_per_minute: float,
        *,
        burst_s: float = 10.0,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.rate = rate_per_minute / 60.0
        self.capacity = max(1.0, self.rate * burst_s)
        self._level = self.capacity
        self._clock = clock
        self._sleep = sleep
        self._stamp = clock()
        self._lock = threading.Lock()

    def _refill(self) -> None:
        now = self._clock()
        self._level = min(self.capacity, self._level + (now - self._stamp) * self.rate)
        self._stamp = now

    def take(self, amount: float) -> float:
        """Wait for ``amount`` units and take them; returns the seconds waited."""
        waited = 0.0
        need = min(amount, self.capacity)
        while True:
            with self._lock:
                self._refill()
                if self._level >= need - 1e-9:  # rounding must not leave a sliver to wait for
                    self._level -= amount
                    return waited
                wait = (need - self._level) / self.rate
            wait = min(max(wait, 0.001), 1.0)  # re-check: another caller may have refunded units
            self._sleep(wait)
            waited += wait

    def adjust(self, delta: float) -> None:
        """Charge ``delta`` more units (negative: give them back)."""
        with self._lock:
            self._refill()
            self._level = min(self.capacity, self._level - delta)


_READ_BYTES = 1 << 16


class _DeadlineIO(socket.SocketIO):
    """A socket's reads, each allowed only what is left until ``deadline``: a socket's own
    timeout bounds one read, so a server sending a byte now and then would hold a reply (its
    status line, headers or body) for ever."""

    def __init__(self, sock: socket.socket, deadline: float) -> None:
        super().__init__(sock, "rb")
        # counted as ``socket.makefile`` counts its readers: a reply that closes the connection
        # closes the socket only once it is read
        sock._io_refs += 1  # type: ignore[attr-defined]
        self._socket, self._deadline = sock, deadline

    def readinto(self, b: Any) -> int | None:
        left = self._deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the reply's deadline passed")
        self._socket.settimeout(left)
        return super().readinto(b)


class _DeadlineResponse(http.client.HTTPResponse):
    """An HTTP reply read through ``_DeadlineIO``."""

    def __init__(self, sock: socket.socket, *args: Any, deadline: float, **kwargs: Any) -> None:
        super().__init__(sock, *args, **kwargs)
        self.fp.close()  # the plain reader made above: this one keeps to the deadline
        self.fp = io.BufferedReader(_DeadlineIO(sock, deadline))


class _OneWrite(http.client.HTTPConnection):
    """A request's headers and body in one write, where the standard client makes two: one
    system call fewer, and one wait fewer for the interpreter after it, which at 256 threads
    is what delays a request (docs/measurements/runner.md)."""

    _head: list[bytes] | None = None

    def send(self, data: Any) -> None:
        if self._head is None:
            super().send(data)
        else:
            self._head.append(data)

    def endheaders(self, message_body: Any = None, *, encode_chunked: bool = False) -> None:
        if not isinstance(message_body, bytes) or encode_chunked:
            super().endheaders(message_body, encode_chunked=encode_chunked)
            return
        self._head = []  # the headers, which ``send`` now keeps
        try:
            super().endheaders()
            head = b"".join(self._head)
        finally:
            self._head = None
        super().send(head + message_body)


class _OneWriteHTTPS(_OneWrite, http.client.HTTPSConnection):
    pass


def _readable(sock: socket.socket) -> bool:
    """Whether an idle connection has something to read (the server closed it). poll, not
    select: select refuses descriptors above 1023, which a long-lived process reaches."""
    poller = select.poll()
    poller.register(sock, select.POLLIN)
    return bool(poller.poll(0))


class HttpEndpoint:
    """JSON posted to one server over persistent connections, each request on an idle one (or a
    new one), any failure a ``ProviderFailure`` of its kind naming ``where``. A request, reply
    included, ends within ``timeout_s``; a reply is read up to ``max_reply_bytes``. The proxies
    of the environment (``HTTP_PROXY``, ``HTTPS_PROXY``, ``ALL_PROXY``, ``NO_PROXY``) apply.
    The standard library's client: a third of the CPU a request of httpx's costs."""

    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str],
        timeout_s: float,
        where: str,
        secrets: tuple[str, ...] = (),
        max_reply_bytes: int | None = None,
    ) -> None:
        parts = urlsplit(url.rstrip("/"))
        self.scheme, self.host, self.port = parts.scheme, parts.hostname or "", parts.port
        self.path = parts.path
        self.headers = dict(headers)
        self.timeout_s, self.where, self.secrets = timeout_s, where, secrets
        self.max_reply_bytes = max_reply_bytes
        proxies = urllib.request.getproxies_environment()
        proxy = proxies.get(self.scheme) or proxies.get("all")
        bypass = urllib.request.proxy_bypass_environment  # type: ignore[attr-defined]  # NO_PROXY
        self._proxy = None if not proxy or bypass(self.host) else urlsplit(proxy)
        self._proxy_auth: dict[str, str] = {}
        if self._proxy is not None and self._proxy.username is not None:
            pair = f"{unquote(self._proxy.username)}:{unquote(self._proxy.password or '')}"
            basic = base64.b64encode(pair.encode()).decode()
            self._proxy_auth["Proxy-Authorization"] = f"Basic {basic}"
        if self._proxy is not None and self.scheme == "http":  # the proxy is sent whole URLs
            self.path = f"http://{parts.netloc.rpartition('@')[2]}{self.path}"
            self.headers |= self._proxy_auth
        self._idle: queue.SimpleQueue[http.client.HTTPConnection] = queue.SimpleQueue()
        # The codec that ``getaddrinfo`` encodes a host name with, imported now: on first use,
        # each of 256 threads connecting at once looked it up under the import lock, and a
        # run's first requests waited 0.15 s for it (docs/measurements/runner.md).
        codecs.lookup("idna")

    def _connection(self) -> http.client.HTTPConnection:
        new = _OneWriteHTTPS if self.scheme == "https" else _OneWrite
        proxy = self._proxy
        if proxy is None:
            return new(self.host, self.port, timeout=self.timeout_s)
        conn = new(proxy.hostname or "", proxy.port, timeout=self.timeout_s)
        if self.scheme == "https":
            conn.set_tunnel(self.host, self.port, headers=self._proxy_auth)
        return conn

    def failure(self, message: str, kind: FailureKind, **more: Any) -> ProviderFailure:
        """A failure naming ``where``, on one line, without a secret."""
        text = redact(" ".join(message.split()), self.secrets)
        return ProviderFailure(f"{self.where}: {text}", kind=kind, **more)

    def post(self, path: str, body: bytes) -> bytes:
        """The reply's body to ``body`` posted to ``path`` (below the URL's own)."""
        try:
            conn = self._idle.get_nowait()
            if conn.sock is not None and _readable(conn.sock):
                conn.close()  # closed by the server while idle: connected again below
        except queue.Empty:
            conn = self._connection()
        data, reusable = self._send(conn, self.path + path, body)
        if reusable:
            self._idle.put(conn)
        else:
            conn.close()
        if isinstance(data, ProviderFailure):
            raise data
        return data

    def _send(
        self, conn: http.client.HTTPConnection, path: str, body: bytes
    ) -> tuple[bytes | ProviderFailure, bool]:
        """The reply body or the failure, and whether ``conn`` may be used again."""
        deadline = time.monotonic() + self.timeout_s
        try:
            if conn.sock is None:
                conn.connect()
                sock: socket.socket = conn.sock  # type: ignore[assignment]  # connected
                # headers and body are two writes: without this, Nagle's algorithm may hold
                # the body until the server's delayed ACK of the headers (urllib3 sets it too)
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            # sending is bounded as a whole by the socket's timeout (sendall), reading by
            # the deadline's response class, made for this request
            conn.sock.settimeout(max(deadline - time.monotonic(), 1e-3))
            conn.response_class = functools.partial(_DeadlineResponse, deadline=deadline)  # type: ignore[assignment]
            conn.request("POST", path, body=body, headers=self.headers)
            resp = conn.getresponse()
            data = self._read_body(resp)
        except TimeoutError:
            return self.failure(
                f"no complete reply within timeout_s={self.timeout_s:g}", "timeout"
            ), False
        except http.client.IncompleteRead as exc:
            return self.failure(f"reply cut short ({exc!r})", "bad_response"), False
        except (OSError, http.client.HTTPException) as exc:
            message = f"connection failed ({type(exc).__name__}: {exc})"
            return self.failure(message, "connection"), False
        if isinstance(data, ProviderFailure):
            return data, False
        if resp.status >= 400:
            headers = {k: v for k, v in resp.getheaders()}
            # the whole (bounded) body redacted before it is cut: a key may straddle the cut
            said = redact(data.decode(errors="replace"), self.secrets)
            failure = self.failure(
                f"HTTP {resp.status}: {said[:200]}",
                failure_kind_of_status(resp.status),
                status=resp.status,
                retry_after=retry_after_seconds(headers),
            )
            return failure, not resp.will_close
        return data, not resp.will_close

    def _read_body(self, resp: http.client.HTTPResponse) -> bytes | ProviderFailure:
        limit = self.max_reply_bytes
        if limit is not None and resp.length is not None and resp.length > limit:
            return self.failure(
                f"a reply of {resp.length} bytes, over max_reply_bytes={limit}", "bad_response"
            )
        chunks: list[bytes] = []
        size = 0
        while chunk := resp.read(_READ_BYTES):
            size += len(chunk)
            if limit is not None and size > limit:
                return self.failure(f"reply over max_reply_bytes={limit}", "bad_response")
            chunks.append(chunk)
        if resp.length:  # the connection closed before the declared length came
            raise http.client.IncompleteRead(b"".join(chunks), resp.length)
        return b"".join(chunks)

    def close(self) -> None:
        while True:
            try:
                self._idle.get_nowait().close()
            except queue.Empty:
                return
