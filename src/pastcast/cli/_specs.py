"""Parsing of agent specs given on the command line: ``NAME[:key=value,...][@setting]``."""

from __future__ import annotations

import json
from typing import Any, cast, get_args

from pastcast.agents import agent_spec
from pastcast.records import Setting
from pastcast.runlog import AgentSpec

__all__ = ["parse_agent_option"]


def _value(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def parse_agent_option(option: str, default_setting: str = "memory_free") -> AgentSpec:
    """``heuristic:max_reads=4@memory_on`` -> an AgentSpec named ``heuristic:max_reads=4``."""
    body, _, setting = option.partition("@")
    setting = setting or default_setting
    if setting not in get_args(Setting):
        raise ValueError(
            f"--agent {option!r}: unknown setting {setting!r} "
            f"(choose from {', '.join(get_args(Setting))})"
        )
    name, _, arg_text = body.partition(":")
    args: dict[str, Any] = {}
    for item in filter(None, arg_text.split(",")):
        key, eq, val = item.partition("=")
        if not eq or not key:
            raise ValueError(f"--agent {option!r}: expected key=value, got {item!r}")
        args[key.strip()] = _value(val.strip())
    return agent_spec(name, setting=cast(Setting, setting), label=body, **args)
