"""Running model-written Python for computation only, and submitted agents as conversing
processes, isolated from everything else."""

from pastcast.sandbox._process import (
    Reply,
    check_binds,
    program_binds,
    python_environment,
    run_sandboxed,
    sandbox_interpreter,
)
from pastcast.sandbox._result import SandboxResult, SandboxUnavailable
from pastcast.sandbox._run import run_python, sandbox_available
from pastcast.sandbox._users import SANDBOX_UIDS

__all__ = [
    "SANDBOX_UIDS",
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
