"""Embeddings from an OpenAI-compatible ``/v1/embeddings`` endpoint, as a registered embedder:
``openai-compatible:MODEL@URL[?option=value&...]`` and ``openai:MODEL``. The options, the
secrets kept out of every name and message, the whole-request deadline, the retries and the
bounds on a reply are in docs/corpus.md ("Embeddings from anywhere")."""

from __future__ import annotations

import base64
import binascii
import json
import logging
import math
import os
import re
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

import numpy as np

from pastcast import safejson
from pastcast.corpus.dense._embedders import F32, Embedder
from pastcast.corpus.dense._jobs import unit_rows
from pastcast.retrying import (
    HttpEndpoint,
    ProviderFailure,
    RetryPolicy,
    TokenBucket,
    call_with_retries,
    redact,
    redact_url,
)

log = logging.getLogger(__name__)

OPENAI_URL = "https://api.openai.com/v1"

REPLY_BYTES_PER_TEXT = 256 << 10
"""The default bound of a reply, per text of a batch (plus ``_REPLY_HEADROOM``): an 8,192-d
vector as JSON floats is about 190 KiB, as base64 about 43 KiB."""
_REPLY_HEADROOM = 1 << 20
_READ_BYTES = 1 << 16

_URL_START = re.compile(r"@(?=https?://)")


def parse_remote_spec(kind: str, rest: str) -> tuple[str, str]:
    """``(model, base_url)`` of ``openai-compatible:MODEL@URL`` or ``openai:MODEL``. The URL
    starts at the first ``@`` followed by ``http://`` or ``https://``, so that it may carry a
    user and password of its own (``m@http://user:pw@host/v1``)."""
    if kind == "openai":
        if not rest or "@" in rest:
            raise ValueError(f"expected openai:MODEL, got {redact(rest)!r}")
        return rest, OPENAI_URL
    start = _URL_START.search(rest)
    if start is None or start.start() == 0:
        raise ValueError(
            f"expected openai-compatible:MODEL@http://host:port/v1, got {redact(rest)!r}"
        )
    return rest[: start.start()], rest[start.end() :]


def _above_zero(name: str, value: float | None) -> None:
    """A rate limit or a timeout that is given is a number above 0: a rate of 0 would otherwise
    read as no limit at all, a timeout of 0 as a socket that never waits."""
    if value is not None and not (math.isfinite(value) and value > 0):
        raise ValueError(f"{name}: expected a number above 0, got {value!r}")


