"""The agent contract and the agent registry, which rebuilds agents from their recorded specs.

Agents are registered on ``agents``, a ``pastcast.registry.Registry`` whose entry-point group is
``pastcast.agents``; the functions below are its agent-specific face: the run log records an
``AgentSpec`` (registry name, arguments, role, setting), and ``build_agent`` rebuilds from it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar, get_args

from pastcast.agents._prompts import load_prompt
from pastcast.env import Episode
from pastcast.records import AgentRole, Forecast, Setting
from pastcast.registry import Entry, Registry, RegistryError
from pastcast.runlog import AgentSpec

__all__ = [
    "Agent",
    "AgentInfo",
    "PromptIds",
    "agent_info",
    "agent_spec",
    "agents",
    "build_agent",
    "list_agents",
    "prompts_for",
    "register_agent",
]


class Agent(Protocol):
    """Produces a forecast for one episode, using only what the episode offers.

    A memory-on agent reads ``episode.notebook_in`` and sets ``episode.notebook_out``.
    """

    def forecast(self, episode: Episode) -> Forecast: ...


agents: Registry[Agent] = Registry("agent")
"""Every agent factory by name (entry-point group ``pastcast.agents``)."""

PromptIds = Sequence[str] | Callable[[AgentSpec], Sequence[str]]
"""The prompt ids (``name.vN``) an agent sends: fixed, or depending on its spec."""

F = TypeVar("F", bound=Callable[..., Agent])


@dataclass(frozen=True)
class AgentInfo:
    """A registered agent: its factory and what a run needs to know before building it."""

    name: str
    factory: Callable[..., Agent]
    role: AgentRole
    market_access: bool
    description: str
    prompts: PromptIds = ()
    isolated: bool = False
    """Its code runs in a sandboxed process (the runner then schedules it by cutoff)."""

    def prompt_ids(self, spec: AgentSpec) -> tuple[str, ...]:
        return tuple(self.prompts(spec) if callable(self.prompts) else self.prompts)


def register_agent(
    name: str,
    *,
    role: AgentRole = "agent",
    market_access: bool = False,
    description: str | None = None,
    prompts: PromptIds = (),
    isolated: bool = False,
) -> Callable[[F], F]:
    """Register an agent factory under ``name``.

    ``role="reference"`` marks baselines that are not forecasters in their own right (the market
    price); they are listed apart on leaderboards. ``market_access`` turns on the price tool.
    ``prompts`` names the prompt files the agent sends, so the run-log header records them.
    ``isolated`` says its code runs sandboxed, apart from the run (docs/isolation.md).
    """
    if role not in get_args(AgentRole):
        raise RegistryError(f"agent {name!r}: role must be one of {get_args(AgentRole)}")
    return agents.register(
        name,
        description=description,
        role=role,
        market_access=market_access,
        prompts=prompts,
        isolated=isolated,
    )


def _info(entry: Entry[Agent]) -> AgentInfo:
    # A plugin registered through a bare entry point has no metadata: a forecaster without
    # market access that names no prompt files.
    meta = entry.meta
    return AgentInfo(
        name=entry.name,
        factory=entry.factory,
        role=meta.get("role", "agent"),
        market_access=bool(meta.get("market_access", False)),
        description=entry.description,
        prompts=meta.get("prompts", ()),
        isolated=bool(meta.get("isolated", False)),
    )


def list_agents() -> tuple[AgentInfo, ...]:
    return tuple(_info(e) for e in agents.entries())


def _build_args(name: str, setting: Setting, args: dict[str, Any]) -> dict[str, Any]:
    """The factory's arguments: a factory with a ``setting`` parameter also gets the spec's
    setting (memory-on agents need to know it from the first step, before any notebook)."""
    out = dict(args)
    if "setting" in agents.get(name).parameters():
        out.setdefault("setting", setting)
    agents.check_args(name, out)
    return out


def agent_spec(
    name: str, *, setting: Setting = "memory_free", label: str | None = None, **args: Any
) -> AgentSpec:
    """A spec for a registered agent; ``label`` names it in the run log (defaults to ``name``).

    The arguments are checked against the factory now, so a typo fails when the run is planned.
    """
    info = _info(agents.get(name))
    _build_args(name, setting, args)
    return AgentSpec(name=label or name, factory=name, args=args, role=info.role, setting=setting)


def agent_info(spec: AgentSpec) -> AgentInfo:
    return _info(agents.get(spec.factory))


def build_agent(spec: AgentSpec) -> Agent:
    """Rebuild an agent from its spec (as recorded in a run log header); the arguments are
    checked against the factory's signature before it is called."""
    return agents.build(spec.factory, **_build_args(spec.factory, spec.setting, spec.args))


def prompts_for(specs: Iterable[AgentSpec]) -> dict[str, str]:
    """Every prompt file the given agents use, ``name.vN`` -> text (for the run-log header)."""
    out: dict[str, str] = {}
    for spec in specs:
        for pid in agent_info(spec).prompt_ids(spec):
            out[pid] = load_prompt(pid).text
    return out
