"""The stdio transport: MCP's own, one JSON-RPC message per line on a pair of byte streams."""

from __future__ import annotations

from typing import IO

from pastcast.toolserver._jsonrpc import MAX_LINE, long_line_answer
from pastcast.toolserver._server import EpisodeServer

__all__ = ["serve_stdio"]


def serve_stdio(server: EpisodeServer, reader: IO[bytes], writer: IO[bytes]) -> None:
    """Answer each line of ``reader`` on ``writer`` until end of input or the forecast."""
    while not server.finished:
        line = reader.readline(MAX_LINE + 1)
        if not line:
            return
        if len(line) > MAX_LINE and not line.endswith(b"\n"):
            while line and not line.endswith(b"\n"):  # the rest of the long line goes unread
                line = reader.readline(MAX_LINE)
            answer = long_line_answer()
        elif not line.strip():
            continue
        else:
            answer = server.handle_line(line)
        if answer:
            writer.write(answer)
            writer.flush()