class RemoteEmbedder:
    def __init__(
        self,
        model: str,
        *,
        base_url: str,
        provider: str = "openai-compatible",
        api_key_env: str | None = None,
        batch_size: int = 128,
        concurrency: int = 8,
        requests_per_minute: float | None = None,
        tokens_per_minute: float | None = None,
        timeout_s: float = 120.0,
        max_chars: int = 8_000,
        max_reply_bytes: int | None = None,
        encoding_format: str = "base64",
        retry: RetryPolicy | None = None,
    ) -> None:
        if batch_size < 1 or concurrency < 1 or max_chars < 1:
            raise ValueError("batch_size, concurrency and max_chars must be at least 1")
        if max_reply_bytes is None:
            max_reply_bytes = batch_size * REPLY_BYTES_PER_TEXT + _REPLY_HEADROOM
        if max_reply_bytes < 1:
            raise ValueError(f"max_reply_bytes: expected at least 1, got {max_reply_bytes}")
        if encoding_format not in ("float", "base64"):
            raise ValueError(f"encoding_format: float or base64, not {encoding_format!r}")
        _above_zero("requests_per_minute", requests_per_minute)
        _above_zero("tokens_per_minute", tokens_per_minute)
        _above_zero("timeout_s", timeout_s)
        key = None
        if api_key_env is not None:
            key = os.environ.get(api_key_env, "")
            if not key:
                raise ValueError(f"environment variable {api_key_env} is not set (API key)")
        try:
            parts = urlsplit(base_url.rstrip("/"))
            hostname, _ = parts.hostname, parts.port  # reading the port checks it
        except ValueError as exc:  # a port that is not a number, a bracket left open
            raise ValueError(f"not an http(s) URL: {redact_url(base_url)!r} ({exc})") from None
        if parts.scheme not in ("http", "https") or not hostname:
            raise ValueError(f"not an http(s) URL: {redact_url(base_url)!r}")
        self.model = model
        self.name = f"{provider}:{model}"
        self.where = f"{self.name} at {redact_url(base_url.rstrip('/'))}"
        """The embedder and its server, as every message names them (no password)."""
        self.provider = provider
        self.batch_size = batch_size
        self.concurrency = concurrency
        # batches a caller may hand it at once: requests in flight stay at ``concurrency``
        # (``_in_flight``), the other threads parse replies meanwhile, so a slot is sent its
        # next request as soon as a reply is read, not once it is parsed
        self.threads = 2 * concurrency
        self._in_flight = threading.BoundedSemaphore(concurrency)
        self.max_chars = max_chars
        self.encoding_format = encoding_format
        self.retry = retry or RetryPolicy(max_retries=6)
        headers = {"Content-Type": "application/json"}
        secrets: tuple[str, ...] = ()
        if key:
            headers["Authorization"] = f"Bearer {key}"
            secrets = (key,)
        if parts.password is not None:
            if key:
                raise ValueError(
                    f"{self.where}: an API key ({api_key_env}) and a password in the URL; "
                    "give one of them"
                )
            user, password = unquote(parts.username or ""), unquote(parts.password)
            basic = base64.b64encode(f"{user}:{password}".encode()).decode()
            headers["Authorization"] = f"Basic {basic}"
            secrets = (basic, password, parts.password)
        self._requests = TokenBucket(requests_per_minute) if requests_per_minute else None
        self._tokens = TokenBucket(tokens_per_minute) if tokens_per_minute else None
        self._http = HttpEndpoint(
            base_url,
            headers=headers,
            timeout_s=timeout_s,
            where=self.where,
            secrets=secrets,
            max_reply_bytes=max_reply_bytes,
        )
        self._pool: ThreadPoolExecutor | None = None
        self._pool_lock = threading.Lock()

    def __repr__(self) -> str:  # no key, no headers
        return f"RemoteEmbedder({self.name!r})"

    def encode(self, texts: Sequence[str]) -> F32:
        """Unit vectors of ``texts``: one request per ``batch_size`` texts, sent concurrently."""
        if not texts:
            return np.zeros((0, 1), dtype=np.float32)
        chunks = [
            list(texts[i : i + self.batch_size]) for i in range(0, len(texts), self.batch_size)
        ]
        if len(chunks) == 1:
            return self._batch(chunks[0])
        with self._pool_lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self.threads, thread_name_prefix="embed-http")
            pool = self._pool
        return np.concatenate(list(pool.map(self._batch, chunks)))

    def _body(self, texts: list[str], encoding: str) -> bytes:
        request = {
            "model": self.model,
            "input": [t[: self.max_chars] or " " for t in texts],  # servers refuse ""
            "encoding_format": encoding,
        }
        return json.dumps(request).encode()

    def _refuses_base64(self, failure: ProviderFailure) -> bool:
        """Whether ``failure`` is a server refusing the base64 encoding (then floats are asked
        for from now on: every server speaks those)."""
        message = str(failure).removeprefix(self.where).lower()  # what the server said
        return failure.status in (400, 422) and ("encoding" in message or "base64" in message)

    def _batch(self, texts: list[str]) -> F32:
        encoding = self.encoding_format
        body = self._body(texts, encoding)
        tokens = 0.0
        if self._tokens is not None:  # about 4 chars a token
            tokens = sum(min(len(t), self.max_chars) for t in texts) / 4

        def once() -> F32:
            nonlocal body, encoding
            if self._requests is not None:
                self._requests.take(1)
            if self._tokens is not None:
                self._tokens.take(tokens)
            try:
                return self._parse(self._post(body), len(texts))
            except ProviderFailure as exc:
                if encoding != "base64" or not self._refuses_base64(exc):
                    raise
                if self.encoding_format == "base64":
                    log.warning(
                        "%s: the server refuses base64 vectors; asking for floats", self.where
                    )
                self.encoding_format = encoding = "float"
                body = self._body(texts, encoding)
                return self._parse(self._post(body), len(texts))

        return unit_rows(call_with_retries(once, self.retry), self.name)

    def _post(self, body: bytes) -> bytes:
        """One request's reply body, at most ``concurrency`` in flight."""
        with self._in_flight:
            return self._http.post("/embeddings", body)

    def _parse(self, data: bytes, expected: int) -> F32:
        """The reply's vectors in input order, or a ``bad_response`` failure (retried): the
        reply's ``index`` values must be each of 0..expected-1 once."""
        try:
            reply: Any = safejson.loads(data)  # nesting refused in a line, no RecursionError
            items = reply["data"]
            if not isinstance(items, list):
                raise TypeError(f"data is a {type(items).__name__}, not a list")
            indexes = [item["index"] for item in items]
            vectors = _vectors([item["embedding"] for item in items])
        except (ValueError, KeyError, TypeError, binascii.Error) as exc:
            message = f"malformed reply ({type(exc).__name__}: {exc})"
            raise self._http.failure(message, "bad_response") from None
        problem = _index_problem(indexes, expected)
        if problem is not None:
            raise self._http.failure(
                f"the reply's indexes are not each of 0..{expected - 1} once: {problem}",
                "bad_response",
            )
        if vectors.ndim != 2 or len(vectors) != expected or not np.isfinite(vectors).all():
            raise self._http.failure(
                f"reply of shape {vectors.shape} for {expected} texts, or not finite",
                "bad_response",
            )
        ordered = np.empty_like(vectors)
        ordered[indexes] = vectors
        return ordered

    def close(self) -> None:
        with self._pool_lock:
            if self._pool is not None:
                self._pool.shutdown(wait=False)
                self._pool = None
        self._http.close()


