"""The agent contract and the registry that rebuilds agents from their recorded specs."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from pastcast.env import Episode
from pastcast.records import AgentRole, Forecast, Setting
from pastcast.runlog import AgentSpec

__all__ = [
    "Agent",
    "AgentInfo",
    "agent_info",
    "agent_spec",
    "build_agent",
    "list_agents",
    "register_agent",
]


class Agent(Protocol):
    """Produces a forecast for one episode, using only what the episode offers.

    A memory-on agent reads ``episode.notebook_in`` and sets ``episode.notebook_out``.
    """

    def forecast(self, episode: Episode) -> Forecast: ...


@dataclass(frozen=True)
class AgentInfo:
    name: str
    factory: Callable[..., Agent]
    role: AgentRole
    market_access: bool
    description: str


_REGISTRY: dict[str, AgentInfo] = {}

F = TypeVar("F", bound=Callable[..., Agent])


def register_agent(
    name: str,
    *,
    role: AgentRole = "agent",
    market_access: bool = False,
    description: str | None = None,
) -> Callable[[F], F]:
    """Register an agent factory under ``name``.

    ``role="reference"`` marks baselines that are not forecasters in their own right (the market
    price); they are listed apart on leaderboards. ``market_access`` turns on the price tool.
    """

    def decorate(factory: F) -> F:
        if name in _REGISTRY:
            raise ValueError(f"agent {name!r} is already registered")
        doc = (factory.__doc__ or "").strip().splitlines()
        text = description if description is not None else (doc[0] if doc else "")
        _REGISTRY[name] = AgentInfo(name, factory, role, market_access, text)
        return factory

    return decorate


def list_agents() -> tuple[AgentInfo, ...]:
    return tuple(_REGISTRY[k] for k in sorted(_REGISTRY))


def _info(name: str) -> AgentInfo:
    try:
        return _REGISTRY[name]
    except KeyError:
        known = ", ".join(sorted(_REGISTRY))
        raise ValueError(f"unknown agent {name!r} (known: {known})") from None


def agent_spec(
    name: str, *, setting: Setting = "memory_free", label: str | None = None, **args: Any
) -> AgentSpec:
    """A spec for a registered agent; ``label`` names it in the run log (defaults to ``name``)."""
    info = _info(name)
    return AgentSpec(name=label or name, factory=name, args=args, role=info.role, setting=setting)


def agent_info(spec: AgentSpec) -> AgentInfo:
    return _info(spec.factory)


def build_agent(spec: AgentSpec) -> Agent:
    """Rebuild an agent from its spec (as recorded in a run log header).

    A factory with a ``setting`` parameter is also given the spec's setting (memory-on agents
    need to know it from the first step, before any notebook exists).
    """
    factory = _info(spec.factory).factory
    args = dict(spec.args)
    if "setting" in inspect.signature(factory).parameters:
        args.setdefault("setting", spec.setting)
    return factory(**args)
