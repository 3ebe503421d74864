"""The built-in agents, registered by reference: building, describing or pricing one imports its
module, so importing ``pastcast.agents`` imports none of them (nor the sandbox and tool server
behind the isolated agents). Their prompts, call estimates and argument upgrades are references
into the same modules, read when first asked for.

The offline ``lexical`` model provider (``lexical:NAME``) is registered here too: it lives with
the agents whose stages it answers.
"""

from __future__ import annotations

from typing import Any

from pastcast.agents._base import agent_meta, agents
from pastcast.models import providers

_BASELINES = "pastcast.agents._baselines"
_MODEL_AGENTS = "pastcast.agents._model_agents"
_ISOLATED = "pastcast.agents.isolated._agents"
_MARKET_TOOL = "with the market price history tool (market-access setting)."


def _add(name: str, factory: str, *, description: str | None = None, **meta: Any) -> None:
    agents.add(name, factory, description=description, **agent_meta(name, **meta))


def _pair(name: str, factory: str, **meta: Any) -> None:
    """An agent and its twin with market access, ``NAME-market``."""
    for market in (False, True):
        about = f"The {name.replace('-', ' ')} agent {_MARKET_TOOL}" if market else None
        _add(name + "-market" * market, factory, market_access=market, description=about, **meta)


_add("uniform", f"{_BASELINES}:UniformAgent")
_add(
    "random",
    f"{_BASELINES}:RandomAgent",
    description="Uniform random probabilities (YES ~ U[0, 1]; expected Brier 1/3).",
)
_add("market", f"{_BASELINES}:MarketAgent", role="reference", market_access=True)
_add("base-rate", f"{_BASELINES}:BaseRateAgent")
_add("heuristic", "pastcast.agents._heuristic:HeuristicResearchAgent")

_add(
    "no-tools",
    f"{_MODEL_AGENTS}:no_tools",
    prompts=f"{_MODEL_AGENTS}:NO_TOOLS_PROMPTS",
    calls="pastcast.agents._calls:one_call",
    upgrade=f"{_MODEL_AGENTS}:_flat_decoding",
)
_add(
    "zero-shot",
    f"{_MODEL_AGENTS}:zero_shot",
    prompts=f"{_MODEL_AGENTS}:ZERO_SHOT_PROMPTS",
    calls=f"{_MODEL_AGENTS}:_zero_shot_calls",
    upgrade=f"{_MODEL_AGENTS}:_flat_decoding",
)
_pair(
    "tool-agent",
    f"{_MODEL_AGENTS}:tool_agent",
    prompts=f"{_MODEL_AGENTS}:_tool_agent_prompts",
    calls=f"{_MODEL_AGENTS}:_tool_agent_calls",
    upgrade=f"{_MODEL_AGENTS}:_flat_decoding",
)
_add(
    "arena-benchmark",
    f"{_MODEL_AGENTS}:arena_benchmark",
    market_access=True,
    prompts=f"{_MODEL_AGENTS}:ROUND_PROMPTS",
    calls=f"{_MODEL_AGENTS}:_round_calls",
    upgrade=f"{_MODEL_AGENTS}:_flat_decoding",
    round_level=True,
)
_add(
    "two-stage",
    f"{_MODEL_AGENTS}:two_stage",
    prompts=f"{_MODEL_AGENTS}:DEFAULT_TWO_STAGE.prompts",
    calls=f"{_MODEL_AGENTS}:DEFAULT_TWO_STAGE.calls",
    upgrade=f"{_MODEL_AGENTS}:_flat_two_stage",
)
_add(
    "two-stage-hindcast",
    f"{_MODEL_AGENTS}:two_stage_hindcast",
    prompts=f"{_MODEL_AGENTS}:HINDCAST_TWO_STAGE.prompts",
    calls=f"{_MODEL_AGENTS}:HINDCAST_TWO_STAGE.calls",
    upgrade=f"{_MODEL_AGENTS}:_flat_two_stage",
    description="The two-stage agent with Hindcast's settings as its defaults (config, "
    "decoding and stages are set over them).",
)

_pair(
    "isolated",
    f"{_ISOLATED}:isolated",
    isolated=True,
    prompts=f"{_ISOLATED}:_inner_prompts",
    calls=f"{_ISOLATED}:_inner_calls",
)
_pair("external", f"{_ISOLATED}:external", isolated=True)

providers.add("lexical", "pastcast.agents._lexical:_lexical")
