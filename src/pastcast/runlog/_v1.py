"""Schema-1 run logs, read as schema 2: the header was the first line of the step file, and
records carried a ``kind``. Tool results and arguments were JSON values; the records take them
as they are and keep them as text (``ToolCall``), and tool calls are numbered in their order (a
schema-1 episode recorded no model calls)."""

from __future__ import annotations

from typing import Any

V1 = 1


def v1_header(obj: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in obj.items() if k != "kind"}


def v1_step(obj: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in obj.items() if k != "kind"}
    episode = out.get("episode")
    if isinstance(episode, dict) and isinstance(episode.get("tool_calls"), list):
        calls = episode["tool_calls"]
        numbered = [{**c, "seq": i} if isinstance(c, dict) else c for i, c in enumerate(calls)]
        out["episode"] = {**episode, "tool_calls": numbered}
    return out
