"""Running model-written Python for computation only, isolated from everything else."""

from pastcast.sandbox._run import (
    SandboxResult,
    SandboxUnavailable,
    run_python,
    sandbox_available,
)

__all__ = ["SandboxResult", "SandboxUnavailable", "run_python", "sandbox_available"]
