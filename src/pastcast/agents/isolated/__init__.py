"""Agents behind a process boundary: ``isolated`` runs a registered agent in a sandboxed process,
``external`` any program; both reach the world only through their episode's tool server."""

from pastcast.agents.isolated._agents import ExternalAgent, IsolatedAgent
from pastcast.agents.isolated._child import child_main, import_plugin
from pastcast.agents.isolated._launch import AgentProcessError, serve_in_sandbox

__all__ = [
    "AgentProcessError",
    "ExternalAgent",
    "IsolatedAgent",
    "child_main",
    "import_plugin",
    "serve_in_sandbox",
]
