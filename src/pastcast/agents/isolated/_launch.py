"""Serve an episode to a sandboxed agent process and take its forecast.

The process gets the episode through an ``EpisodeServer`` answering on its stdin/stdout; the
seccomp filter denies it sockets, so those pipes are its only way out of the sandbox.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pastcast.env import Episode
from pastcast.models import Model
from pastcast.records import Forecast
from pastcast.sandbox import Reply, SandboxResult, run_sandboxed
from pastcast.toolserver import MAX_LINE, EpisodeServer, long_line_answer

__all__ = ["AgentProcessError", "serve_in_sandbox"]


class AgentProcessError(RuntimeError):
    """The agent's process ended without a forecast (crashed, stopped at a limit, gave up)."""


def _why(result: SandboxResult) -> str:
    if result.error:
        return result.error
    if result.killed_reason:
        how = f"stopped at its {result.killed_reason.replace('_', ' ')}"
    else:
        how = f"exited with status {result.exit_code}"
    lines = [ln.strip() for ln in result.stderr.splitlines() if ln.strip()]
    last = f": {lines[-1][:300]}" if lines else ""
    return f"the agent process {how} without a forecast{last}"


def serve_in_sandbox(
    episode: Episode,
    command: Sequence[str],
    *,
    binds: Sequence[tuple[str, str]] = (),
    model: Model | None = None,
    timeout_s: float = 600.0,
    memory_mb: int = 2048,
    env: Mapping[str, str] | None = None,
) -> Forecast:
    """Run ``command`` in the sandbox as the agent of ``episode``; its forecast.

    Raises the episode's ``BudgetExceeded`` when a budget ended it, ``AgentProcessError`` when
    the process ended without a forecast (its last stderr line says why).
    """
    server = EpisodeServer(episode, model)

    def on_line(line: bytes) -> Reply:
        answer = server.handle_line(line) if line.strip() else b""
        return Reply(answer, done=server.finished)

    result = run_sandboxed(
        command,
        on_line=on_line,
        binds=binds,
        timeout_s=timeout_s,
        memory_mb=memory_mb,
        env=env,
        max_line=MAX_LINE,
        on_long_line=lambda _: Reply(long_line_answer()),  # skipped; the conversation goes on
    )
    forecast = server.outcome()
    if forecast is None:
        raise AgentProcessError(_why(result))
    return forecast
