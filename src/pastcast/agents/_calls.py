"""How many model calls an agent makes in one forecast step: what ``pastcast plan`` prices.

Every agent's registration may declare a ``CallEstimator``: a function of the agent's arguments
(its factory's defaults applied, earlier spellings rewritten) and of the step (its setting, the
environment's budgets, the plan's assumed research turns) returning a ``CallEstimate``. An agent
that declares none is priced as one call per step when it is given a ``model`` and none
otherwise.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pydantic import Field

from pastcast.env import EnvConfig
from pastcast.records import Record, Setting


class CallEstimate(Record):
    """Model calls of one forecast step of an agent."""

    calls: float = Field(ge=0, allow_inf_nan=False)
    """Expected calls."""
    max_calls: int = Field(ge=0)
    """The most its arguments and the budgets allow (retries of an unusable answer included)."""
    conversation: bool = False
    """The calls continue one conversation (a ReAct loop): each carries every earlier reply and
    tool result. Otherwise each sends a fresh prompt with the step's evidence."""
    evidence_results: float = Field(default=0, ge=0, allow_inf_nan=False)
    """Tool results a fresh prompt carries (the evidence digest of a research stage)."""


NO_CALLS = CallEstimate(calls=0, max_calls=0)


class CallContext(Record):
    """What an estimate may depend on besides the agent's arguments."""

    setting: Setting = "memory_free"
    budgets: EnvConfig = EnvConfig()
    research_turns: int = Field(default=8, ge=1)
    """Model turns assumed of an open-ended research loop (the model decides when to stop)."""


CallEstimator = Callable[[Mapping[str, Any], CallContext], CallEstimate]
"""(the agent's arguments, the step) -> its calls per step."""


def one_call(args: Mapping[str, Any], context: CallContext, retries: int = 1) -> CallEstimate:
    """One call with the question; ``retries`` more at most when its answer is unusable."""
    return CallEstimate(calls=1, max_calls=min(1 + retries, context.budgets.max_model_calls))


def unless_declared(args: Mapping[str, Any], context: CallContext) -> CallEstimate:
    """The estimate of an agent that declares none: one call given a ``model``, else none."""
    return one_call(args, context) if isinstance(args.get("model"), str) else NO_CALLS
