"""JSON-RPC 2.0 as the Model Context Protocol frames it on stdio: one JSON object per line.

Shared by the server (answering lines) and the client (the agent's side in its sandbox). Error
codes beyond JSON-RPC's own are the episode's: a spent budget, a refused tool call, a failed
model call, an episode that is over.
"""

from __future__ import annotations

import json
from enum import IntEnum
from typing import IO, Any

MAX_LINE = 16 << 20
"""The longest message a server reads (bytes, on any transport); a longer line is answered with
a parse error and skipped, and the conversation goes on."""


class Code(IntEnum):
    """JSON-RPC's error codes and the episode's own."""

    PARSE_ERROR = -32700
    INVALID_REQUEST = -32600
    METHOD_NOT_FOUND = -32601
    INVALID_PARAMS = -32602
    INTERNAL_ERROR = -32603
    RESOURCE_NOT_FOUND = -32002  # MCP's code for an unknown resource
    BUDGET_EXHAUSTED = -32010
    TOOL_REFUSED = -32011
    MODEL_FAILED = -32012
    EPISODE_OVER = -32013


class RpcError(Exception):
    """A JSON-RPC error: raised by a handler to answer with it, or by the client on receiving
    one."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


def encode(message: dict[str, Any]) -> bytes:
    """One message as a line. ASCII escapes keep it free of raw U+2028 and similar characters,
    which some readers split lines on."""
    return json.dumps(message, ensure_ascii=True, separators=(",", ":")).encode("ascii") + b"\n"


def error_response(request_id: Any, error: RpcError) -> dict[str, Any]:
    body: dict[str, Any] = {"code": error.code, "message": error.message}
    if error.data is not None:
        body["data"] = error.data
    return {"jsonrpc": "2.0", "id": request_id, "error": body}


def long_line_answer() -> bytes:
    """The answer to a line longer than ``MAX_LINE`` (its id was never read)."""
    error = RpcError(Code.PARSE_ERROR, f"message longer than {MAX_LINE} bytes; skipped")
    return encode(error_response(None, error))


class Connection:
    """The client end: requests written to ``writer``, answers read from ``reader`` in turn
    (one request at a time, as a synchronous agent makes them)."""

    def __init__(self, reader: IO[bytes], writer: IO[bytes]) -> None:
        self._reader = reader
        self._writer = writer
        self._next_id = 0

    def _send(self, message: dict[str, Any], params: dict[str, Any] | None) -> None:
        self._writer.write(encode(message if params is None else {**message, "params": params}))
        self._writer.flush()

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        self._send({"jsonrpc": "2.0", "method": method}, params)

    def request(self, method: str, params: dict[str, Any] | None = None) -> Any:
        """The result of ``method``; ``RpcError`` when the server answers with an error, or
        ``ConnectionError`` when it has gone."""
        self._next_id += 1
        self._send({"jsonrpc": "2.0", "id": self._next_id, "method": method}, params)
        while True:
            raw = self._reader.readline()
            if not raw:
                raise ConnectionError(f"{method}: the tool server closed the connection")
            answer = json.loads(raw)
            if isinstance(answer, dict) and answer.get("id") == self._next_id:
                break  # anything else (a notification from the server) is not ours to read
        if "error" in answer:
            err = answer["error"]
            code = int(err.get("code", Code.INTERNAL_ERROR))
            raise RpcError(code, str(err.get("message")), err.get("data"))
        return answer.get("result")
