"""Agents: the contract, the registry (``agents``), baselines, the heuristic research agent and the
model-driven agents (no-tools, tool agent, two-stage), and agents behind a process boundary
(``isolated``, ``external``: ``pastcast.agents.isolated``)."""

from pastcast.agents._base import (
    Agent,
    AgentInfo,
    PromptIds,
    agent_info,
    agent_spec,
    agents,
    build_agent,
    list_agents,
    prompts_for,
    register_agent,
)
from pastcast.agents._baselines import (
    BaseRateAgent,
    MarketAgent,
    RandomAgent,
    UniformAgent,
    random_draws,
)
from pastcast.agents._heuristic import HeuristicResearchAgent
from pastcast.agents._llm_registry import agent_model, clear_models, load_models
from pastcast.agents._no_tools import NoToolsAgent
from pastcast.agents._notebook import check_notebook, parse_notebook
from pastcast.agents._parsing import parse_forecast, reparse_forecast
from pastcast.agents._prompts import list_prompts, load_prompt, prompt_registry
from pastcast.agents._rescore import normalize_step_labels
from pastcast.agents._tool_agent import (
    ACTION_SCHEMA,
    JsonActionAgent,
    ToolAgent,
    action_schema,
    action_template,
    research_prompt,
)
from pastcast.agents._two_stage import TwoStageAgent, TwoStageConfig
from pastcast.agents.isolated import AgentProcessError, ExternalAgent, IsolatedAgent

__all__ = [
    "ACTION_SCHEMA",
    "Agent",
    "AgentInfo",
    "AgentProcessError",
    "BaseRateAgent",
    "ExternalAgent",
    "HeuristicResearchAgent",
    "IsolatedAgent",
    "JsonActionAgent",
    "MarketAgent",
    "NoToolsAgent",
    "PromptIds",
    "RandomAgent",
    "ToolAgent",
    "TwoStageAgent",
    "TwoStageConfig",
    "UniformAgent",
    "action_schema",
    "action_template",
    "agent_info",
    "agent_model",
    "agent_spec",
    "agents",
    "build_agent",
    "check_notebook",
    "clear_models",
    "list_agents",
    "list_prompts",
    "load_models",
    "load_prompt",
    "normalize_step_labels",
    "parse_forecast",
    "parse_notebook",
    "prompt_registry",
    "prompts_for",
    "random_draws",
    "register_agent",
    "reparse_forecast",
    "research_prompt",
]
