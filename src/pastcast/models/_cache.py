"""Record/replay cache for model calls: a recorded run replays bit-exact with no network
(docs/models.md, "Record / replay"). Key: sha256 of the canonical JSON of (model name, the
model's own settings, request, rollout included); one JSON file per key under
``cache_dir/<2 hex>/<key>.json``, written atomically.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pastcast import safejson
from pastcast.atomic import write_atomic
from pastcast.models._context import ContextLimits, context_limits_of
from pastcast.models._protocol import ChatRequest, ChatResponse, Model, ModelError
from pastcast.safejson import canonical_json

CacheMode = Literal["record", "replay", "auto"]
_FORMAT = 2  # 2: settings and the rollout are part of the key


_UNSET_LATER_FIELDS = ("top_p", "reasoning_effort")
"""Request fields added after format 2: left out of the key while unset, so entries recorded
before they existed keep their keys."""


def cache_key(
    model_name: str, request: ChatRequest, settings: Mapping[str, Any] | None = None
) -> str:
    sent = request.model_dump(mode="json")
    for name in _UNSET_LATER_FIELDS:
        if sent[name] is None:
            del sent[name]
    payload = {
        "format": _FORMAT,
        "model": model_name,
        "settings": dict(settings or {}),
        "request": sent,
    }
    return hashlib.sha256(canonical_json(payload).encode("utf-8")).hexdigest()


class CachedModel:
    """Wraps ``inner``. ``record``: always call and store; ``replay``: only read (a miss is an
    error); ``auto``: read, else call and store. ``settings``: the options ``inner`` was built
    with (JSON-able), part of every key."""

    def __init__(
        self,
        inner: Model,
        cache_dir: str | Path,
        mode: CacheMode = "auto",
        *,
        settings: Mapping[str, Any] | None = None,
    ) -> None:
        if mode not in ("record", "replay", "auto"):
            raise ValueError(f"cache mode must be record, replay or auto, not {mode!r}")
        self.inner = inner
        self.cache_dir = Path(cache_dir)
        self.mode: CacheMode = mode
        self.settings = dict(settings or {})
        self.hits = 0
        self.misses = 0

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def context_limits(self) -> ContextLimits | None:
        """The inner model's: a request is fitted the same way whether it is replayed or sent."""
        return context_limits_of(self.inner)

    def _read(self, path: Path) -> ChatResponse | None:
        try:
            data = safejson.loads(path.read_bytes())
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            raise ModelError(f"{path}: unreadable cache entry: {exc}") from exc
        try:
            return ChatResponse.model_validate(data["response"])
        except (KeyError, ValueError) as exc:
            raise ModelError(f"{path}: invalid cache entry: {exc}") from exc

    def _write(self, path: Path, key: str, request: ChatRequest, response: ChatResponse) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        entry = {
            "format": _FORMAT,
            "key": key,
            "model": self.name,
            "settings": self.settings,
            "request": request.model_dump(mode="json"),
            "response": response.model_dump(mode="json"),
        }
        write_atomic(path, canonical_json(entry))

    def chat(self, request: ChatRequest) -> ChatResponse:
        key = cache_key(self.name, request, self.settings)
        path = self.cache_dir / key[:2] / f"{key}.json"
        if self.mode != "record":
            cached = self._read(path)
            if cached is not None:
                self.hits += 1
                return cached
            if self.mode == "replay":
                raise ModelError(
                    f"replay cache miss for {self.name}: no entry {key[:16]}... in "
                    f"{self.cache_dir} (record this run first, or use mode='auto')"
                )
        self.misses += 1
        response = self.inner.chat(request)
        self._write(path, key, request, response)
        return response
