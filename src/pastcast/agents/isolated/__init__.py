"""Agents behind a process boundary: ``isolated`` runs a registered agent in a sandboxed process,
``external`` any program; both reach the world only through their episode's tool server."""

from pastcast.agents.isolated._child import child_main
from pastcast.agents.isolated._launch import serve_in_sandbox

__all__ = ["child_main", "serve_in_sandbox"]
