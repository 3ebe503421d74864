"""A long-running sandboxed process that converses line by line over its stdin and stdout: the
python tool's sandbox for an agent (docs/sandbox.md, docs/isolation.md). The filter denies
sockets, so the pipes it starts with are its only channel; its root adds only the read-only
``binds`` the caller names (``python_environment``, ``program_binds``).
"""

from __future__ import annotations

import os
import site
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache

from pastcast.sandbox._mirror import open_to_others, reachable_source
from pastcast.sandbox._result import KilledReason, SandboxResult, SandboxUnavailable
from pastcast.sandbox._root import _shared_libraries, sandbox_root
from pastcast.sandbox._run import sandbox_available, sandboxed

# Replies wait here while the process does not read them; past this, its requests wait too.
_PENDING_BYTES = 1 << 20
_STDERR_BYTES = 20000
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
        on_long_line: LongLineHandler | None,
    ) -> None:
        self.on_line = on_line
        self.on_long_line = on_long_line
        self.skipping = False
        """The rest of a line past the limit is being read and dropped."""
        self.max_line = max_line
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

    def reading(self) -> bool:
        return len(self.pending) < _PENDING_BYTES

    def took_stderr(self, chunk: bytes) -> None:
        self.stderr += chunk
        if len(self.stderr) > _STDERR_BYTES:  # the tail holds the traceback
            del self.stderr[: len(self.stderr) - _STDERR_BYTES]
            self.stderr_cut = True

    def output(self, reason: KilledReason | None) -> tuple[str, str, bool]:
        """No stdout (it is the conversation); the tail of stderr."""
        return "", bytes(self.stderr).decode("utf-8", errors="replace"), self.stderr_cut


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
) -> SandboxResult:
    """Run ``command`` in the sandbox, answering each line it writes through ``on_line``
    (docs/sandbox.md), until it and everything it started are gone: it exited, or was killed at
    the wall clock, the CPU budget ``cpu_s`` (default ``timeout_s`` rounded up), or a line
    longer than ``max_line`` bytes unless ``on_long_line`` answers such a line (its rest is
    skipped unread). After a reply marked ``done`` its stdin is closed and it has a few seconds
    to exit (then killed, not a failure). The result's ``stderr`` is its last 20,000 bytes.

    Raises ``SandboxUnavailable`` where isolation cannot be established (there is no unsafe
    fallback for a process that runs submitted code), ``ValueError`` for a bind that does not
    exist or that the sandbox's user cannot read.
    """
    if not timeout_s > 0:
        raise ValueError(f"run_sandboxed: option timeout_s={timeout_s!r} must be positive")
    ok, why = sandbox_available()
    if not ok:
        raise SandboxUnavailable(f"refusing to run an agent without isolation: {why}")
    check_binds(binds)
    if _as_root():
        binds = [(reachable_source(source), dest) for source, dest in binds]
    return sandboxed(
        _Conversation(on_line, max_line, on_long_line),
        stdin=None,
        command=command,
        binds=binds,
        env={**_THREADS_ENV, **(env or {})},
        timeout_s=timeout_s,
        memory_mb=memory_mb,
        scratch_mb=scratch_mb,
        cpu_s=cpu_s,
    )
