"""Live accounting of a run (docs/runs.md, "Live accounting"), counted from the step records
as they come back (so a Dask run is counted as a local one is) and what the provider gates saw.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable

from pydantic import Field

from pastcast.records import Record, Usage
from pastcast.runlog import StepRecord


class UsageAccount(Usage):
    """What a model (or an agent's episodes) used."""

    steps: int = 0
    failed_calls: int = 0
    latency_s: float = 0.0
    """Summed over model calls (per model) or episode wall time (per agent)."""
    tool_calls: int = 0


class Accounting(Record):
    """A run's accounting (new steps of this execution; resumed steps are not counted)."""

    steps_written: int = 0
    steps_resumed: int = 0
    unusable: int = 0
    retries: int = 0
    """Provider attempts retried (429, 5xx, timeouts, lost connections, malformed replies)."""
    pauses: dict[str, int] = Field(default_factory=dict)
    """Times each provider's circuit breaker opened."""
    by_model: dict[str, UsageAccount] = Field(default_factory=dict)
    by_agent: dict[str, UsageAccount] = Field(default_factory=dict)
    """Keyed ``agent@setting``."""
    wall_s: float = 0.0

    @property
    def input_tokens(self) -> int:
        return sum(a.input_tokens for a in self.by_agent.values())

    @property
    def output_tokens(self) -> int:
        return sum(a.output_tokens for a in self.by_agent.values())

    @property
    def cost_usd(self) -> float:
        return sum(a.cost_usd for a in self.by_agent.values())


def _add(totals: dict[str, dict[str, float]], key: str, **more: float) -> None:
    # Plain sums per step (a record copied per step cost the driver's thread); a
    # ``UsageAccount`` is built from them at the end.
    counts = totals.setdefault(key, {})
    for name, value in more.items():
        counts[name] = counts.get(name, 0) + value


class RunStats:
    """Counters the driver updates as steps are submitted and come back (one thread)."""

    def __init__(self, skipped: int) -> None:
        self.skipped = skipped
        self.written = 0
        self.unusable = 0
        self.running = 0
        self.retries = 0
        self.pauses: Counter[str] = Counter()
        self.by_model: dict[str, dict[str, float]] = {}
        self.by_agent: dict[str, dict[str, float]] = {}
        self.paused_now: Callable[[], tuple[str, ...]] = lambda: ()
        self._started = time.monotonic()

    def add(self, record: StepRecord, retries: int = 0, trips: tuple[str, ...] = ()) -> None:
        self.written += 1
        self.unusable += int(not record.forecast.usable)
        self.retries += retries
        self.pauses.update(trips)
        ep = record.episode
        for call in ep.model_calls:
            _add(
                self.by_model,
                call.model,
                model_calls=1,
                failed_calls=int(call.error is not None),
                input_tokens=call.usage.input_tokens,
                output_tokens=call.usage.output_tokens,
                cost_usd=call.usage.cost_usd,
                latency_s=call.latency_s,
            )
        for model in {c.model for c in ep.model_calls}:
            _add(self.by_model, model, steps=1)
        _add(
            self.by_agent,
            f"{record.agent}@{record.setting}",
            steps=1,
            model_calls=ep.usage.model_calls,
            failed_calls=sum(c.error is not None for c in ep.model_calls),
            input_tokens=ep.usage.input_tokens,
            output_tokens=ep.usage.output_tokens,
            cost_usd=ep.usage.cost_usd,
            latency_s=ep.wall_s,
            tool_calls=len(ep.tool_calls),
        )

    def line(self) -> str:
        """The progress display's status text."""
        paused = self.paused_now()
        agents = self.by_agent.values()
        tokens = sum(a.get("input_tokens", 0) + a.get("output_tokens", 0) for a in agents)
        text = (
            f"{self.running} running · {self.unusable} failed · {self.retries} retries · "
            f"{tokens / 1000:,.1f}k tokens · ${sum(a.get('cost_usd', 0) for a in agents):,.4f}"
        )
        return text + (f" · [red]paused: {', '.join(paused)}[/red]" if paused else "")

    def accounting(self) -> Accounting:
        return Accounting(
            steps_written=self.written,
            steps_resumed=self.skipped,
            unusable=self.unusable,
            retries=self.retries,
            pauses=dict(self.pauses),
            by_model={k: UsageAccount.model_validate(v) for k, v in self.by_model.items()},
            by_agent={k: UsageAccount.model_validate(v) for k, v in self.by_agent.items()},
            wall_s=time.monotonic() - self._started,
        )
