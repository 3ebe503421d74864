"""The versioned run log: schema, writer (append, resumable) and validating reader.

A run log is a step file (``run.jsonl``: one step record per line) with its header beside it
(``header_path``: ``run.header.json``)."""

from pastcast.records import Probabilities
from pastcast.runlog._arrow import as_numpy, step_schema
from pastcast.runlog._columns import StepColumns, read_step_columns
from pastcast.runlog._companion import (
    COLUMNS_VERSION,
    column_probs,
    columns_path,
    columns_schema,
    records_table,
)
from pastcast.runlog._definition import EXECUTION_ONLY, run_definition, run_fingerprint
from pastcast.runlog._io import RunLog, RunLogWriter, header_path, read_run_log, retried_path
from pastcast.runlog._schema import (
    LOGGED_SCORES,
    PENDING_TRUTH,
    SCHEMA_VERSION,
    AgentSpec,
    Grading,
    RunHeader,
    Scores,
    StepRecord,
)

__all__ = [
    "COLUMNS_VERSION",
    "EXECUTION_ONLY",
    "LOGGED_SCORES",
    "PENDING_TRUTH",
    "SCHEMA_VERSION",
    "AgentSpec",
    "Grading",
    "Probabilities",
    "RunHeader",
    "RunLog",
    "RunLogWriter",
    "Scores",
    "StepColumns",
    "StepRecord",
    "as_numpy",
    "column_probs",
    "columns_path",
    "columns_schema",
    "header_path",
    "read_run_log",
    "read_step_columns",
    "records_table",
    "retried_path",
    "run_definition",
    "run_fingerprint",
    "step_schema",
]
