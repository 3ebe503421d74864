"""What one sandboxed run returns, and the error raised where no sandbox can be built."""

from __future__ import annotations

from typing import Literal

from pastcast.records import Record

KilledReason = Literal["timeout", "output_limit", "cpu_limit"]
"""Why the run was stopped, always from what the supervising process itself observed: the wall
clock (``timeout``), the bytes it read (``output_limit``) or the CPU time the kernel accounted to
the sandbox (``cpu_limit``). Never from the exit status or output, which the code controls."""


class SandboxUnavailable(RuntimeError):
    """Isolation could not be established, so the code was not run."""


class SandboxResult(Record):
    stdout: str
    stderr: str
    exit_code: int | None
    """The interpreter's exit status (128 + N when a signal N ended it); None when the supervisor
    stopped the run (``killed_reason`` is set) or the code was refused before running."""
    timed_out: bool = False
    killed_reason: KilledReason | None = None
    elapsed_s: float = 0.0
    truncated: bool = False
    sandboxed: bool = True
    error: str | None = None
    """Set when the code did not run: refused (not text, NUL bytes, too large) or the sandbox
    could not start (for instance, the task limit spent by concurrent runs)."""
