"""Agents: the contract, the registry (``agents``), baselines, the heuristic research agent and the
model-driven agents (no-tools, tool agent, two-stage), their request settings (``Decoding``) and
call estimates (``CallEstimate``), and agents behind a process boundary (``isolated``,
``external``: ``pastcast.agents.isolated``).

The package imports the contract, the registry and its helpers; each agent's module is imported
when the agent is first built (the built-in agents are registered by reference, ``_builtin``) or
when one of its names below is first used."""

from __future__ import annotations

from pastcast.agents import _builtin  # noqa: F401  (registers the built-in agents)
from pastcast.agents._answer import Decoding, parse_forecast, reparse_forecast
from pastcast.agents._base import (
    Agent,
    AgentInfo,
    RoundAgent,
    agent_args,
    agent_info,
    agent_spec,
    agents,
    build_agent,
    call_estimate,
    list_agents,
    prompts_for,
    register_agent,
)
from pastcast.agents._calls import CallContext, CallEstimate, CallEstimator
from pastcast.agents._llm_registry import agent_model, clear_models, load_models
from pastcast.agents._prompts import list_prompts, load_prompt, prompt_registry
from pastcast.lazy import lazy_exports

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pastcast.agents._baselines import RandomAgent, random_draws
    from pastcast.agents._model_agents import HINDCAST_TWO_STAGE
    from pastcast.agents._no_tools import NoToolsAgent
    from pastcast.agents._notebook import check_notebook, parse_notebook
    from pastcast.agents._round_agent import RoundBenchmarkAgent
    from pastcast.agents._tool_agent import (
        ACTION_SCHEMA,
        ToolAgent,
        action_schema,
        action_template,
        research_prompt,
    )
    from pastcast.agents._two_stage import TwoStageConfig

__all__ = [
    "ACTION_SCHEMA",
    "HINDCAST_TWO_STAGE",
    "Agent",
    "AgentInfo",
    "CallContext",
    "CallEstimate",
    "CallEstimator",
    "Decoding",
    "NoToolsAgent",
    "RandomAgent",
    "RoundAgent",
    "RoundBenchmarkAgent",
    "ToolAgent",
    "TwoStageConfig",
    "action_schema",
    "action_template",
    "agent_args",
    "agent_info",
    "agent_model",
    "agent_spec",
    "agents",
    "build_agent",
    "call_estimate",
    "check_notebook",
    "clear_models",
    "list_agents",
    "list_prompts",
    "load_models",
    "load_prompt",
    "parse_forecast",
    "parse_notebook",
    "prompt_registry",
    "prompts_for",
    "random_draws",
    "register_agent",
    "reparse_forecast",
    "research_prompt",
]

__getattr__, __dir__ = lazy_exports(__name__)
