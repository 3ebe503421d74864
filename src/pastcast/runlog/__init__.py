"""The versioned run log: schema, writer (append, resumable) and validating reader."""

from pastcast.runlog._definition import EXECUTION_ONLY, run_definition, run_fingerprint
from pastcast.runlog._io import RunLog, RunLogError, RunLogWriter, read_run_log
from pastcast.runlog._schema import (
    SCHEMA_VERSION,
    AgentSpec,
    Grading,
    RunHeader,
    Scores,
    StepRecord,
)

__all__ = [
    "EXECUTION_ONLY",
    "SCHEMA_VERSION",
    "AgentSpec",
    "Grading",
    "RunHeader",
    "RunLog",
    "RunLogError",
    "RunLogWriter",
    "Scores",
    "StepRecord",
    "read_run_log",
    "run_definition",
    "run_fingerprint",
]
