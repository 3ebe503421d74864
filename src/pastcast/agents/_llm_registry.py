"""The models of the model-driven agents (registered in ``_model_agents``): one shared model per
spec and options (a run starts one local server, not one per chain), built lazily, optionally
behind the record/replay cache (``cache_dir``, ``cache_mode``; docs/models.md, "Record /
replay"). In replay mode the provider is never built, so a recorded run replays with no server
and no network.
"""

from __future__ import annotations

import threading
from typing import Any

from pastcast.models import (
    CachedModel,
    CacheMode,
    ChatRequest,
    ChatResponse,
    ContextLimits,
    Model,
    context_limits_for,
    resolve_model,
)
from pastcast.safejson import canonical_json


class _Lazy:
    """A provider model built on its first call; its name is the spec string."""

    def __init__(self, spec: str, options: dict[str, Any]) -> None:
        self._spec = spec
        self._options = options
        self._inner: Model | None = None
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return self._spec

    @property
    def context_limits(self) -> ContextLimits | None:
        """Known from the spec and options, without starting the model (a replayed run fits
        its requests to the window exactly as the recorded run did)."""
        return context_limits_for(self._spec, self._options)

    def load(self) -> Model:
        if self._inner is not None:  # built: read without the lock at every call
            return self._inner
        with self._lock:
            if self._inner is None:
                self._inner = resolve_model(self._spec, **self._options)
            return self._inner

    def chat(self, request: ChatRequest) -> ChatResponse:
        return self.load().chat(request)

    def close(self) -> None:
        close = getattr(self._inner, "close", None)
        if callable(close):
            close()


_MODELS: dict[str, Model] = {}
_MODELS_LOCK = threading.Lock()


def agent_model(
    model: str,
    model_options: dict[str, Any] | None = None,
    cache_dir: str | None = None,
    cache_mode: CacheMode = "auto",
) -> Model:
    """The shared model for a spec (built lazily, optionally behind the record/replay cache)."""
    options = dict(model_options or {})
    key = canonical_json([model, options, cache_dir, cache_mode])
    if (known := _MODELS.get(key)) is not None:  # read without the lock: every step asks
        return known
    with _MODELS_LOCK:
        found = _MODELS.get(key)
        if found is None:
            found = _Lazy(model, options)
            if cache_dir is not None:
                found = CachedModel(found, cache_dir, cache_mode, settings=options)
            _MODELS[key] = found
        return found


def load_models() -> None:
    """Build every shared model not built yet, so that one which cannot be loaded (a missing
    file, an unknown script, a server that does not start) fails before a run starts rather
    than as thousands of unusable forecasts. A cache in replay mode builds no provider, so it
    is left alone. Raises ``ValueError`` naming the model spec."""
    with _MODELS_LOCK:
        models = list(_MODELS.values())
    for m in models:
        if isinstance(m, CachedModel) and m.mode == "replay":
            continue
        inner = m.inner if isinstance(m, CachedModel) else m
        if isinstance(inner, _Lazy):
            try:
                inner.load()
            except Exception as exc:  # any provider's failure: reported, not raised through
                first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
                raise ValueError(f"model {inner.name!r} cannot be loaded: {first}") from exc


def clear_models() -> None:
    """Stop and forget every shared model (local servers are stopped)."""
    with _MODELS_LOCK:
        models = list(_MODELS.values())
        _MODELS.clear()
    for m in models:
        inner = m.inner if isinstance(m, CachedModel) else m
        if isinstance(inner, _Lazy):
            inner.close()
