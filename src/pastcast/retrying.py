"""Retries of remote calls, shared by every client of a remote service (chat models, embedding
servers, market APIs): failures by kind, full-jitter backoff honouring ``Retry-After``, and the
token bucket behind per-provider rate limits.

A client turns each failed attempt into a ``ProviderFailure``: transient kinds are retried,
configuration kinds and refused requests are not. The module sits at the bottom of the layers so
that the corpus and the models share one retry loop without importing each other. ``redact_url``
and ``redact`` keep secrets (passwords in URLs, API keys) out of what a client says of a failure.
"""

from __future__ import annotations

import random
import re
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from email.utils import parsedate_to_datetime
from typing import Literal, TypeVar
from urllib.parse import unquote, urlsplit, urlunsplit

from pydantic import Field

from pastcast.records import Record

__all__ = [
    "TRANSIENT_KINDS",
    "FailureKind",
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
    if "://" not in text:
        return text
    return _URL.sub(lambda m: redact_url(m.group()), text)


def failure_kind_of_status(status: int) -> FailureKind:
    """The kind of an HTTP error status, as every client classifies it."""
    if status == 429:
        return "rate_limited"
    if status >= 500 or status in (408, 409):
        return "server_error"
    if status in (401, 403, 404):
        return "unavailable"
    return "refused"


def retry_after_seconds(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """Seconds a reply's ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date) asks
    to wait, or None."""
    lower = {k.lower(): v for k, v in headers.items()}
    ms = lower.get("retry-after-ms")
    if ms is not None:
        try:
            return max(0.0, float(ms) / 1000.0)
        except ValueError:
            pass
    value = lower.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
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
