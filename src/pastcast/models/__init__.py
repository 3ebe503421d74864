"""Models: the chat protocol and its providers, provider errors and the run's call gate, prices and
knowledge cutoffs, context limits and packaged models.

The clients of the built-in providers (OpenAI-compatible, local llama.cpp servers, packaged
models) load when a model of theirs is first resolved (the providers are registered by
reference) or one of their names below is first used."""

from __future__ import annotations

from pastcast.lazy import lazy_exports
from pastcast.models._cache import CachedModel, CacheMode
from pastcast.models._context import ContextLimits, ContextOverflow, context_limits_of, fit_request
from pastcast.models._knowledge_cutoffs import (
    KnowledgeGap,
    MeasuredCutoff,
    after_knowledge_cutoff,
    knowledge_cutoff,
    knowledge_cutoff_source,
    knowledge_cutoffs,
    knowledge_gaps,
    load_knowledge_cutoffs,
    measured_cutoffs,
    register_knowledge_cutoff,
    remembered,
    save_measured_cutoff,
)
from pastcast.models._pricing import PriceTable, spec_model_name
from pastcast.models._protocol import (
    ChatRequest,
    ChatResponse,
    Model,
    ModelError,
    ReasoningEffort,
    ToolSpec,
)
from pastcast.models._registry import (
    ModelSpec,
    check_model_spec,
    context_limits_for,
    known_providers,
    providers,
    register_provider,
    resolve_model,
)
from pastcast.models._retry import CallGate, ProviderError, using_gate
from pastcast.models._scripted import ScriptedModel

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pastcast.models._local import LocalLlamaServer, LocalModel
    from pastcast.models._openai import OpenAICompatibleModel
    from pastcast.models._packaged import model_dir, packaged_models

__all__ = [
    "CacheMode",
    "CachedModel",
    "CallGate",
    "ChatRequest",
    "ChatResponse",
    "ContextLimits",
    "ContextOverflow",
    "KnowledgeGap",
    "LocalLlamaServer",
    "LocalModel",
    "MeasuredCutoff",
    "Model",
    "ModelError",
    "ModelSpec",
    "OpenAICompatibleModel",
    "PriceTable",
    "ProviderError",
    "ReasoningEffort",
    "ScriptedModel",
    "ToolSpec",
    "after_knowledge_cutoff",
    "check_model_spec",
    "context_limits_for",
    "context_limits_of",
    "fit_request",
    "knowledge_cutoff",
    "knowledge_cutoff_source",
    "knowledge_cutoffs",
    "knowledge_gaps",
    "known_providers",
    "load_knowledge_cutoffs",
    "measured_cutoffs",
    "model_dir",
    "packaged_models",
    "providers",
    "register_knowledge_cutoff",
    "register_provider",
    "remembered",
    "resolve_model",
    "save_measured_cutoff",
    "spec_model_name",
    "using_gate",
]

__getattr__, __dir__ = lazy_exports(__name__)
