"""Models: the chat protocol and its providers, retries and the run's call gate, prices and
knowledge cutoffs, context limits and packaged models.

The clients of the built-in providers (OpenAI-compatible, local llama.cpp servers, packaged
models) load when a model of theirs is first resolved (the providers are registered by
reference) or one of their names below is first used."""

from __future__ import annotations

from pastcast.lazy import lazy_exports
from pastcast.models._cache import CachedModel, CacheMode, cache_key
from pastcast.models._context import (
    ContextLimits,
    ContextOverflow,
    context_limits_of,
    fit_request,
    prompt_tokens,
)
from pastcast.models._knowledge_cutoffs import (
    MEASURED_CUTOFFS_ENV,
    KnowledgeCutoffFilter,
    KnowledgeGap,
    MeasuredCutoff,
    after_knowledge_cutoff,
    knowledge_cutoff,
    knowledge_cutoff_source,
    knowledge_cutoffs,
    knowledge_gaps,
    load_knowledge_cutoffs,
    measured_cutoffs,
    measured_cutoffs_file,
    register_knowledge_cutoff,
    remembered,
    save_measured_cutoff,
)
from pastcast.models._pricing import (
    DEFAULT_PRICES,
    Price,
    PriceTable,
    longest_prefix,
    spec_model_name,
)
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
from pastcast.models._retry import (
    TRANSIENT_KINDS,
    CallGate,
    FailureKind,
    ProviderError,
    RetryPolicy,
    call_with_retries,
    current_gate,
    retry_after_seconds,
    using_gate,
)
from pastcast.models._scripted import ScriptedModel

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pastcast.models._local import LocalLlamaServer, LocalModel, smollm2_path
    from pastcast.models._openai import OpenAICompatibleModel
    from pastcast.models._packaged import model_dir, packaged_model_path, packaged_models

__all__ = [
    "DEFAULT_PRICES",
    "MEASURED_CUTOFFS_ENV",
    "TRANSIENT_KINDS",
    "CacheMode",
    "CachedModel",
    "CallGate",
    "ChatRequest",
    "ChatResponse",
    "ContextLimits",
    "ContextOverflow",
    "FailureKind",
    "KnowledgeCutoffFilter",
    "KnowledgeGap",
    "LocalLlamaServer",
    "LocalModel",
    "MeasuredCutoff",
    "Model",
    "ModelError",
    "ModelSpec",
    "OpenAICompatibleModel",
    "Price",
    "PriceTable",
    "ProviderError",
    "ReasoningEffort",
    "RetryPolicy",
    "ScriptedModel",
    "ToolSpec",
    "after_knowledge_cutoff",
    "cache_key",
    "call_with_retries",
    "check_model_spec",
    "context_limits_for",
    "context_limits_of",
    "current_gate",
    "fit_request",
    "knowledge_cutoff",
    "knowledge_cutoff_source",
    "knowledge_cutoffs",
    "knowledge_gaps",
    "known_providers",
    "load_knowledge_cutoffs",
    "longest_prefix",
    "measured_cutoffs",
    "measured_cutoffs_file",
    "model_dir",
    "packaged_model_path",
    "packaged_models",
    "prompt_tokens",
    "providers",
    "register_knowledge_cutoff",
    "register_provider",
    "remembered",
    "resolve_model",
    "retry_after_seconds",
    "save_measured_cutoff",
    "smollm2_path",
    "spec_model_name",
    "using_gate",
]

_WHERE: dict[str, str] = {
    "LocalLlamaServer": "pastcast.models._local",
    "LocalModel": "pastcast.models._local",
    "OpenAICompatibleModel": "pastcast.models._openai",
    "model_dir": "pastcast.models._packaged",
    "packaged_model_path": "pastcast.models._packaged",
    "packaged_models": "pastcast.models._packaged",
    "smollm2_path": "pastcast.models._local",
}

__getattr__, __dir__ = lazy_exports(__name__, _WHERE)
