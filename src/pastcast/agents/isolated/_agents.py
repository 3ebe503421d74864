"""The agents that run behind a process boundary: ``isolated`` (a registered agent, built and run
inside the sandbox) and ``external`` (any program speaking the tool server's protocol).

Their ``forecast`` runs in the runner's process but only starts the sandboxed process and
answers it through the episode's tool server: the agent's own code never runs in the runner's
process, which is why ``isolated`` takes submitted code as ``plugin`` (a file or package bound
into the sandbox and imported there only) and reads nothing of it here.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
from collections.abc import Mapping
from typing import Any

from pastcast.agents._base import agent_info, call_estimate
from pastcast.agents._calls import CallContext, CallEstimate, unless_declared
from pastcast.agents._llm_registry import agent_model
from pastcast.agents.isolated._launch import serve_in_sandbox
from pastcast.env import Episode
from pastcast.errors import FieldError
from pastcast.models import CacheMode, Model
from pastcast.records import Forecast, Setting
from pastcast.runlog import AgentSpec
from pastcast.sandbox import (
    SandboxUnavailable,
    check_binds,
    program_binds,
    python_environment,
    sandbox_available,
    sandbox_interpreter,
)

__all__ = ["ExternalAgent", "IsolatedAgent"]

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


def _require_sandbox() -> None:
    ok, why = sandbox_available()
    if not ok:
        raise SandboxUnavailable(f"isolated agents need the sandbox, which is unavailable: {why}")


def _host_path(path: str, what: str) -> str:
    full = os.path.abspath(os.path.expanduser(path))
    if not os.path.exists(full):
        raise ValueError(f"{what} {path!r}: no such file or directory")
    return full


def _model(args: dict[str, Any]) -> Model | None:
    """The model an agent's arguments name (``model``, ``model_options``, ``cache_dir``,
    ``cache_mode``, as the model-driven agents take them): the only one its process may call."""
    spec = args.get("model")
    if not isinstance(spec, str):
        return None
    return agent_model(
        spec, args.get("model_options"), args.get("cache_dir"), args.get("cache_mode", "auto")
    )


class IsolatedAgent:
    """A registered agent run in a sandboxed process; it sees only what the tool server serves."""

    def __init__(
        self,
        agent: str,
        args: dict[str, Any],
        setting: Setting,
        plugin: str | None,
        timeout_s: float,
        memory_mb: int,
    ) -> None:
        _require_sandbox()
        self.environment = python_environment()
        self.plugin = None if plugin is None else _host_path(plugin, "plugin")
        if self.plugin is not None:
            check_binds([(self.plugin, self.plugin)])
        self.spec = json.dumps(
            {"agent": agent, "args": args, "setting": setting, "plugin": self.plugin}
        )
        self.model = _model(args)
        self.timeout_s = timeout_s
        self.memory_mb = memory_mb

    def forecast(self, episode: Episode) -> Forecast:
        binds = list(self.environment.binds)
        if self.plugin is not None:
            binds.append((self.plugin, self.plugin))
        boot = _BOOT.format(path=list(self.environment.path))
        return serve_in_sandbox(
            episode,
            [sandbox_interpreter(), "-I", "-c", boot, self.spec],
            binds=binds,
            model=self.model,
            timeout_s=self.timeout_s,
            memory_mb=self.memory_mb,
        )


class ExternalAgent:
    """A program speaking the tool server's protocol on stdin/stdout, run in the sandbox."""

    def __init__(
        self,
        command: list[str],
        files: list[str],
        packages: bool,
        model: Model | None,
        timeout_s: float,
        memory_mb: int,
    ) -> None:
        _require_sandbox()
        if not command:
            raise ValueError("external agent: argument 'command' is empty")
        binds = [(p, p) for p in (_host_path(f, "file") for f in files)]
        path: list[str] = []
        if packages:
            env = python_environment()
            binds += env.binds
            path = list(env.path)
        program, *rest = command
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
        self.command = argv
        self.binds = tuple(dict.fromkeys(binds))
        self.model = model
        self.timeout_s = timeout_s
        self.memory_mb = memory_mb

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
) -> IsolatedAgent:
    """Agent AGENT (with its other arguments) built and run in a sandboxed process that reaches
    only its episode's tool server; plugin=PATH: submitted code to import there first."""
    return IsolatedAgent(agent, args, setting, plugin, timeout_s, memory_mb)


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
) -> ExternalAgent:
    """A program of any language speaking the tool server's protocol on stdin/stdout, run in
    the sandbox; model=SPEC: the model it may call through the server."""
    argv = shlex.split(command) if isinstance(command, str) else list(command)
    served = None if model is None else agent_model(model, model_options, cache_dir, cache_mode)
    return ExternalAgent(argv, list(files or ()), packages, served, timeout_s, memory_mb)
