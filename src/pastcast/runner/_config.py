"""What a run is (``RunConfig``: agents x events x steps x rollouts, with the environment
settings) and how it is executed (``Execution``: executor, provider limits, retries, circuit
breaker), which never changes what it records."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from pastcast.env import EnvConfig
from pastcast.records import Record
from pastcast.retrying import RetryPolicy
from pastcast.runlog import AgentSpec

MAX_ROLLOUTS = 10_000
"""The most rollouts of one forecast step a run takes (every entry point: options, plans, API)."""
MAX_WORKERS = 1024
"""The most episodes a run keeps in flight at once."""


class RunConfig(Record):
    agents: tuple[AgentSpec, ...] = Field(min_length=1)
    rollouts: int = Field(default=1, ge=1, le=MAX_ROLLOUTS)
    env: EnvConfig = EnvConfig()
    fallback: Literal["uniform", "worst"] = "uniform"
    workers: int = Field(default=1, ge=1, le=MAX_WORKERS)
    """Episodes in flight at once (the global concurrency limit)."""
    split: str | None = None
    """Only run events of this split (None: every event with steps)."""
    max_events: int | None = Field(default=None, ge=1)


class PlanCorpus(Record):
    spec: str | None = None
    """An index directory or a database URL (the embedded world builds its own when none is
    given)."""
    retrieval: str = "bm25"
    """bm25, dense or hybrid (``pastcast.corpus.open_backend``)."""
    embedder: str | None = None
    """The query embedder of dense and hybrid retrieval (None: the index's own)."""
    nprobe: int | None = Field(default=None, ge=1)
    """Dense and hybrid: approximate search of months before the cutoff's (frozen month
    indexes, this many lists probed); None: exact. Recorded in the run's corpus identity."""


class ProviderLimits(Record):
    """Limits of one model provider (None: no limit)."""

    max_concurrent: int | None = Field(default=None, ge=1)
    """Requests in flight at once."""
    requests_per_minute: float | None = Field(default=None, gt=0)
    tokens_per_minute: float | None = Field(default=None, gt=0)
    """Input plus output tokens; a request is charged its estimate, then corrected."""


class BreakerConfig(Record):
    """Each provider's circuit breaker (docs/runs.md, "Per-provider limits")."""

    failures: int = Field(default=8, ge=1)
    cooldown_s: float = Field(default=30.0, ge=0)
    max_pause_s: float = Field(default=900.0, ge=0)


class Execution(Record):
    """How a run executes: none of it is recorded in or checked against the run's definition."""

    executor: str = "local"
    """A registered executor (``pastcast.runner.executors``): ``local`` (threads) or ``dask``."""
    executor_args: dict[str, Any] = Field(default_factory=dict)
    providers: dict[str, ProviderLimits] = Field(default_factory=dict)
    """Limits by provider name (``openai``, ``openai-compatible``, ``local``, ...)."""
    retry: RetryPolicy = RetryPolicy()
    breaker: BreakerConfig = BreakerConfig()
    max_steps: int | None = Field(default=None, ge=1)
    """The most steps this execution runs (resumed ones not counted), then it stops with the
    log resumable: the same run again goes on from there (None: every step)."""
