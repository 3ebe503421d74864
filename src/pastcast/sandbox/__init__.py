"""Running model-written Python for computation only, isolated from everything else."""

from pastcast.sandbox._result import KilledReason, SandboxResult, SandboxUnavailable
from pastcast.sandbox._run import run_python, sandbox_available

__all__ = [
    "KilledReason",
    "SandboxResult",
    "SandboxUnavailable",
    "run_python",
    "sandbox_available",
]
