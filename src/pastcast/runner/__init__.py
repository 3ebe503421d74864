"""The runner: plans agents x events x steps x rollouts, runs them, writes and resumes logs."""

from pastcast.runner._config import RunConfig
from pastcast.runner._run import NothingToRun, RunResult, run_benchmark
from pastcast.runner._version import code_version

__all__ = ["NothingToRun", "RunConfig", "RunResult", "code_version", "run_benchmark"]
