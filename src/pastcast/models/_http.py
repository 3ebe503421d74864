"""The HTTP transport of the OpenAI-compatible models (``_openai``): the connections are spread
over a few pools, and each thread keeps to one of them.

httpcore's pool walks every connection it holds, under its lock, on each request and each
reply. One pool for a run's hundreds of threads made that walk a tenth of a step's CPU at 256
in flight; over ``POOLS`` pools each walk covers a sixteenth of the connections. A pool keeps
every connection it opened while it is idle, up to the keep-alive expiry, so steps that follow
each other do not connect again."""

from __future__ import annotations

import itertools
import threading

import httpx2

POOLS = 16


class ThreadPools(httpx2.BaseTransport):
    """``POOLS`` connection pools; a thread is given one on its first request, in turn."""

    def __init__(self) -> None:
        tls = httpx2.create_ssl_context()  # made once: each pool would load the CA bundle again
        limits = httpx2.Limits(max_connections=None, max_keepalive_connections=None)
        self._pools = [httpx2.HTTPTransport(verify=tls, limits=limits) for _ in range(POOLS)]
        self._turn = itertools.count()
        self._mine = threading.local()

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        pool = getattr(self._mine, "pool", None)
        if pool is None:
            pool = self._mine.pool = self._pools[next(self._turn) % POOLS]
        return pool.handle_request(request)

    def close(self) -> None:
        for pool in self._pools:
            pool.close()
