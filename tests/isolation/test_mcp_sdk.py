"""The official MCP SDK connects to ``pastcast toolserver serve`` as to any MCP server: it
starts the command, negotiates, lists the step's tools, calls them and reads the episode."""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path

import anyio
import pytest

# Found, not imported: the SDK is imported by the test, so collecting this module stays cheap.
if importlib.util.find_spec("mcp") is None:
    pytest.skip("the 'isolation' extra (the MCP SDK) is not installed", allow_module_level=True)

SRC = str(Path(__file__).resolve().parents[2] / "src")


def test_the_sdk_client_uses_the_served_episode(tmp_path: Path) -> None:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    record = tmp_path / "record.json"
    params = StdioServerParameters(
        command=sys.executable,
        args=[
            "-c",
            "from pastcast.cli import main; main()",
            "toolserver",
            "serve",
            "--event",
            "world-001",
            "--index-dir",
            str(tmp_path / "index"),
            "--record",
            str(record),
        ],
        env={**os.environ, "PYTHONPATH": SRC},
    )

    async def session() -> tuple[object, list[str], str, str]:
        async with (
            stdio_client(params) as (read, write),
            ClientSession(read, write) as client,
        ):
            init = await client.initialize()
            tools = await client.list_tools()
            found = await client.call_tool("search", {"query": "presidential election"})
            episode = await client.read_resource("pastcast://episode")  # type: ignore[arg-type]
            text = found.content[0].text  # type: ignore[union-attr]
            return init, [t.name for t in tools.tools], text, episode.contents[0].text  # type: ignore[union-attr]

    init, names, found, episode = anyio.run(session)
    assert init.serverInfo.name == "pastcast-episode"  # type: ignore[attr-defined]
    assert names == ["search", "read"]
    assert json.loads(found) and json.loads(episode)["question"]["event_id"] == "world-001"
    calls = json.loads(record.read_text())["episode"]["tool_calls"]
    assert [c["name"] for c in calls] == ["search"] and calls[0]["result"] == found
