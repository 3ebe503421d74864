"""A long-running sandboxed process that converses line by line over its stdin and stdout.

The python tool's sandbox (the same bubblewrap namespaces, uid, seccomp filter, resource limits
and supervisor) for a process that is not a one-shot computation: an agent that sends requests
on its stdout and reads the replies on its stdin. The filter denies sockets, so those two pipes,
inherited at start, are the process's only channel to anything; ``on_line`` answers each line it
writes. Beyond the interpreter and its standard library the root holds only the read-only
``binds`` the caller names (``python_environment`` makes this environment's packages
importable; ``program_binds`` a host program).
"""

from __future__ import annotations

import contextlib
import math
import os
import selectors
import site
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache

from pastcast.sandbox._bwrap import bwrap_command, find_bwrap
from pastcast.sandbox._mirror import open_to_others, reachable_source
from pastcast.sandbox._result import KilledReason, SandboxResult, SandboxUnavailable
from pastcast.sandbox._root import _shared_libraries, sandbox_root
from pastcast.sandbox._run import _sealed, sandbox_available
from pastcast.sandbox._scratch import scratch_inodes, staging_dir
from pastcast.sandbox._seccomp import sandbox_filter
from pastcast.sandbox._supervise import _Run, child_setup
from pastcast.sandbox._users import lease_user

__all__ = [
    "LineHandler",
    "LongLineHandler",
    "PythonEnvironment",
    "Reply",
    "check_binds",
    "program_binds",
    "python_environment",
    "run_sandboxed",
    "sandbox_interpreter",
]

_CHUNK = 65536
_TICK_S = 0.1
_GRACE_S = 2.0
# Replies wait here while the process does not read them; past this, its requests wait too.
_PENDING_BYTES = 1 << 20
# Native libraries start worker threads per core; one each keeps the task limit for others.
_THREADS_ENV = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


@dataclass(frozen=True)
class Reply:
    """What to write back for one line: ``data`` (a whole line, newline included, or nothing);
    ``done`` ends the conversation (stdin is closed once ``data`` is written)."""

    data: bytes = b""
    done: bool = False


LineHandler = Callable[[bytes], Reply]
"""Called with each line the process writes on stdout (without its newline)."""
LongLineHandler = Callable[[int], Reply]
"""Called, with the bytes read so far, for a line longer than the limit; the rest of the line is
skipped unread."""


def _as_root() -> bool:
    return os.getuid() == 0


def sandbox_interpreter() -> str:
    """The Python interpreter inside the sandbox (the path to name in a command)."""
    return sandbox_root(_as_root()).executable


@dataclass(frozen=True)
class PythonEnvironment:
    """What makes this environment's packages importable inside the sandbox."""

    binds: tuple[tuple[str, str], ...]
    """Read-only binds: site-packages, pastcast's own package, system library directories."""
    path: tuple[str, ...]
    """Entries to put first on the sandboxed interpreter's ``sys.path``."""


@cache
def python_environment() -> PythonEnvironment:
    """This environment's installed packages and pastcast itself for the sandbox's interpreter:
    its site-packages directories, pastcast's package directory (installed or not), and the
    system library directories that loaded extension modules and the interpreter link against.
    Needs a sandbox interpreter of this Python version (``SandboxUnavailable`` otherwise)."""
    root = sandbox_root(_as_root())
    here = sys.version_info[:2]
    if root.version != here:
        raise SandboxUnavailable(
            f"the sandbox's interpreter {root.executable} is Python "
            f"{root.version[0]}.{root.version[1]}, this environment's packages are for "
            f"{here[0]}.{here[1]}; install a python{here[0]}.{here[1]} readable by every user"
        )
    sites = [os.path.realpath(p) for p in site.getsitepackages() if os.path.isdir(p)]
    package = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))  # .../pastcast
    extensions = sorted(
        {
            f
            for m in list(sys.modules.values())
            if isinstance(f := getattr(m, "__file__", None), str) and f.endswith(".so")
        }
    )
    libs = _shared_libraries(extensions) if extensions else []
    # The directories of the interpreter's own libraries come whole: a package imported later
    # may link against a system library none of the loaded modules needed.
    libs += [source for source, _ in root.binds if ".so" in os.path.basename(source)]
    lib_dirs = {os.path.dirname(os.path.realpath(p)) for p in libs}
    lib_dirs = {d for d in lib_dirs if not any(d.startswith(s + os.sep) for s in sites)}
    binds = {(p, p) for p in (*sites, *lib_dirs, package)}
    path = (os.path.dirname(package), *sites)
    return PythonEnvironment(tuple(sorted(binds)), tuple(dict.fromkeys(path)))


def program_binds(executable: str) -> tuple[tuple[str, str], ...]:
    """Read-only binds for a host program and the shared libraries it links against."""
    exe = os.path.realpath(executable)
    return tuple((p, p) for p in sorted({exe, *_shared_libraries([exe])}))


