"""Starting one run under resource limits, watching it, and stopping all of it.

Limits are set in the child before bubblewrap starts (inherited by everything inside). For a
caller that is root the child also becomes a sandbox user of its own first (``_users.py``), so
that RLIMIT_NPROC holds (the kernel exempts root), nothing in the sandbox acts as the host's root
and concurrent sandboxes share no per-user counter. The child then mounts the scratch tmpfs
(``_scratch.py``):

- RLIMIT_CPU one second past the CPU budget (a backstop: the supervisor stops the run at the
  budget itself; the interpreter is its pid namespace's init, which ignores SIGXCPU);
  RLIMIT_AS (a memory bomb gets MemoryError); RLIMIT_NPROC (tasks, threads included, of uid
  65534 on the whole host: a thread bomb stops there); RLIMIT_NOFILE (bounds pipes and other
  kernel objects held through descriptors); RLIMIT_FSIZE (largest file); no core files, no
  locked memory, no POSIX message queues.
- Wall time, output size and CPU time are enforced here (the CPU time of the sandbox's pid 1, all
  threads, polled every ``_TICK_S``): past any, the sandbox's pid 1 is killed, which takes every
  process of its pid namespace with it.

Why a run stopped comes only from what this process observed (its clock, the bytes it read, the
CPU time the kernel accounted to the sandbox's processes), never from the exit status.
``supervise`` returns only after bubblewrap has reaped the sandbox's pid 1, i.e. once nothing the
code started is alive.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import resource
import selectors
import signal
import subprocess
import time
from collections.abc import Sequence

from pastcast.sandbox._result import KilledReason, SandboxResult
from pastcast.sandbox._scratch import scratch_setup

__all__ = ["FILE_BYTES", "MAX_FILES", "MAX_TASKS", "Scratch", "child_setup", "supervise"]

MAX_TASKS = 512
MAX_FILES = 128
FILE_BYTES = 16 * 1024 * 1024
_GRACE_S = 5.0
_TICK_S = 0.1
_CHUNK = 65536
_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def _set_limits(cpu_s: int, memory_bytes: int) -> None:
    """Runs in the child between fork and exec."""
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_s + 1, cpu_s + 1))
    resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    resource.setrlimit(resource.RLIMIT_NPROC, (MAX_TASKS, MAX_TASKS))
    resource.setrlimit(resource.RLIMIT_NOFILE, (MAX_FILES, MAX_FILES))
    resource.setrlimit(resource.RLIMIT_FSIZE, (FILE_BYTES, FILE_BYTES))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_MEMLOCK, (0, 0))
    resource.setrlimit(resource.RLIMIT_MSGQUEUE, (0, 0))


Scratch = tuple[str, int, int]
"""(staging folder, bytes, inodes) of a run's scratch tmpfs."""


def child_setup(cpu_s: int, memory_bytes: int, scratch: Scratch | None) -> None:
    """Runs in the child between fork and exec: the scratch tmpfs, then the limits (the child
    still holds every descriptor of the parent until exec, maybe more than the limit allows)."""
    if scratch is not None:
        scratch_setup(*scratch)
    _set_limits(cpu_s, memory_bytes)


class _Run:
    """One started process tree and what was observed of it."""

    def __init__(self, proc: subprocess.Popen[bytes], info_fd: int | None) -> None:
        self.proc = proc
        self.bwrap_fd = os.pidfd_open(proc.pid)  # our child: its pid stays ours until reaped
        self.info_fd = info_fd
        self.info = b""
        # Without bubblewrap (unsafe runs) the interpreter is the child itself.
        self.pid1: int | None = proc.pid if info_fd is None else None
        self.pid1_fd: int | None = None
        self.cpu_s = 0.0

    def read_info(self, chunk: bytes) -> bool:
        """Feed bubblewrap's info output; True once the sandbox's pid 1 is known."""
        self.info += chunk
        try:
            pid = int(json.loads(self.info)["child-pid"])
        except (ValueError, KeyError, TypeError):
            return False
        with contextlib.suppress(ProcessLookupError):
            # bubblewrap wrote this before letting pid 1 run and reaps it only on exit, then
            # exits itself: while bubblewrap is unreaped, the pid cannot belong to another process.
            self.pid1_fd = os.pidfd_open(pid)
            self.pid1 = pid
        return True

    def cpu_seconds(self) -> float:
        """CPU time of the sandbox's pid 1 so far, all threads (the last value once it is gone)."""
        if self.pid1 is not None:
            try:
                with open(f"/proc/{self.pid1}/stat", "rb") as f:
                    stat = f.read().rsplit(b")", 1)[1].split()
                # utime, stime, cutime, cstime: fields 14-17 of proc(5), after the name.
                ticks = sum(int(x) for x in stat[11:15])
                self.cpu_s = max(self.cpu_s, ticks / _CLOCK_TICKS)
            except (OSError, IndexError, ValueError):
                pass
        return self.cpu_s

    def kill(self) -> None:
        """SIGKILL the sandbox's pid 1 (its whole pid namespace dies with it), else bubblewrap."""
        if self.pid1_fd is None and self.info_fd is not None:
            # bubblewrap writes the pid right after creating the sandbox; give it a moment.
            deadline = time.monotonic() + 1.0
            while self.pid1_fd is None and time.monotonic() < deadline:
                if not _wait_readable(self.info_fd, deadline - time.monotonic()):
                    break
                chunk = os.read(self.info_fd, _CHUNK)
                if not chunk or self.read_info(chunk):
                    break
        if self.pid1_fd is not None:
            with contextlib.suppress(ProcessLookupError):
                signal.pidfd_send_signal(self.pid1_fd, signal.SIGKILL)
        else:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)

    def reap(self) -> tuple[int, float]:
        """(exit code, CPU seconds of the whole tree) once bubblewrap has exited.

        bubblewrap exits after reaping the sandbox's pid 1, whose exit waits for every other
        process of its namespace: then nothing of the run is alive.
        """
        if not _wait_readable(self.bwrap_fd, _GRACE_S):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
        _, status, usage = os.wait4(self.proc.pid, 0)
        self.proc.returncode = os.waitstatus_to_exitcode(status)
        if self.pid1_fd is not None:
            # Already gone, except after a forced kill of bubblewrap: then its pid 1 dies by
            # PDEATHSIG (--die-with-parent), which may take a moment.
            _wait_readable(self.pid1_fd, _GRACE_S)
        return self.proc.returncode, usage.ru_utime + usage.ru_stime

    def close(self) -> None:
        for fd in (self.bwrap_fd, self.pid1_fd):
            if fd is not None:
                os.close(fd)


