"""The episode tool server: one episode's tools, question and model access served over the Model
Context Protocol (JSON-RPC on stdio, or HTTP on the loopback interface), with the cutoff bound in
the server's episode; and the client side, an ``Episode`` whose calls are requests to it."""

from pastcast.toolserver._client import RemoteEpisode, RemoteToolbox
from pastcast.toolserver._http import HttpLimits, HttpToolServer
from pastcast.toolserver._jsonrpc import (
    BUDGET_EXHAUSTED,
    EPISODE_OVER,
    MAX_LINE,
    MODEL_FAILED,
    TOOL_REFUSED,
    Connection,
    RpcError,
    long_line_answer,
)
from pastcast.toolserver._server import EPISODE_URI, PROTOCOL_VERSIONS, EpisodeServer
from pastcast.toolserver._stdio import serve_stdio

__all__ = [
    "BUDGET_EXHAUSTED",
    "EPISODE_OVER",
    "EPISODE_URI",
    "MAX_LINE",
    "MODEL_FAILED",
    "PROTOCOL_VERSIONS",
    "TOOL_REFUSED",
    "Connection",
    "EpisodeServer",
    "HttpLimits",
    "HttpToolServer",
    "RemoteEpisode",
    "RemoteToolbox",
    "RpcError",
    "long_line_answer",
    "serve_stdio",
]
