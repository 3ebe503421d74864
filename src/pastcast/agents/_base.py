"""The agent contract and the agent registry, which rebuilds agents from the ``AgentSpec`` a run
log records (docs/agents.md, "The agent registry"); a registration may also declare its prompts,
how many model calls a step costs (``_calls``) and how earlier spellings are rewritten.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar, get_args

from pydantic import BaseModel

from pastcast.agents._calls import CallContext, CallEstimate, CallEstimator, unless_declared
from pastcast.agents._prompts import load_prompt
from pastcast.env import Episode
from pastcast.errors import FieldError
from pastcast.records import AgentRole, Forecast, Setting
from pastcast.registry import Entry, Registry
from pastcast.runlog import AgentSpec


class Agent(Protocol):
    """Produces a forecast for one episode, using only what the episode offers.

    A memory-on agent reads ``episode.notebook_in`` and sets ``episode.notebook_out``.
    """

    def forecast(self, episode: Episode) -> Forecast: ...


class RoundAgent(Agent, Protocol):
    """An agent that also forecasts a whole arena round: ``episodes`` are the round's markets
    (one episode each, one commit deadline), the forecasts in their order."""

    def forecast_round(self, episodes: Sequence[Episode]) -> tuple[Forecast, ...]: ...


agents: Registry[Agent] = Registry(
    "agent", supplied=frozenset({"setting"}), references=frozenset({"prompts", "calls", "upgrade"})
)
"""Every agent factory by name (entry-point group ``pastcast.agents``); the built-in agents are
registered by reference (``_builtin``), their prompts, estimates and upgrades with them."""

PromptIds = Sequence[str] | Callable[[AgentSpec], Sequence[str]]
"""The prompt ids (``name.vN``) an agent sends: fixed, or depending on its spec."""

ArgsUpgrade = Callable[[dict[str, Any]], dict[str, Any]]
"""Arguments of an earlier spelling rewritten as the factory takes them now (``ValueError``
naming the argument when both spellings give one setting)."""

F = TypeVar("F", bound=Callable[..., Agent])


@dataclass(frozen=True)
class AgentInfo:
    """A registered agent: its factory and what a run needs to know before building it."""

    name: str
    factory: Callable[..., Agent]
    description: str
    role: AgentRole = "agent"
    market_access: bool = False
    prompts: PromptIds = ()
    calls: CallEstimator = unless_declared
    """Model calls of one step (``pastcast plan`` prices them)."""
    isolated: bool = False
    """Its code runs in a sandboxed process (the runner then schedules it by cutoff)."""
    round_level: bool = False
    """It also forecasts a whole arena round in one conversation (``forecast_round`` over the
    round's episodes, one per market); an arena replay plays it round by round."""

    def prompt_ids(self, spec: AgentSpec) -> tuple[str, ...]:
        return tuple(self.prompts(spec) if callable(self.prompts) else self.prompts)


_INFO_META = ("role", "market_access", "prompts", "calls", "isolated", "round_level")


def register_agent(name: str, *, description: str | None = None, **meta: Any) -> Callable[[F], F]:
    """Register an agent factory under ``name``; ``meta`` as ``agent_meta`` takes it (the fields
    of ``AgentInfo``; docs/agents.md, "The agent registry").

    ``role="reference"`` marks baselines that are not forecasters in their own right (the market
    price); they are listed apart on leaderboards. ``upgrade`` rewrites arguments of an earlier
    spelling.
    """
    return agents.register(name, description=description, **agent_meta(name, **meta))


def agent_meta(
    name: str,
    *,
    role: AgentRole = "agent",
    market_access: bool = False,
    prompts: PromptIds | str = (),
    calls: CallEstimator | str | None = None,
    upgrade: ArgsUpgrade | str | None = None,
    isolated: bool = False,
    round_level: bool = False,
) -> dict[str, Any]:
    """The registry metadata of an agent (see ``register_agent``); ``prompts``, ``calls`` and
    ``upgrade`` may be references ``"package.module:attribute"`` (an agent registered by
    reference)."""
    if role not in get_args(AgentRole):
        raise FieldError("", f"agent {name!r}: role must be one of {get_args(AgentRole)}")
    meta: dict[str, Any] = {
        "role": role,
        "market_access": market_access,
        "prompts": prompts,
        "isolated": isolated,
        "round_level": round_level,
        "calls": calls,
        "upgrade": upgrade,
    }
    return {k: v for k, v in meta.items() if v is not None}  # a missing one: the default


def _info(entry: Entry[Agent]) -> AgentInfo:
    # A plugin registered through a bare entry point has no metadata: AgentInfo's defaults (a
    # forecaster without market access that names no prompt files).
    known = {k: entry.meta[k] for k in _INFO_META if k in entry.meta}
    return AgentInfo(entry.name, entry.factory, description=entry.description, **known)


def list_agents() -> tuple[AgentInfo, ...]:
    return tuple(_info(e) for e in agents.entries())


def _as_json(value: Any) -> Any:
    """Records given as arguments as the JSON objects a run log keeps: the fields set only, so
    a record changing a preset rebuilds as the same change."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", exclude_unset=True)
    if isinstance(value, dict):
        return {k: _as_json(v) for k, v in value.items()}
    return type(value)(_as_json(v) for v in value) if isinstance(value, list | tuple) else value


def _upgraded(name: str, args: dict[str, Any]) -> dict[str, Any]:
    upgrade = agents.get(name).meta.get("upgrade")
    if upgrade is None:
        return dict(args)
    try:
        return dict(upgrade(dict(args)))
    except (TypeError, ValueError) as exc:
        raise FieldError("", f"agent {name!r}: {exc}") from None


def _build_args(name: str, setting: Setting, args: dict[str, Any]) -> dict[str, Any]:
    """The factory's arguments, checked and converted: earlier spellings rewritten, and a
    factory with a ``setting`` parameter also gets the spec's setting (memory-on agents need to
    know it from the first step, before any notebook)."""
    out = _upgraded(name, args)
    if "setting" in agents.get(name).parameters():
        out.setdefault("setting", setting)
    return agents.checked_args(name, out)


def agent_spec(
    name: str, *, setting: Setting = "memory_free", label: str | None = None, **args: Any
) -> AgentSpec:
    """A spec for a registered agent; ``label`` names it in the run log (defaults to ``name``).

    The arguments are checked against the factory now (names and types), so a typo fails when
    the run is planned; records among them (a ``Decoding``, a ``TwoStageConfig``) are kept as
    the JSON objects of the fields they set.
    """
    info = _info(agents.get(name))
    given = _as_json(args)
    _build_args(name, setting, given)
    return AgentSpec(name=label or name, factory=name, args=given, role=info.role, setting=setting)


def agent_info(spec: AgentSpec) -> AgentInfo:
    return _info(agents.get(spec.factory))


def agent_args(spec: AgentSpec) -> dict[str, Any]:
    """The arguments the spec's factory is called with: earlier spellings rewritten, the
    factory's defaults filled in, values converted (what a prompt list or an estimate reads)."""
    checked = _build_args(spec.factory, spec.setting, spec.args)
    factory = agents.get(spec.factory).factory
    try:
        bound = inspect.signature(factory).bind_partial(**checked)
    except (TypeError, ValueError):
        return checked
    bound.apply_defaults()
    return dict(bound.arguments)


def build_agent(spec: AgentSpec) -> Agent:
    """Rebuild an agent from its spec (as recorded in a run log header); the arguments are
    checked against the factory's signature and annotations before it is called."""
    checked = _build_args(spec.factory, spec.setting, spec.args)
    return agents.get(spec.factory).factory(**checked)


def call_estimate(spec: AgentSpec, context: CallContext) -> CallEstimate:
    """The model calls one step of the agent costs, by its registration's estimator."""
    step = context.model_copy(update={"setting": spec.setting})
    return agent_info(spec).calls(agent_args(spec), step)


def prompts_for(specs: Iterable[AgentSpec]) -> dict[str, str]:
    """Every prompt file the given agents use, ``name.vN`` -> text (for the run-log header)."""
    ids = (pid for spec in specs for pid in agent_info(spec).prompt_ids(spec))
    return {pid: load_prompt(pid).text for pid in ids}
