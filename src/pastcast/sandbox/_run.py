"""``run_python``: one sandboxed, resource-limited Python run with bounded output.

Limits are set in the child before bubblewrap starts (inherited by everything inside):
RLIMIT_CPU (CPU seconds), RLIMIT_AS (address space: a memory bomb gets MemoryError),
RLIMIT_NPROC (a fork bomb fails to fork), RLIMIT_FSIZE (largest file it may write) and
RLIMIT_CORE=0. Wall time and output size are enforced here: past either, the whole sandbox is
killed (its pid namespace goes with it).
"""

from __future__ import annotations

import contextlib
import math
import os
import resource
import selectors
import signal
import subprocess
import sys
import tempfile
import time
from functools import cache

from pastcast.records import Record
from pastcast.sandbox._bwrap import bwrap_command, find_bwrap
from pastcast.sandbox._seccomp import no_fork_filter

__all__ = ["SandboxResult", "SandboxUnavailable", "run_python", "sandbox_available"]

_MAX_PROCS = 64
_FILE_BYTES = 16 * 1024 * 1024


class SandboxUnavailable(RuntimeError):
    """Isolation could not be established, so the code was not run."""


class SandboxResult(Record):
    stdout: str
    stderr: str
    exit_code: int | None
    timed_out: bool = False
    killed_reason: str | None = None
    """``timeout``, ``output_limit``, ``cpu_limit`` or ``signal:N``; None for a normal exit."""
    elapsed_s: float = 0.0
    truncated: bool = False
    sandboxed: bool = True


def _limits(cpu_s: int, memory_mb: int) -> None:
    """Runs in the child between fork and exec."""
    mem = memory_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_s, cpu_s + 1))
    resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
    resource.setrlimit(resource.RLIMIT_NPROC, (_MAX_PROCS, _MAX_PROCS))
    resource.setrlimit(resource.RLIMIT_FSIZE, (_FILE_BYTES, _FILE_BYTES))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def _kill(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)