def check_binds(binds: Sequence[tuple[str, str]]) -> None:
    """``ValueError`` naming the first bind whose source is missing or that the sandbox's user
    could not read, or whose place inside is not absolute. Folders closed to others above a
    source do not matter: such a source is bound through a readable mirror (``_mirror.py``)."""
    for source, dest in binds:
        if not os.path.isabs(dest):
            raise ValueError(f"sandbox bind {source!r}: the place inside, {dest!r}, is relative")
        if not os.path.exists(source):
            raise ValueError(f"sandbox bind {source!r}: no such file or directory")
        if _as_root() and not open_to_others(source):
            raise ValueError(f"sandbox bind {source!r}: not readable by other users")
        if not _as_root() and not os.access(source, os.R_OK):
            raise ValueError(f"sandbox bind {source!r}: not readable by the current user")


class _Conversation:
    """The pipes of one process: lines in, replies out, stderr kept (its tail)."""

    def __init__(
        self,
        on_line: LineHandler,
        max_line: int,
        max_stderr: int,
        on_long_line: LongLineHandler | None = None,
    ) -> None:
        self.on_line = on_line
        self.on_long_line = on_long_line
        self.skipping = False
        """The rest of a line past the limit is being read and dropped."""
        self.max_line = max_line
        self.max_stderr = max_stderr
        self.line = bytearray()
        self.pending = bytearray()
        self.stderr = bytearray()
        self.stderr_cut = False
        self.done = False

    def took(self, chunk: bytes) -> KilledReason | None:
        """Answer the complete lines read so far, while replies are not piling up."""
        if self.skipping:
            end = chunk.find(b"\n")
            if end < 0:
                return None
            chunk, self.skipping = chunk[end + 1 :], False
        self.line += chunk
        while not self.done and len(self.pending) < _PENDING_BYTES:
            end = self.line.find(b"\n")
            if end < 0:
                break
            line = bytes(self.line[:end])
            del self.line[: end + 1]
            reply = self.on_line(line)
            self.pending += reply.data
            self.done = reply.done
        if self.done:
            self.line.clear()  # anything after the last reply is not read
        elif len(self.line) > self.max_line and b"\n" not in self.line:
            if self.on_long_line is None:
                return "output_limit"
            self.pending += self.on_long_line(len(self.line)).data
            self.line.clear()
            self.skipping = True
        return None

    def took_stderr(self, chunk: bytes) -> None:
        self.stderr += chunk
        if len(self.stderr) > self.max_stderr:  # the tail holds the traceback
            del self.stderr[: len(self.stderr) - self.max_stderr]
            self.stderr_cut = True


def _want(sel: selectors.BaseSelector, fd: int, wanted: bool, events: int) -> None:
    registered = fd in sel.get_map()
    if wanted and not registered:
        sel.register(fd, events)
    elif not wanted and registered:
        sel.unregister(fd)


