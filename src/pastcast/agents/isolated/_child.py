"""Inside the agent's sandbox: connect to the tool server on stdin/stdout, build the agent from
its spec, run it on a ``RemoteEpisode`` and send the forecast.

The protocol owns the process's original stdin and stdout; the agent's own prints go to stderr
(which the runner keeps the tail of) and its stdin reads nothing, so agent code cannot corrupt
the conversation by printing.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import sys
from pathlib import Path
from typing import Any

from pastcast.agents._base import agent_spec, build_agent
from pastcast.env import BudgetExceeded
from pastcast.toolserver import PROTOCOL_VERSIONS, Connection, RemoteEpisode

EXIT_BUDGET = 3
"""Exit status when a budget ended the episode (the server knows which; nothing is sent)."""


def import_plugin(path: str) -> None:
    """Import a submitted agent's code (a ``.py`` file or a package directory), whose import
    registers its agents."""
    p = Path(path)
    if p.is_dir():
        sys.path.insert(0, str(p.parent))
        importlib.import_module(p.name)
        return
    spec = importlib.util.spec_from_file_location(p.stem, p)
    if spec is None or spec.loader is None:
        raise ImportError(f"plugin {path}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[p.stem] = module
    spec.loader.exec_module(module)


def _protocol_streams() -> tuple[Any, Any]:
    """The original stdin/stdout for the protocol; fd 0 becomes /dev/null, fd 1 stderr."""
    reader = os.fdopen(os.dup(0), "rb")
    writer = os.fdopen(os.dup(1), "wb")
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    sys.stdout.flush()
    os.dup2(2, 1)
    return reader, writer


def child_main(spec_json: str) -> int:
    """Run the agent described by ``spec_json`` (``agent``, ``args``, ``setting``, ``plugin``)
    against the tool server on this process's stdin/stdout; the exit status."""
    reader, writer = _protocol_streams()
    spec = json.loads(spec_json)
    if spec.get("plugin"):
        import_plugin(spec["plugin"])
    conn = Connection(reader, writer)
    conn.request(
        "initialize",
        {
            "protocolVersion": PROTOCOL_VERSIONS[0],
            "capabilities": {},
            "clientInfo": {"name": "pastcast-isolated-agent", "version": "1"},
        },
    )
    conn.notify("notifications/initialized")
    episode = RemoteEpisode(conn)
    agent = build_agent(agent_spec(spec["agent"], setting=spec["setting"], **spec["args"]))
    try:
        forecast = agent.forecast(episode)
    except BudgetExceeded:
        return EXIT_BUDGET
    episode.submit(forecast)
    return 0