def _execute(
    argv: list[str],
    code: str,
    *,
    timeout_s: float,
    memory_mb: int,
    max_output: int,
    env: dict[str, str] | None,
    pass_fds: tuple[int, ...] = (),
) -> SandboxResult:
    cpu = max(1, math.ceil(timeout_s))
    start = time.monotonic()
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env if env is not None else {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"},
        preexec_fn=lambda: _limits(cpu, memory_mb),
        start_new_session=True,
        close_fds=True,
        pass_fds=pass_fds,
    )
    assert proc.stdin and proc.stdout and proc.stderr
    try:
        proc.stdin.write(code.encode("utf-8"))
        proc.stdin.close()
    except BrokenPipeError:
        pass
    out_fd, err_fd = proc.stdout.fileno(), proc.stderr.fileno()
    bufs: dict[int, bytearray] = {out_fd: bytearray(), err_fd: bytearray()}
    sel = selectors.DefaultSelector()
    for f in (proc.stdout, proc.stderr):
        os.set_blocking(f.fileno(), False)
        sel.register(f, selectors.EVENT_READ)
    deadline = start + timeout_s
    reason: str | None = None
    truncated = False
    while sel.get_map():
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            reason = "timeout"
            break
        for key, _ in sel.select(min(remaining, 0.5)):
            chunk = os.read(key.fd, 65536)
            if not chunk:
                sel.unregister(key.fileobj)
                continue
            buf = bufs[key.fd]
            buf += chunk
            if len(bufs[out_fd]) + len(bufs[err_fd]) > max_output:
                reason, truncated = "output_limit", True
        if reason:
            break
    if reason:
        _kill(proc)
    try:
        exit_code: int | None = proc.wait(timeout=max(0.1, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        reason = reason or "timeout"
        _kill(proc)
        exit_code = proc.wait()
    sel.close()
    for f in (proc.stdout, proc.stderr):
        f.close()
    elapsed = time.monotonic() - start
    if reason is None and exit_code is not None:
        reason = _signal_reason(exit_code)
    out, err = bufs[out_fd], bufs[err_fd]
    out_s = bytes(out[:max_output]).decode("utf-8", errors="replace")
    err_s = bytes(err[: max(0, max_output - len(out))]).decode("utf-8", errors="replace")
    return SandboxResult(
        stdout=out_s,
        stderr=err_s,
        exit_code=None if reason in ("timeout", "output_limit") else exit_code,
        timed_out=reason == "timeout",
        killed_reason=reason,
        elapsed_s=elapsed,
        truncated=truncated,
    )


def _sandboxed(
    bwrap: str, code: str, *, timeout_s: float, memory_mb: int, max_output: int, scratch_mb: int
) -> SandboxResult:
    program = no_fork_filter()
    if program is None:
        raise SandboxUnavailable(f"no process-creation filter for this architecture: {os.uname()}")
    fd = os.memfd_create("pastcast-seccomp", 0)
    try:
        os.write(fd, program)
        os.lseek(fd, 0, os.SEEK_SET)
        argv = bwrap_command(bwrap, scratch_mb << 20, fd)
        return _execute(
            argv,
            code,
            timeout_s=timeout_s,
            memory_mb=memory_mb,
            max_output=max_output,
            env=None,
            pass_fds=(fd,),
        )
    finally:
        os.close(fd)


def _signal_reason(exit_code: int) -> str | None:
    """A signalled child: negative from Popen, or 128 + N as bubblewrap reports it."""
    sig = -exit_code if exit_code < 0 else exit_code - 128 if 128 < exit_code <= 192 else 0
    if sig <= 0:
        return None
    return "cpu_limit" if sig == signal.SIGXCPU else f"signal:{sig}"


@cache
def _self_test() -> str | None:
    """None when the sandbox works here, else why not (checked once per process)."""
    bwrap = find_bwrap()
    if bwrap is None:
        return "bubblewrap (bwrap) is not installed; install the 'bubblewrap' package"
    probe = "import os, socket\nprint(os.getuid(), sorted(os.listdir('/')))\n"
    probe += "try:\n    socket.create_connection(('127.0.0.1', 9), timeout=1)\n"
    probe += "except OSError:\n    print('no-net')\n"
    try:
        res = _sandboxed(bwrap, probe, timeout_s=10, memory_mb=512, max_output=10000, scratch_mb=8)
    except OSError as exc:
        return f"bubblewrap could not start: {exc}"
    if res.exit_code != 0 or "no-net" not in res.stdout or not res.stdout.startswith("65534 "):
        return f"bubblewrap self-test failed (exit {res.exit_code}): {res.stderr.strip()[-300:]}"
    return None


def sandbox_available() -> tuple[bool, str]:
    """Whether isolated runs are possible here, and why not."""
    problem = _self_test()
    return problem is None, problem or "ok"


def run_python(
    code: str,
    *,
    timeout_s: float = 5.0,
    memory_mb: int = 512,
    max_output: int = 20000,
    scratch_mb: int = 64,
    allow_unsafe: bool = False,
) -> SandboxResult:
    """Run ``code`` with ``python -I`` in the sandbox; stdout/stderr are capped at ``max_output``.

    Raises ``SandboxUnavailable`` where isolation cannot be established, unless ``allow_unsafe``
    is passed: then the code runs as a plain resource-limited subprocess with a scrubbed
    environment but full file-system and network access (for trusted code only).
    """
    problem = _self_test()
    if problem is not None:
        if not allow_unsafe:
            raise SandboxUnavailable(
                f"refusing to run model code without isolation: {problem} "
                "(pass allow_unsafe=True only for trusted code)"
            )
        with tempfile.TemporaryDirectory() as scratch:
            env = {"PATH": "/usr/bin:/bin", "HOME": scratch, "LANG": "C.UTF-8"}
            res = _execute(
                [sys.executable, "-I", "-"],
                code,
                timeout_s=timeout_s,
                memory_mb=memory_mb,
                max_output=max_output,
                env=env,
            )
        return res.model_copy(update={"sandboxed": False})
    bwrap = find_bwrap()
    assert bwrap is not None
    return _sandboxed(
        bwrap,
        code,
        timeout_s=timeout_s,
        memory_mb=memory_mb,
        max_output=max_output,
        scratch_mb=scratch_mb,
    )