def _index_problem(indexes: list[object], expected: int) -> str | None:
    """What keeps ``indexes`` from being each of 0..expected-1 once, or None."""
    if len(indexes) != expected:
        return f"{len(indexes)} embeddings for {expected} texts"
    seen: set[int] = set()
    for i in indexes:
        if not isinstance(i, int) or isinstance(i, bool):
            return f"index {i!r} is not an integer"
        if not 0 <= i < expected:
            return f"index {i} out of range for {expected} texts"
        if i in seen:
            return f"index {i} more than once"
        seen.add(i)
    return None


def _vectors(values: list[object]) -> F32:
    """The reply items' embeddings as rows: lists of floats, or (``encoding_format=base64``)
    the base64 of little-endian float32s, which costs a tenth of the parsing at 1,000+
    dimensions; decoded one by one, joined and viewed as one array (no array a row)."""
    if values and all(isinstance(v, str) for v in values):
        rows = [binascii.a2b_base64(v, strict_mode=True) for v in values]  # type: ignore[arg-type]
        if len({len(r) for r in rows}) != 1 or len(rows[0]) % 4:
            raise ValueError("base64 embeddings of unequal or partial float32 lengths")
        flat = np.frombuffer(b"".join(rows), dtype="<f4")
        return flat.reshape(len(rows), -1).astype(np.float32)
    for v in values:
        if not isinstance(v, list):
            raise TypeError(f"an embedding is a list of floats, not {type(v).__name__}")
    return np.asarray(values, dtype=np.float32)


def split_options(spec: str) -> tuple[str, dict[str, str]]:
    """``SPEC?key=value&...``: the spec and the options written after it."""
    head, sep, query = spec.partition("?")
    return head, dict(parse_qsl(query, strict_parsing=True)) if sep else {}


_REMOTE_NUMBERS = ("batch_size", "concurrency", "max_chars", "max_reply_bytes")
_REMOTE_FLOATS = ("requests_per_minute", "tokens_per_minute", "timeout_s")


def remote_embedder(kind: str, model: str, url: str, given: dict[str, str]) -> RemoteEmbedder:
    """The embedder of ``kind`` with the options a command line can say (text after ``?``)."""
    options: dict[str, object] = {"api_key_env": "OPENAI_API_KEY" if kind == "openai" else None}
    for key, value in given.items():
        if key in _REMOTE_NUMBERS:
            options[key] = int(value)
        elif key in _REMOTE_FLOATS:
            options[key] = float(value)
        elif key == "max_retries":
            options["retry"] = RetryPolicy(max_retries=int(value))
        elif key in ("api_key_env", "encoding_format"):
            options[key] = value
        else:
            raise ValueError(f"{kind}:{redact(model)}: unknown option {key!r}")
    return RemoteEmbedder(model, base_url=url, provider=kind, **options)  # type: ignore[arg-type]


def _remote(kind: str, rest: str) -> Embedder:
    head, given = split_options(rest)
    return remote_embedder(kind, *parse_remote_spec(kind, head), given)


def openai_compatible(spec: str) -> Embedder:
    """``MODEL@URL[?option=value&...]``: an OpenAI-compatible ``/v1/embeddings`` server (no API
    key unless ``api_key_env`` names the variable holding it)."""
    return _remote("openai-compatible", spec)


def openai_embeddings(spec: str) -> Embedder:
    """``MODEL[?option=value&...]``: OpenAI's embeddings (the key from ``OPENAI_API_KEY``)."""
    return _remote("openai", spec)
