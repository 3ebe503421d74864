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

import inspect
import threading
from functools import partial
from typing import Any, Literal

from pastcast.agents._answer import (
    AnswerForm,
    Decoding,
    MaxTokens,
    ParseFallback,
    StageSettings,
    TopP,
    stage_settings,
)
from pastcast.agents._base import agents, register_agent
from pastcast.agents._no_tools import NO_TOOLS_PROMPT, ZERO_SHOT_PROMPT, NoToolsAgent
from pastcast.agents._tool_agent import PROMPTS, ActionMode, ToolAgent
from pastcast.agents._two_stage import (
    TWO_STAGE_STAGES,
    TwoStageAgent,
    TwoStageConfig,
    TwoStageStage,
    two_stage_prompts,
)
from pastcast.models import (
    CachedModel,
    CacheMode,
    ChatRequest,
    ChatResponse,
    ContextLimits,
    Model,
    ReasoningEffort,
    context_limits_for,
    resolve_model,
)
from pastcast.records import Setting
from pastcast.runlog import AgentSpec
from pastcast.safejson import canonical_json

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

    @property
    def context_limits(self) -> ContextLimits | None:
        """Known from the spec and options, without starting the model (a replayed run fits
        its requests to the window exactly as the recorded run did)."""
        return context_limits_for(self._spec, self._options)

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
    key = canonical_json([model, options, cache_dir, cache_mode])
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


def _decoding(
    temperature: float | None,
    max_tokens: MaxTokens | None,
    seed: int | None,
    top_p: TopP | None,
    reasoning_effort: ReasoningEffort | None,
) -> Decoding:
    return Decoding(
        temperature=temperature,
        max_tokens=max_tokens,
        seed=seed,
        top_p=top_p,
        reasoning_effort=reasoning_effort,
    )


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
    max_tokens: MaxTokens | None = None,
    seed: int | None = None,
    top_p: TopP | None = None,
    reasoning_effort: ReasoningEffort | None = None,
    cache_dir: str | None = None,
    cache_mode: CacheMode = "auto",
) -> NoToolsAgent:
    """One model call with the question only (Forecast-Dojo's no-tools setting)."""
    return NoToolsAgent(
        agent_model(model, model_options, cache_dir, cache_mode),
        constrained=constrained,
        normalize_typography=normalize_typography,
        decoding=_decoding(temperature, max_tokens, seed, top_p, reasoning_effort),
    )


ZeroShotStage = Literal["forecast", "repair", "compact", "json_only"]

HINDCAST_RETRIES: dict[str, StageSettings] = {
    "repair": {"max_tokens": 1400},
    "compact": {"max_tokens": 2400},
    "json_only": {"max_tokens": 900},
}
"""Hindcast Table 4's forecast-retry budgets: the JSON-repair, compact and JSON-only passes."""


@register_agent("zero-shot", prompts=(ZERO_SHOT_PROMPT,))
def zero_shot(
    model: str,
    model_options: dict[str, Any] | None = None,
    constrained: bool = False,
    normalize_typography: bool = False,
    temperature: float | None = 0.1,
    max_tokens: MaxTokens | None = 4096,
    seed: int | None = None,
    top_p: TopP | None = 1.0,
    reasoning_effort: ReasoningEffort | None = None,
    parse_fallback: ParseFallback = "four_step",
    stages: dict[ZeroShotStage, StageSettings] | None = None,
    cache_dir: str | None = None,
    cache_mode: CacheMode = "auto",
) -> NoToolsAgent:
    """Hindcast's zero-shot baseline: its prompt and answer (choice, probabilities, confidence,
    reasoning), its settings by default (temperature 0.1, 4096 tokens, top-p 1, four-step parse
    fallback; stages=None: its retry budgets)."""
    return NoToolsAgent(
        agent_model(model, model_options, cache_dir, cache_mode),
        constrained=constrained,
        normalize_typography=normalize_typography,
        decoding=_decoding(temperature, max_tokens, seed, top_p, reasoning_effort),
        prompt=ZERO_SHOT_PROMPT,
        fallback=parse_fallback,
        stages=stage_settings(
            HINDCAST_RETRIES if stages is None else stages, ("forecast", *HINDCAST_RETRIES)
        ),
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
    max_tokens: MaxTokens | None = None,
    seed: int | None = None,
    top_p: TopP | None = None,
    reasoning_effort: ReasoningEffort | None = None,
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
        decoding=_decoding(temperature, max_tokens, seed, top_p, reasoning_effort),
    )


