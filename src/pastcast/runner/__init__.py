"""The runner: plans agents x events x steps x rollouts, runs them, writes and resumes logs."""

from pastcast.runner._config import RunConfig
from pastcast.runner._run import (
    RunResult,
    agent_env_config,
    grade_step,
    play_episode,
    run_benchmark,
)
from pastcast.runner._version import code_version

__all__ = [
    "RunConfig",
    "RunResult",
    "agent_env_config",
    "code_version",
    "grade_step",
    "play_episode",
    "run_benchmark",
]
