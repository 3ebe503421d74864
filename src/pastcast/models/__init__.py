"""Models: the chat protocol and its providers."""

from pastcast.models._protocol import ChatRequest, ChatResponse, Model, ModelError, ToolSpec
from pastcast.models._scripted import ScriptedModel

__all__ = ["ChatRequest", "ChatResponse", "Model", "ModelError", "ScriptedModel", "ToolSpec"]