# The same agent with the market price history tool (the market-access setting).
register_agent(
    "tool-agent-market",
    market_access=True,
    prompts=_tool_agent_prompts,
    description="The tool agent with the market price history tool (market-access setting).",
)(tool_agent)


_CONFIG_ARGS = tuple(TwoStageConfig.model_fields)
_CONFIG_RENAMED = {"parse_fallback": "fallback"}


def _two_stage_config(args: dict[str, Any]) -> TwoStageConfig:
    """The agent's configuration from its factory's arguments."""
    fields = {_CONFIG_RENAMED.get(k, k): v for k, v in args.items()}
    return TwoStageConfig.model_validate({k: v for k, v in fields.items() if k in _CONFIG_ARGS})


def _two_stage_prompts(spec: AgentSpec) -> tuple[str, ...]:
    """The prompts of a two-stage spec: its arguments over its factory's defaults (a preset
    such as two-stage-hindcast has its own)."""
    bound = inspect.signature(agents.get(spec.factory).factory).bind_partial(**spec.args)
    bound.apply_defaults()
    return two_stage_prompts(_two_stage_config(dict(bound.arguments)))


@register_agent("two-stage", prompts=_two_stage_prompts)
def two_stage(
    model: str,
    model_options: dict[str, Any] | None = None,
    rounds: int = 3,
    seed_queries: int = 6,
    followup_queries: int = 4,
    top_k: int = 10,
    expand: int = 5,
    stop_confidence: float = 0.7,
    expand_threads: bool = False,
    thread_limit: int = 10,
    author_posts: int = 0,
    author_comments: int = 0,
    tally: bool = False,
    answer_form: AnswerForm = "probabilities",
    constrained: bool = False,
    parse_fallback: ParseFallback = "repair",
    max_evidence_chars: int = 12_000,
    doc_chars: int = 600,
    normalize_typography: bool = False,
    temperature: float | None = None,
    max_tokens: MaxTokens | None = None,
    seed: int | None = None,
    top_p: TopP | None = None,
    reasoning_effort: ReasoningEffort | None = None,
    stages: dict[TwoStageStage, StageSettings] | None = None,
    cache_dir: str | None = None,
    cache_mode: CacheMode = "auto",
) -> TwoStageAgent:
    """Research rounds (queries, expansion, reflection, confidence stop), report and optional
    tally, then forecast; per-stage request settings in stages."""
    args = dict(locals())
    return TwoStageAgent(
        agent_model(model, model_options, cache_dir, cache_mode),
        _two_stage_config(args),
        decoding=_decoding(temperature, max_tokens, seed, top_p, reasoning_effort),
        stages=stage_settings(stages, TWO_STAGE_STAGES),
    )


HINDCAST_TWO_STAGE: dict[str, Any] = {
    "rounds": 3,
    "seed_queries": 6,
    "followup_queries": 6,
    "top_k": 20,
    "expand": 20,
    "stop_confidence": 0.7,
    "expand_threads": True,
    "author_posts": 5,
    "author_comments": 5,
    "tally": True,
    "answer_form": "choice",
    "parse_fallback": "four_step",
    "temperature": 0.1,
    "top_p": 1.0,
    "stages": {
        "queries": {"temperature": 0.2, "max_tokens": 4096},
        "reflect": {"temperature": 0.3, "max_tokens": 4096},
        "report": {"temperature": 0.1, "max_tokens": 3500},
        "tally": {"temperature": 0.1, "max_tokens": 2200},
        "forecast": {"temperature": 0.1, "max_tokens": 3200},
        **HINDCAST_RETRIES,
    },
}
"""Hindcast's retrieval agent (section 5.2, appendix B.3): 3 rounds of 6 seed and up to 6
follow-up queries, top-20 hits, the 20 best expanded with full text, thread and the author's
last 5 posts and 5 comments, a 0.7 confidence stop, the tally, its answer object and four-step
parse fallback, top-p 1 and Table 4's temperature and token cap per call."""

register_agent(
    "two-stage-hindcast",
    prompts=_two_stage_prompts,
    description="The two-stage agent with Hindcast's settings as its defaults (any can be "
    "overridden).",
)(partial(two_stage, **HINDCAST_TWO_STAGE))
