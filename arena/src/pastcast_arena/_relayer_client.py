"""Sending signed messages to a relayer, retried without ever submitting twice."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from pastcast_arena._backend import ArenaRejected

__all__ = ["RelayerClient", "RelayerUnavailable"]


class RelayerUnavailable(RuntimeError):
    """The relayer did not answer (timeouts, 5xx, 429) after the retries."""


class RelayerClient:
    """Sends signed messages to a relayer (``POST /commit``, ``/reveal``), retrying what did not
    get an answer. A retried message is the same signed message: the arena accepts it once
    (``already committed`` on a second copy), so retries never submit twice."""

    def __init__(
        self,
        url: str | None = None,
        *,
        http: Any = None,
        retries: int = 3,
        backoff_s: float = 0.2,
        timeout_s: float = 10.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        import httpx

        self.http = (
            http if http is not None else httpx.Client(base_url=url or "", timeout=timeout_s)
        )
        self.retries, self.backoff_s, self.sleep = retries, backoff_s, sleep
        self.reasoning: bool | None = None

    def _post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        import httpx

        last = ""
        for attempt in range(self.retries + 1):
            try:
                resp = self.http.post(path, json=body)
            except httpx.HTTPError as exc:  # a timeout or a dropped connection
                last = f"{type(exc).__name__}: {exc}"
            else:
                if resp.status_code == 200:
                    return dict(resp.json())
                detail = _detail(resp)
                if resp.status_code in (400, 409):
                    raise ArenaRejected(detail)
                if resp.status_code == 404:
                    raise LookupError(f"POST {path}: 404 {detail}")
                last = f"HTTP {resp.status_code}: {detail}"
            if attempt < self.retries:
                self.sleep(self.backoff_s * 2**attempt)
        raise RelayerUnavailable(f"POST {path}: {last}")

    def commit(self, msg: Any) -> None:
        self._post("/commit", msg.model_dump(mode="json"))

    def reveal(self, msg: Any) -> None:
        self._post("/reveal", msg.model_dump(mode="json"))

    def publish_reasoning(self, body: dict[str, Any]) -> bool:
        """Publish reasoning traces beside a signed submission; False when the relayer has no
        ``/reasoning`` endpoint (then they stay in the round's folder only)."""
        if self.reasoning is False:
            return False
        try:
            self._post("/reasoning", body)
        except LookupError:
            self.reasoning = False
            return False
        self.reasoning = True
        return True


def _detail(resp: Any) -> str:
    try:
        return str(resp.json().get("detail", resp.text))
    except (ValueError, AttributeError):
        return str(resp.text)[:200]
