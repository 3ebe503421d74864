"""The agents that run behind a process boundary: ``isolated`` (a registered agent, built and run
inside the sandbox) and ``external`` (any program speaking the tool server's protocol).

Their ``forecast`` runs in the runner's process but only starts the sandboxed process and
answers it through the episode's tool server on its stdin/stdout (``serve_in_sandbox``; the
seccomp filter denies it sockets): the agent's own code never runs in the runner's process,
which is why ``isolated`` takes submitted code as ``plugin`` (a file or package bound into the
sandbox and imported there only) and reads nothing of it here.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pastcast.agents._base import agent_info, call_estimate
from pastcast.agents._calls import CallContext, CallEstimate, unless_declared
from pastcast.agents._llm_registry import agent_model
from pastcast.env import Episode
from pastcast.errors import FieldError
from pastcast.models import CacheMode, Model
from pastcast.records import Forecast, Setting
from pastcast.runlog import AgentSpec
from pastcast.sandbox import (
    Reply,
    SandboxResult,
    SandboxUnavailable,
    check_binds,
    program_binds,
    python_environment,
    run_sandboxed,
    sandbox_available,
    sandbox_interpreter,
)
from pastcast.toolserver import MAX_LINE, EpisodeServer, long_line_answer

_BOOT = (
    "import sys; sys.path[:0] = {path!r}; "
    "from pastcast.agents.isolated import child_main; sys.exit(child_main(sys.argv[1]))"
)
# Runs a script as __main__ with sys.argv as the script sees it (path entries first, if any).
_RUN_SCRIPT = (
    "import runpy, sys; sys.path[:0] = {path!r}; sys.argv = sys.argv[1:]; "
    "runpy.run_path(sys.argv[0], run_name='__main__')"
)
_PYTHONS = ("python", "python3")


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


def _require_sandbox() -> None:
    ok, why = sandbox_available()
    if not ok:
        raise SandboxUnavailable(f"isolated agents need the sandbox, which is unavailable: {why}")


def _host_path(path: str, what: str) -> str:
    full = os.path.abspath(os.path.expanduser(path))
    if not os.path.exists(full):
        raise ValueError(f"{what} {path!r}: no such file or directory")
    return full


@dataclass(frozen=True)
class SandboxedAgent:
    """An agent whose code runs as ``command`` in a sandboxed process (with the read-only
    ``binds``) that sees only what its episode's tool server serves; ``model``: the only one it
    may call through the server."""

    command: tuple[str, ...]
    binds: tuple[tuple[str, str], ...]
    model: Model | None
    timeout_s: float
    memory_mb: int

    def forecast(self, episode: Episode) -> Forecast:
        return serve_in_sandbox(
            episode,
            self.command,
            binds=self.binds,
            model=self.model,
            timeout_s=self.timeout_s,
            memory_mb=self.memory_mb,
        )


def _inner_prompts(spec: AgentSpec) -> tuple[str, ...]:
    """The wrapped agent's prompt files, for a built-in agent (a plugin's are its own: reading
    them would import its code here)."""
    args = dict(spec.args)
    inner = args.pop("agent", None)
    if not isinstance(inner, str) or args.pop("plugin", None) is not None:
        return ()
    for key in ("timeout_s", "memory_mb"):
        args.pop(key, None)
    inner_spec = AgentSpec(name=inner, factory=inner, args=args, setting=spec.setting)
    try:
        return agent_info(inner_spec).prompt_ids(inner_spec)
    except FieldError:
        return ()


def _inner_calls(args: Mapping[str, Any], context: CallContext) -> CallEstimate:
    """The wrapped agent's calls, for a built-in agent (a plugin's agent is not known here)."""
    inner, rest = args.get("agent"), dict(args.get("args") or {})
    if not isinstance(inner, str) or args.get("plugin") is not None:
        return unless_declared(rest, context)
    spec = AgentSpec(name=inner, factory=inner, args=rest, setting=context.setting)
    try:
        return call_estimate(spec, context)
    except FieldError:
        return unless_declared(rest, context)


def isolated(
    agent: str,
    plugin: str | None = None,
    timeout_s: float = 600.0,
    memory_mb: int = 4096,
    setting: Setting = "memory_free",
    **args: Any,
) -> SandboxedAgent:
    """Agent AGENT (with its other arguments) built and run in a sandboxed process that reaches
    only its episode's tool server; plugin=PATH: submitted code to import there first."""
    _require_sandbox()
    environment = python_environment()
    binds = list(environment.binds)
    if plugin is not None:
        plugin = _host_path(plugin, "plugin")
        check_binds([(plugin, plugin)])
        binds.append((plugin, plugin))
    spec = json.dumps({"agent": agent, "args": args, "setting": setting, "plugin": plugin})
    boot = _BOOT.format(path=list(environment.path))
    command = (sandbox_interpreter(), "-I", "-c", boot, spec)
    # The model the arguments name, as the model-driven agents take them: the only one its
    # process may call.
    model = None
    if isinstance(name := args.get("model"), str):
        options, cache = args.get("model_options"), args.get("cache_dir")
        model = agent_model(name, options, cache, args.get("cache_mode", "auto"))
    return SandboxedAgent(command, tuple(binds), model, timeout_s, memory_mb)


def external(
    command: list[str] | str,
    files: list[str] | None = None,
    packages: bool = False,
    model: str | None = None,
    model_options: dict[str, Any] | None = None,
    cache_dir: str | None = None,
    cache_mode: CacheMode = "auto",
    timeout_s: float = 600.0,
    memory_mb: int = 2048,
) -> SandboxedAgent:
    """A program of any language speaking the tool server's protocol on stdin/stdout, run in
    the sandbox; model=SPEC: the model it may call through the server."""
    _require_sandbox()
    given = shlex.split(command) if isinstance(command, str) else list(command)
    if not given:
        raise ValueError("external agent: argument 'command' is empty")
    program, *rest = given
    binds = [(p, p) for p in (_host_path(f, "file") for f in files or ())]
    path: list[str] = []
    if packages:
        env = python_environment()
        binds += env.binds
        path = list(env.path)
    if program in _PYTHONS and rest and not rest[0].startswith("-"):
        script = _host_path(rest[0], "script")
        binds.append((script, script))
        boot = _RUN_SCRIPT.format(path=path)
        argv = [sandbox_interpreter(), "-I", "-c", boot, script, *rest[1:]]
    elif program in _PYTHONS:
        argv = [sandbox_interpreter(), *rest]
    else:
        found = shutil.which(program)
        if found is None:
            raise ValueError(f"external agent: program {program!r} not found")
        binds += program_binds(found)
        argv = [os.path.realpath(found), *rest]
    check_binds(binds)
    served = None if model is None else agent_model(model, model_options, cache_dir, cache_mode)
    return SandboxedAgent(tuple(argv), tuple(dict.fromkeys(binds)), served, timeout_s, memory_mb)
