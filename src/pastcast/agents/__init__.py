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

__all__ = [
    "Agent",
    "AgentInfo",
    "BaseRateAgent",
    "HeuristicResearchAgent",
    "MarketAgent",
    "UniformAgent",
    "agent_info",
    "agent_spec",
    "build_agent",
    "list_agents",
    "register_agent",
]
