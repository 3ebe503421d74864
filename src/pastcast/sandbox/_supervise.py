"""Starting one run under resource limits, watching it, and stopping all of it (docs/sandbox.md,
"Guarantees": the limits and why each is there).

Limits are set in the child before bubblewrap starts (inherited by everything inside); a root
caller's child first becomes a sandbox user of its own (``_users.py``: RLIMIT_NPROC holds, and
concurrent sandboxes share no per-user counter), then mounts the scratch tmpfs (``_scratch.py``).
Why a run stopped comes only from what this process observed (its clock, the bytes it read, the
CPU time the kernel accounted to the sandbox), never from the exit status. ``supervise`` returns
only after bubblewrap has reaped the sandbox's pid 1, i.e. once nothing the code started is alive.
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
from typing import Protocol

from pastcast.sandbox._result import KilledReason, SandboxResult
from pastcast.sandbox._scratch import scratch_setup

MAX_TASKS = 512
MAX_FILES = 128
FILE_BYTES = 16 * 1024 * 1024
_GRACE_S = 5.0
_DONE_GRACE_S = 2.0
"""How long a run whose conversation is done may take to exit before it is killed."""
_TICK_S = 0.1
_CHUNK = 65536
_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


Scratch = tuple[str, int, int]
"""(staging folder, bytes, inodes) of a run's scratch tmpfs."""


def child_setup(cpu_s: int, memory_bytes: int, scratch: Scratch | None) -> None:
    """Runs in the child between fork and exec: the scratch tmpfs, then the limits (the child
    still holds every descriptor of the parent until exec, maybe more than the limit allows)."""
    if scratch is not None:
        scratch_setup(*scratch)
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_s + 1, cpu_s + 1))
    resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    resource.setrlimit(resource.RLIMIT_NPROC, (MAX_TASKS, MAX_TASKS))
    resource.setrlimit(resource.RLIMIT_NOFILE, (MAX_FILES, MAX_FILES))
    resource.setrlimit(resource.RLIMIT_FSIZE, (FILE_BYTES, FILE_BYTES))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_MEMLOCK, (0, 0))
    resource.setrlimit(resource.RLIMIT_MSGQUEUE, (0, 0))


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
            with contextlib.suppress(OSError, IndexError, ValueError):
                with open(f"/proc/{self.pid1}/stat", "rb") as f:
                    stat = f.read().rsplit(b")", 1)[1].split()
                # utime, stime, cutime, cstime: fields 14-17 of proc(5), after the name.
                ticks = sum(int(x) for x in stat[11:15])
                self.cpu_s = max(self.cpu_s, ticks / _CLOCK_TICKS)
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


class Streams(Protocol):
    """What a run's pipes carry: ``pending`` bytes for its stdin pipe, its stdout and stderr
    taken in (a reason to stop it, or None), and what the result shows of them."""

    pending: bytearray
    done: bool
    """Nothing more to write: stdin is closed once ``pending`` is written."""

    def reading(self) -> bool: ...
    def took(self, chunk: bytes) -> KilledReason | None: ...
    def took_stderr(self, chunk: bytes) -> KilledReason | None: ...
    def output(self, reason: KilledReason | None) -> tuple[str, str, bool]:
        """(stdout, stderr, truncated) of the result."""
        ...


class Collected:
    """A one-shot run's output: stdout and stderr kept, at most ``max_output`` bytes together."""

    def __init__(self, max_output: int) -> None:
        self.max_output = max_output
        self.out = bytearray()
        self.err = bytearray()
        self.pending = bytearray()
        self.done = False

    def reading(self) -> bool:
        return True

    def took(self, chunk: bytes, err: bool = False) -> KilledReason | None:
        (self.err if err else self.out).extend(chunk)
        return "output_limit" if len(self.out) + len(self.err) > self.max_output else None

    def took_stderr(self, chunk: bytes) -> KilledReason | None:
        return self.took(chunk, err=True)

    def output(self, reason: KilledReason | None) -> tuple[str, str, bool]:
        room = max(0, self.max_output - len(self.out))
        out = bytes(self.out[: self.max_output]).decode("utf-8", errors="replace")
        err = bytes(self.err[:room]).decode("utf-8", errors="replace")
        return out, err, reason == "output_limit"


def _want(sel: selectors.BaseSelector, fd: int, wanted: bool, events: int) -> None:
    registered = fd in sel.get_map()
    if wanted and not registered:
        sel.register(fd, events)
    elif not wanted and registered:
        sel.unregister(fd)


