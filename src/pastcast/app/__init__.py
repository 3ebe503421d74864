"""The application layer: every name a user types and every workflow, as Python functions.

The CLI, the integrations (Inspect, verifiers) and the Gymnasium environment sit on top of it:
they parse their own inputs, call a function here and present its result. Problems are raised
as ``AppError``, one line naming the field (``dataset``, ``corpus``, ``agents[1].model``),
never a command-line flag.
"""

from pastcast.app._agents import (
    AGENT_FORM,
    AGENT_GRAMMAR,
    AgentOption,
    check_agent_args,
    check_agents,
    models_session,
    parse_agent_option,
    parse_agent_options,
    split_agent_option,
)
from pastcast.app._arena import ArenaReplay, arena_replay, round_plan
from pastcast.app._datasets import DATASET_SPEC_HELP, open_dataset
from pastcast.app._errors import AppError
from pastcast.app._replays import WORLD_INDEX, Replay, open_corpus, open_replay, shared_replay
from pastcast.app._runs import check_sandbox, plan_estimate, plan_from_agents, read_plan, run_plan
from pastcast.app._steps import select_steps

__all__ = [
    "AGENT_FORM",
    "AGENT_GRAMMAR",
    "DATASET_SPEC_HELP",
    "WORLD_INDEX",
    "AgentOption",
    "AppError",
    "ArenaReplay",
    "Replay",
    "arena_replay",
    "check_agent_args",
    "check_agents",
    "check_sandbox",
    "models_session",
    "open_corpus",
    "open_dataset",
    "open_replay",
    "parse_agent_option",
    "parse_agent_options",
    "plan_estimate",
    "plan_from_agents",
    "read_plan",
    "round_plan",
    "run_plan",
    "select_steps",
    "shared_replay",
    "split_agent_option",
]
