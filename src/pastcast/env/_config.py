"""Per-step environment settings: budgets and what the agent may see."""

from __future__ import annotations

from pydantic import Field

from pastcast.records import Record


class EnvConfig(Record):
    """Budgets per forecast step and visibility settings.

    Defaults follow Forecast-Dojo (120 tool iterations and 400 tool calls per step); market prices
    are hidden unless ``market_access`` is set (Foresight Arena's agent setting).
    """

    max_tool_calls: int = Field(default=400, ge=0)
    max_tool_iterations: int = Field(default=120, ge=0)
    max_model_calls: int = Field(default=150, ge=0)
    max_search_k: int = Field(default=20, ge=1)
    snippet_chars: int = Field(default=240, ge=0)
    read_max_chars: int = Field(default=20_000, ge=1)
    market_access: bool = False
    python_tool: bool = False
    """Offer the sandboxed python tool (needs an isolating sandbox on the machine)."""
    unsafe_python: bool = False
    """Run the python tool without isolation where none can be established (trusted code only)."""
    python_timeout_s: float = Field(default=5.0, gt=0)
