"""Registration of the model-driven agents (with the prompts each sends) and their models.

Agent factories take JSON-able arguments only (they are recorded in the run log and rebuilt
from it): ``model`` is a provider spec for ``pastcast.models.resolve_model`` (``local:PATH.gguf``,
``openai:gpt-4o-mini``, ...), ``model_options`` its options. Models are shared by every agent
built with the same spec and options, so a run starts one local server, not one per chain.

Record/replay: ``cache_dir`` wraps the model in ``CachedModel`` (``cache_mode`` record, replay or
auto). In replay mode the provider is never built, so a recorded run replays with no server and
no network; the cache is keyed by the model spec string and its options, which are the same in
both modes, and by each request (generation options and rollout included).
"""

from __future__ import annotations

import json
import threading
from typing import Any

from pastcast.agents._answer import Decoding
from pastcast.agents._base import register_agent
from pastcast.agents._no_tools import NO_TOOLS_PROMPT, NoToolsAgent
from pastcast.agents._tool_agent import PROMPTS, ActionMode, ToolAgent
from pastcast.agents._two_stage import TWO_STAGE_PROMPTS, TwoStageAgent
from pastcast.models import CachedModel, CacheMode, ChatRequest, ChatResponse, Model, resolve_model
from pastcast.records import Setting
from pastcast.runlog import AgentSpec

__all__ = ["agent_model", "clear_models", "load_models"]


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

    def load(self) -> Model:
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
    key = json.dumps([model, options, cache_dir, cache_mode], sort_keys=True)
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


def _decoding(temperature: float | None, max_tokens: int | None, seed: int | None) -> Decoding:
    return Decoding(temperature=temperature, max_tokens=max_tokens, seed=seed)


def _tool_agent_prompts(spec: AgentSpec) -> tuple[str, ...]:
    """The tool agent's prompt: by action mode and memory; the no-tools prompt without tools."""
    if spec.setting == "no_tools":
        return (NO_TOOLS_PROMPT,)
    memory = spec.args.get("memory")
    on = bool(memory) if memory is not None else spec.setting == "memory_on"
    return (PROMPTS[(spec.args.get("action_mode", "json"), on)],)


@register_agent("no-tools", prompts=(NO_TOOLS_PROMPT,))
def no_tools(
    model: str,
    model_options: dict[str, Any] | None = None,
    constrained: bool = False,
    normalize_typography: bool = False,
    temperature: float | None = None,
    max_tokens: int | None = None,
    seed: int | None = None,
    cache_dir: str | None = None,
    cache_mode: CacheMode = "auto",
) -> NoToolsAgent:
    """One model call with the question only (zero-shot)."""
    return NoToolsAgent(
        agent_model(model, model_options, cache_dir, cache_mode),
        constrained=constrained,
        normalize_typography=normalize_typography,
        decoding=_decoding(temperature, max_tokens, seed),
    )


@register_agent("tool-agent", prompts=_tool_agent_prompts)
def tool_agent(
    model: str,
    model_options: dict[str, Any] | None = None,
    action_mode: ActionMode = "json",
    max_iterations: int | None = None,
    max_tool_calls: int | None = None,
    memory: bool | None = None,
    normalize_typography: bool = False,
    max_result_chars: int = 12_000,
    temperature: float | None = None,
    max_tokens: int | None = None,
    seed: int | None = None,
    cache_dir: str | None = None,
    cache_mode: CacheMode = "auto",
    setting: Setting = "memory_free",
) -> ToolAgent:
    """ReAct research agent (JSON actions or native tool calls); notebook under @memory_on."""
    return ToolAgent(
        agent_model(model, model_options, cache_dir, cache_mode),
        action_mode=action_mode,
        max_iterations=max_iterations,
        max_tool_calls=max_tool_calls,
        memory=memory if memory is not None else setting == "memory_on",
        normalize_typography=normalize_typography,
        max_result_chars=max_result_chars,
        decoding=_decoding(temperature, max_tokens, seed),
    )


# The same agent with the market price history tool (the market-access setting).
register_agent(
    "tool-agent-market",
    market_access=True,
    prompts=_tool_agent_prompts,
    description="The tool agent with the market price history tool (market-access setting).",
)(tool_agent)


@register_agent("two-stage", prompts=TWO_STAGE_PROMPTS)
def two_stage(
    model: str,
    model_options: dict[str, Any] | None = None,
    rounds: int = 3,
    seed_queries: int = 6,
    followup_queries: int = 4,
    top_k: int = 10,
    expand: int = 5,
    stop_confidence: float = 0.7,
    normalize_typography: bool = False,
    temperature: float | None = None,
    max_tokens: int | None = None,
    seed: int | None = None,
    cache_dir: str | None = None,
    cache_mode: CacheMode = "auto",
) -> TwoStageAgent:
    """Research rounds (queries, reading, reflection, confidence stop), report, then forecast."""
    return TwoStageAgent(
        agent_model(model, model_options, cache_dir, cache_mode),
        rounds=rounds,
        seed_queries=seed_queries,
        followup_queries=followup_queries,
        top_k=top_k,
        expand=expand,
        stop_confidence=stop_confidence,
        normalize_typography=normalize_typography,
        decoding=_decoding(temperature, max_tokens, seed),
    )