def run_sandboxed(
    command: Sequence[str],
    *,
    on_line: LineHandler,
    binds: Sequence[tuple[str, str]] = (),
    env: Mapping[str, str] | None = None,
    timeout_s: float = 600.0,
    memory_mb: int = 2048,
    cpu_s: int | None = None,
    scratch_mb: int = 64,
    max_line: int = 16 << 20,
    on_long_line: LongLineHandler | None = None,
    max_stderr: int = 20000,
) -> SandboxResult:
    """Run ``command`` in the sandbox, answering each line it writes through ``on_line``.

    Returns once the process and everything it started are gone: it exited, or was killed at the
    wall clock ``timeout_s``, the CPU budget ``cpu_s`` (default ``timeout_s`` rounded up), or a
    line longer than ``max_line`` bytes (``killed_reason`` says which) unless ``on_long_line``
    answers such a line instead (its rest is then skipped unread). After a reply marked
    ``done`` its stdin is closed and it has a few seconds to exit before it is killed (not a
    failure). ``stdout`` of the result is empty (it is the conversation); ``stderr`` is its last
    ``max_stderr`` bytes. An exception from ``on_line`` kills the process and propagates.

    Raises ``SandboxUnavailable`` where isolation cannot be established (there is no unsafe
    fallback for a process that runs submitted code), ``ValueError`` for a bind that does not
    exist or that the sandbox's user cannot read.
    """
    if not timeout_s > 0:
        raise ValueError(f"run_sandboxed: option timeout_s={timeout_s!r} must be positive")
    ok, why = sandbox_available()
    if not ok:
        raise SandboxUnavailable(f"refusing to run an agent without isolation: {why}")
    bwrap = find_bwrap()
    assert bwrap is not None  # sandbox_available checked it
    check_binds(binds)
    as_root = _as_root()
    if as_root:
        binds = [(reachable_source(source), dest) for source, dest in binds]
    root = sandbox_root(as_root)
    cpu = cpu_s if cpu_s is not None else max(1, math.ceil(timeout_s))
    scratch = (staging_dir(), scratch_mb << 20, scratch_inodes(scratch_mb))
    fds: list[int] = []
    with contextlib.ExitStack() as stack:  # the sandbox user's lease, held until it is gone
        stack.callback(_close_all, fds)
        fds.append(seccomp_fd := _sealed("pastcast-seccomp", sandbox_filter()))
        info_r, info_w = os.pipe2(os.O_CLOEXEC)
        fds += [info_r, info_w]
        argv = bwrap_command(
            bwrap,
            root,
            scratch=scratch[0],
            seccomp_fd=seccomp_fd,
            info_fd=info_w,
            command=command,
            binds=binds,
            env={**_THREADS_ENV, **(env or {})},
        )
        uid = stack.enter_context(lease_user())
        start = time.monotonic()
        try:
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"},
                preexec_fn=lambda: child_setup(cpu, memory_mb << 20, scratch),
                start_new_session=True,
                close_fds=True,
                pass_fds=(seccomp_fd, info_w),
                user=uid,
                group=uid,
                extra_groups=[] if uid is not None else None,
            )
        except (OSError, subprocess.SubprocessError) as exc:
            why = f"the sandbox could not start: {exc}"
            return SandboxResult(stdout="", stderr=why, exit_code=None, error=why)
        os.close(info_w)
        fds.remove(info_w)
        talk = _Conversation(on_line, max_line, max_stderr, on_long_line)
        reason, exit_code = _supervise(proc, info_r, talk, start + timeout_s, cpu)
    return SandboxResult(
        stdout="",
        stderr=bytes(talk.stderr).decode("utf-8", errors="replace"),
        exit_code=None if reason else exit_code,
        timed_out=reason == "timeout",
        killed_reason=reason,
        elapsed_s=time.monotonic() - start,
        truncated=talk.stderr_cut,
    )


def _close_all(fds: list[int]) -> None:
    for fd in fds:
        os.close(fd)


def _supervise(
    proc: subprocess.Popen[bytes], info_fd: int, talk: _Conversation, deadline: float, cpu: int
) -> tuple[KilledReason | None, int]:
    """The conversation until the process is gone; (why it was killed, exit status)."""
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    run = _Run(proc, info_fd)
    in_fd, out_fd, err_fd = proc.stdin.fileno(), proc.stdout.fileno(), proc.stderr.fileno()
    for fd in (in_fd, out_fd, err_fd, info_fd):
        os.set_blocking(fd, False)
    sel = selectors.DefaultSelector()
    reason: KilledReason | None = None
    stdin_open = True
    grace_until: float | None = None
    try:
        sel.register(info_fd, selectors.EVENT_READ)
        sel.register(err_fd, selectors.EVENT_READ)
        sel.register(run.bwrap_fd, selectors.EVENT_READ)
        out_open = True
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
            reading = out_open and len(talk.pending) < _PENDING_BYTES
            _want(sel, out_fd, reading, selectors.EVENT_READ)
            _want(sel, in_fd, stdin_open and bool(talk.pending), selectors.EVENT_WRITE)
            for key, _ in sel.select(min(deadline - now, _TICK_S)):
                fd = key.fd
                if fd == run.bwrap_fd:
                    sel.unregister(fd)
                elif fd == in_fd:
                    try:
                        del talk.pending[: os.write(fd, talk.pending)]
                    except BlockingIOError:
                        pass
                    except BrokenPipeError:  # it closed its stdin: replies go nowhere
                        talk.pending.clear()
                        stdin_open = False
                        sel.unregister(fd)
                    reason = talk.took(b"")  # lines that waited for room
                    if reason:
                        break
                else:
                    chunk = os.read(fd, _CHUNK)
                    if fd == info_fd:
                        if not chunk or run.read_info(chunk):
                            sel.unregister(fd)
                    elif fd == err_fd:
                        if chunk:
                            talk.took_stderr(chunk)
                        else:
                            sel.unregister(fd)
                    elif not chunk:
                        out_open = False
                    else:
                        reason = talk.took(chunk)
                        if reason:
                            break
            if reason:
                break
            if talk.done and not talk.pending and stdin_open:
                _want(sel, in_fd, False, selectors.EVENT_WRITE)
                proc.stdin.close()
                stdin_open = False
                grace_until = time.monotonic() + _GRACE_S
        if run.bwrap_fd in sel.get_map():  # still running: killed at a limit, or lingering
            run.kill()
        exit_code, _ = run.reap()
    except BaseException:
        run.kill()
        run.reap()
        raise
    finally:
        sel.close()
        run.close()
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            with contextlib.suppress(OSError):
                stream.close()
    return reason, exit_code
