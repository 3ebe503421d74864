"""The episode tool server: one episode's tools, question and model access served over the Model
Context Protocol (JSON-RPC on stdio, or HTTP on the loopback interface), with the cutoff bound in
the server's episode; and the client side, an ``Episode`` whose calls are requests to it."""

from pastcast.toolserver._client import RemoteEpisode
from pastcast.toolserver._http import HttpLimits, HttpToolServer
from pastcast.toolserver._jsonrpc import MAX_LINE, Connection, long_line_answer
from pastcast.toolserver._server import PROTOCOL_VERSIONS, EpisodeServer, serve_stdio

__all__ = [
    "MAX_LINE",
    "PROTOCOL_VERSIONS",
    "Connection",
    "EpisodeServer",
    "HttpLimits",
    "HttpToolServer",
    "RemoteEpisode",
    "long_line_answer",
    "serve_stdio",
]