def _wait_readable(fd: int, timeout_s: float) -> bool:
    with selectors.DefaultSelector() as sel:
        sel.register(fd, selectors.EVENT_READ)
        return bool(sel.select(max(0.0, timeout_s)))


def supervise(
    argv: Sequence[str],
    stdin_fd: int,
    *,
    timeout_s: float,
    memory_mb: int,
    max_output: int,
    cpu_s: int | None = None,
    pass_fds: tuple[int, ...] = (),
    info_fd: int | None = None,
    user: int | None = None,
    env: dict[str, str] | None = None,
    scratch: Scratch | None = None,
) -> SandboxResult:
    """Run ``argv`` with ``stdin_fd`` as its input; ``info_fd`` is bubblewrap's --info-fd pipe;
    ``user`` the uid (and gid) to run as; ``scratch`` the tmpfs to mount before ``argv`` starts.

    ``cpu_s`` defaults to ``timeout_s`` rounded up: one thread then meets the wall clock first.
    """
    cpu = cpu_s if cpu_s is not None else max(1, math.ceil(timeout_s))
    memory = memory_mb * 1024 * 1024
    start = time.monotonic()
    try:
        proc = subprocess.Popen(
            list(argv),
            stdin=stdin_fd,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env if env is not None else {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"},
            preexec_fn=lambda: child_setup(cpu, memory, scratch),
            start_new_session=True,
            close_fds=True,
            pass_fds=pass_fds,
            user=user,
            group=user,
            extra_groups=[] if user is not None else None,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        # E.g. the task limit of the sandbox's user is spent by its threads: nothing started.
        why = f"the sandbox could not start: {exc}"
        return SandboxResult(stdout="", stderr=why, exit_code=None, error=why)
    assert proc.stdout is not None and proc.stderr is not None
    run = _Run(proc, info_fd)
    out_fd, err_fd = proc.stdout.fileno(), proc.stderr.fileno()
    bufs = {out_fd: bytearray(), err_fd: bytearray()}
    deadline = start + timeout_s
    reason: KilledReason | None = None
    sel = selectors.DefaultSelector()
    try:
        for fd in (out_fd, err_fd, *(() if info_fd is None else (info_fd,))):
            os.set_blocking(fd, False)
            sel.register(fd, selectors.EVENT_READ)
        sel.register(run.bwrap_fd, selectors.EVENT_READ)
        # Until bubblewrap has exited and both pipes are drained (writers gone: EOF follows).
        watched = {out_fd, err_fd, run.bwrap_fd}
        while watched & set(sel.get_map()):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                reason = "timeout"
            elif run.cpu_seconds() >= cpu:
                reason = "cpu_limit"
            if reason:
                break
            for key, _ in sel.select(min(remaining, _TICK_S)):
                if key.fd == run.bwrap_fd:
                    sel.unregister(key.fd)
                    continue
                chunk = os.read(key.fd, _CHUNK)
                if key.fd == info_fd:
                    if not chunk or run.read_info(chunk):
                        sel.unregister(key.fd)
                elif not chunk:
                    sel.unregister(key.fd)
                else:
                    bufs[key.fd] += chunk
                    if len(bufs[out_fd]) + len(bufs[err_fd]) > max_output:
                        reason = "output_limit"
            if reason:
                break
        if reason:
            run.kill()
        exit_code, cpu_used = run.reap()
    finally:
        sel.close()
        proc.stdout.close()
        proc.stderr.close()
        run.close()
    if reason is None and cpu_used >= cpu:
        reason = "cpu_limit"  # the RLIMIT_CPU backstop struck between two polls
    out, err = bytes(bufs[out_fd]), bytes(bufs[err_fd])
    return SandboxResult(
        stdout=out[:max_output].decode("utf-8", errors="replace"),
        stderr=err[: max(0, max_output - len(out))].decode("utf-8", errors="replace"),
        exit_code=None if reason else exit_code,
        timed_out=reason == "timeout",
        killed_reason=reason,
        elapsed_s=time.monotonic() - start,
        truncated=reason == "output_limit",
    )
