"""Running model-written Python for computation only, and submitted agents as conversing
processes, isolated from everything else."""

from pastcast.sandbox._process import (
    LineHandler,
    LongLineHandler,
    PythonEnvironment,
    Reply,
    check_binds,
    program_binds,
    python_environment,
    run_sandboxed,
    sandbox_interpreter,
)
from pastcast.sandbox._result import KilledReason, SandboxResult, SandboxUnavailable
from pastcast.sandbox._run import run_python, sandbox_available
from pastcast.sandbox._users import SANDBOX_UIDS

__all__ = [
    "SANDBOX_UIDS",
    "KilledReason",
    "LineHandler",
    "LongLineHandler",
    "PythonEnvironment",
    "Reply",
    "SandboxResult",
    "SandboxUnavailable",
    "check_binds",
    "program_binds",
    "python_environment",
    "run_python",
    "run_sandboxed",
    "sandbox_available",
    "sandbox_interpreter",
]
