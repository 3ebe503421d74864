"""Models: the chat protocol and its providers."""

from pastcast.models._openai import OpenAICompatibleModel
from pastcast.models._pricing import DEFAULT_PRICES, Price, PriceTable
from pastcast.models._protocol import ChatRequest, ChatResponse, Model, ModelError, ToolSpec
from pastcast.models._scripted import ScriptedModel

__all__ = [
    "DEFAULT_PRICES",
    "ChatRequest",
    "ChatResponse",
    "Model",
    "ModelError",
    "OpenAICompatibleModel",
    "Price",
    "PriceTable",
    "ScriptedModel",
    "ToolSpec",
]
