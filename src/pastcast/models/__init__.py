"""Models: the chat protocol and its providers."""

from pastcast.models._cache import CachedModel, CacheMode, cache_key
from pastcast.models._context import (
    ContextLimits,
    ContextOverflow,
    context_limits_of,
    fit_request,
    prompt_tokens,
)
from pastcast.models._local import LocalLlamaServer, LocalModel, smollm2_path
from pastcast.models._openai import OpenAICompatibleModel
from pastcast.models._packaged import model_dir, packaged_model_path, packaged_models
from pastcast.models._pricing import DEFAULT_PRICES, Price, PriceTable
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
    known_providers,
    provider_limits,
    providers,
    register_provider,
    resolve_model,
)
from pastcast.models._scripted import ScriptedModel

__all__ = [
    "DEFAULT_PRICES",
    "CacheMode",
    "CachedModel",
    "ChatRequest",
    "ChatResponse",
    "ContextLimits",
    "ContextOverflow",
    "LocalLlamaServer",
    "LocalModel",
    "Model",
    "ModelError",
    "ModelSpec",
    "OpenAICompatibleModel",
    "Price",
    "PriceTable",
    "ReasoningEffort",
    "ScriptedModel",
    "ToolSpec",
    "cache_key",
    "context_limits_of",
    "fit_request",
    "known_providers",
    "model_dir",
    "packaged_model_path",
    "packaged_models",
    "prompt_tokens",
    "provider_limits",
    "providers",
    "register_provider",
    "resolve_model",
    "smollm2_path",
]
