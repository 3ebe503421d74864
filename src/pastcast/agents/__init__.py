"""Agents: the contract, the registry, baselines and the heuristic research agent."""

from pastcast.agents._base import (
    Agent,
    AgentInfo,
    agent_info,
    agent_spec,
    build_agent,
    list_agents,
    register_agent,
)
from pastcast.agents._baselines import BaseRateAgent, MarketAgent, UniformAgent
from pastcast.agents._heuristic import HeuristicResearchAgent
from pastcast.agents._parsing import parse_forecast
from pastcast.agents._tool_agent import ACTION_SCHEMA, JsonActionAgent

__all__ = [
    "ACTION_SCHEMA",
    "Agent",
    "AgentInfo",
    "BaseRateAgent",
    "HeuristicResearchAgent",
    "JsonActionAgent",
    "MarketAgent",
    "UniformAgent",
    "agent_info",
    "agent_spec",
    "build_agent",
    "list_agents",
    "parse_forecast",
    "register_agent",
]
