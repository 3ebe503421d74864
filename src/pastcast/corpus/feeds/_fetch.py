"""Fetching one feed's body over HTTP (a conditional GET) or from a file, within the limits of
the feeds file (docs/corpus.md, "Live feeds"); a failure is one ``FeedFetchError`` line."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import httpx

from pastcast.corpus.feeds._config import FeedConfig

_RETRY_STATUS = frozenset({429, 500, 502, 503, 504})


class FeedFetchError(RuntimeError):
    """A feed that could not be fetched this round (one line)."""


class _Retryable(Exception):
    """An attempt that failed for a reason worth another attempt."""


@dataclass(frozen=True)
class Fetched:
    """A fetched body (None when the server said 304 Not Modified) and its validators."""

    body: bytes | None
    etag: str | None = None
    last_modified: str | None = None
    attempts: int = 1


def _read_file(feed: FeedConfig) -> Fetched:
    assert feed.path is not None
    try:
        size = feed.path.stat().st_size
        if size > feed.max_bytes:
            raise FeedFetchError(f"{feed.path}: {size} bytes, over max_bytes={feed.max_bytes}")
        with feed.path.open("rb") as fh:
            body = fh.read(feed.max_bytes + 1)
    except OSError as exc:
        raise FeedFetchError(f"{feed.path}: cannot read ({exc.strerror or exc})") from None
    if len(body) > feed.max_bytes:  # grew while read
        raise FeedFetchError(f"{feed.path}: over max_bytes={feed.max_bytes}")
    return Fetched(body)


def _attempt(
    client: httpx.Client, feed: FeedConfig, headers: dict[str, str], clock: Callable[[], float]
) -> Fetched:
    url = feed.url
    assert url is not None
    deadline = clock() + feed.timeout_s
    try:
        # Each feed's own limit, per request (a caller's client is not changed).
        with client.stream("GET", url, headers=headers, timeout=feed.timeout_s) as reply:
            if reply.status_code == 304:
                return Fetched(None, headers.get("If-None-Match"), headers.get("If-Modified-Since"))
            if reply.status_code in _RETRY_STATUS:
                raise _Retryable(f"HTTP {reply.status_code} {reply.reason_phrase}")
            if reply.status_code != 200:
                raise FeedFetchError(f"GET {url}: HTTP {reply.status_code} {reply.reason_phrase}")
            declared = reply.headers.get("Content-Length")
            if declared is not None and declared.isdigit() and int(declared) > feed.max_bytes:
                raise FeedFetchError(
                    f"GET {url}: body of {declared} bytes, over max_bytes={feed.max_bytes}"
                )
            chunks: list[bytes] = []
            size = 0
            for chunk in reply.iter_bytes():  # as received, so the deadline is checked
                size += len(chunk)
                if size > feed.max_bytes:
                    raise FeedFetchError(f"GET {url}: body over max_bytes={feed.max_bytes}")
                if clock() > deadline:
                    raise _Retryable(f"body not received within timeout_s={feed.timeout_s:g}")
                chunks.append(chunk)
            return Fetched(
                b"".join(chunks),
                reply.headers.get("ETag"),
                reply.headers.get("Last-Modified"),
            )
    except httpx.TimeoutException:
        raise _Retryable(f"timed out (timeout_s={feed.timeout_s:g})") from None
    except httpx.TransportError as exc:
        raise _Retryable(f"{type(exc).__name__}: {exc}".splitlines()[0]) from None
    except httpx.HTTPError as exc:  # a bad redirect, an invalid URL
        raise FeedFetchError(f"GET {url}: {exc}".splitlines()[0]) from None


def fetch_body(
    feed: FeedConfig,
    client: httpx.Client,
    *,
    etag: str | None = None,
    last_modified: str | None = None,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> Fetched:
    """The feed's body now (``path`` or ``url``; a ``folder`` is read by the round itself), the
    GET conditional on the last fetch's validators."""
    if feed.path is not None:
        return _read_file(feed)
    headers = {"Accept": "application/rss+xml, application/atom+xml, application/xml, text/xml"}
    if etag:
        headers["If-None-Match"] = etag
    if last_modified:
        headers["If-Modified-Since"] = last_modified
    attempts = feed.retries + 1
    for attempt in range(1, attempts + 1):
        try:
            got = _attempt(client, feed, headers, clock)
        except _Retryable as exc:
            if attempt == attempts:
                raise FeedFetchError(
                    f"GET {feed.url}: {exc} ({attempts} attempt{'s' * (attempts > 1)})"
                ) from None
            sleep(feed.backoff_s * 2 ** (attempt - 1))
            continue
        return Fetched(got.body, got.etag, got.last_modified, attempt)
    raise AssertionError("unreachable")  # pragma: no cover
