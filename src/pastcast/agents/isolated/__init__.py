"""Agents behind a process boundary: ``isolated`` runs a registered agent in a sandboxed process,
``external`` any program; both reach the world only through their episode's tool server."""

from pastcast.agents.isolated._agents import serve_in_sandbox
from pastcast.agents.isolated._child import child_main

__all__ = ["child_main", "serve_in_sandbox"]
