"""The runner: plans agents x events x steps x rollouts, runs them on an executor (threads, or
Dask workers) under per-provider limits, writes and resumes logs, and accounts for the work."""

from pastcast.runner._accounting import Accounting, UsageAccount
from pastcast.runner._config import BreakerConfig, Execution, ProviderLimits, RunConfig
from pastcast.runner._executors import Executor, LocalExecutor, executors
from pastcast.runner._limits import CircuitBreaker, ProviderGates, TokenBucket
from pastcast.runner._run import RunResult, model_cutoffs_of, run_benchmark
from pastcast.runner._version import code_version
from pastcast.runner._work import CorpusRef, StepOutcome, StepTask, WorkContext, open_corpus

__all__ = [
    "Accounting",
    "BreakerConfig",
    "CircuitBreaker",
    "CorpusRef",
    "Execution",
    "Executor",
    "LocalExecutor",
    "ProviderGates",
    "ProviderLimits",
    "RunConfig",
    "RunResult",
    "StepOutcome",
    "StepTask",
    "TokenBucket",
    "UsageAccount",
    "WorkContext",
    "code_version",
    "executors",
    "model_cutoffs_of",
    "open_corpus",
    "run_benchmark",
]
