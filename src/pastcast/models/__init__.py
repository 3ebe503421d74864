"""Models: the chat protocol and its providers."""

from pastcast.models._cache import CachedModel, CacheMode, cache_key
from pastcast.models._local import LocalLlamaServer, LocalModel, smollm2_path
from pastcast.models._openai import OpenAICompatibleModel
from pastcast.models._pricing import DEFAULT_PRICES, Price, PriceTable
from pastcast.models._protocol import ChatRequest, ChatResponse, Model, ModelError, ToolSpec
from pastcast.models._registry import (
    ModelSpec,
    known_providers,
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
    "LocalLlamaServer",
    "LocalModel",
    "Model",
    "ModelError",
    "ModelSpec",
    "OpenAICompatibleModel",
    "Price",
    "PriceTable",
    "ScriptedModel",
    "ToolSpec",
    "cache_key",
    "known_providers",
    "providers",
    "register_provider",
    "resolve_model",
    "smollm2_path",
]