def supervise(
    argv: Sequence[str],
    streams: Streams,
    *,
    stdin: int | None,
    timeout_s: float,
    memory_mb: int,
    cpu_s: int | None = None,
    pass_fds: tuple[int, ...] = (),
    info_fd: int | None = None,
    user: int | None = None,
    env: dict[str, str] | None = None,
    scratch: Scratch | None = None,
) -> SandboxResult:
    """Run ``argv`` with ``stdin`` as its input (None: a pipe fed ``streams.pending``) until it
    and everything it started are gone; ``info_fd`` is bubblewrap's --info-fd pipe; ``user``
    the uid (and gid) to run as; ``scratch`` the tmpfs to mount before ``argv`` starts. An
    exception from ``streams`` kills the run and propagates.

    ``cpu_s`` defaults to ``timeout_s`` rounded up: one thread then meets the wall clock first.
    """
    cpu = cpu_s if cpu_s is not None else max(1, math.ceil(timeout_s))
    start = time.monotonic()
    try:
        proc = subprocess.Popen(
            list(argv),
            stdin=subprocess.PIPE if stdin is None else stdin,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env if env is not None else {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"},
            preexec_fn=lambda: child_setup(cpu, memory_mb << 20, scratch),
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
    in_fd = None if proc.stdin is None else proc.stdin.fileno()
    out_fd, err_fd = proc.stdout.fileno(), proc.stderr.fileno()
    deadline = start + timeout_s
    reason: KilledReason | None = None
    grace_until: float | None = None
    sel = selectors.DefaultSelector()
    try:
        for fd in (out_fd, err_fd, *(fd for fd in (in_fd, info_fd) if fd is not None)):
            os.set_blocking(fd, False)
        for fd in (err_fd, run.bwrap_fd, *(() if info_fd is None else (info_fd,))):
            sel.register(fd, selectors.EVENT_READ)
        out_open = True
        # Until bubblewrap has exited and both pipes are drained (writers gone: EOF follows).
        while run.bwrap_fd in sel.get_map() or out_open or err_fd in sel.get_map():
            now = time.monotonic()
            if grace_until is not None and now >= grace_until:
                break  # done, but the process lingers: killed below, not a failure
            if now >= deadline:
                reason = "timeout"
            elif run.cpu_seconds() >= cpu:
                reason = "cpu_limit"
            if reason:
                break
            _want(sel, out_fd, out_open and streams.reading(), selectors.EVENT_READ)
            if in_fd is not None:
                _want(sel, in_fd, bool(streams.pending), selectors.EVENT_WRITE)
            for key, _ in sel.select(min(deadline - now, _TICK_S)):
                fd = key.fd
                if fd == run.bwrap_fd:
                    sel.unregister(fd)
                elif fd == in_fd:
                    try:
                        del streams.pending[: os.write(fd, streams.pending)]
                    except BlockingIOError:
                        pass
                    except BrokenPipeError:  # it closed its stdin: replies go nowhere
                        streams.pending.clear()
                        sel.unregister(fd)
                        in_fd = None
                    reason = streams.took(b"")  # lines that waited for room
                else:
                    chunk = os.read(fd, _CHUNK)
                    if fd == info_fd:
                        if not chunk or run.read_info(chunk):
                            sel.unregister(fd)
                    elif fd == err_fd:
                        if chunk:
                            reason = streams.took_stderr(chunk)
                        else:
                            sel.unregister(fd)
                    elif not chunk:
                        out_open = False
                    else:
                        reason = streams.took(chunk)
                if reason:
                    break
            if reason:
                break
            if streams.done and not streams.pending and in_fd is not None:
                _want(sel, in_fd, False, selectors.EVENT_WRITE)
                assert proc.stdin is not None
                proc.stdin.close()
                in_fd = None
                grace_until = time.monotonic() + _DONE_GRACE_S
        if reason or run.bwrap_fd in sel.get_map():  # killed at a limit, or lingering
            run.kill()
        exit_code, cpu_used = run.reap()
    except BaseException:
        run.kill()
        run.reap()
        raise
    finally:
        sel.close()
        run.close()
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            with contextlib.suppress(OSError):
                if stream is not None:
                    stream.close()
    if reason is None and cpu_used >= cpu:
        reason = "cpu_limit"  # the RLIMIT_CPU backstop struck between two polls
    stdout, stderr, truncated = streams.output(reason)
    return SandboxResult(
        stdout=stdout,
        stderr=stderr,
        exit_code=None if reason else exit_code,
        timed_out=reason == "timeout",
        killed_reason=reason,
        elapsed_s=time.monotonic() - start,
        truncated=truncated,
    )
