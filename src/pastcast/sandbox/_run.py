"""``run_python``: one sandboxed, resource-limited Python run with bounded output; and
``sandboxed``, the bubblewrap launch it shares with ``run_sandboxed``. The code reaches the
interpreter through a sealed memfd on its stdin (nothing it can write back); code that cannot be
encoded or is too large is refused with ``SandboxResult.error`` before anything starts.
"""

from __future__ import annotations

import fcntl
import os
import sys
import tempfile
from collections.abc import Mapping, Sequence
from functools import cache

from pastcast.sandbox._bwrap import bwrap_command, find_bwrap
from pastcast.sandbox._result import SandboxResult, SandboxUnavailable
from pastcast.sandbox._root import SANDBOX_UID, sandbox_root
from pastcast.sandbox._scratch import scratch_inodes, staging_dir
from pastcast.sandbox._seccomp import sandbox_filter
from pastcast.sandbox._supervise import Collected, Streams, supervise
from pastcast.sandbox._users import lease_user

_SEALS = fcntl.F_SEAL_SEAL | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_WRITE


def _sealed(name: str, data: bytes) -> int:
    """A read-only, unchangeable in-memory file holding ``data``, positioned at its start."""
    fd = os.memfd_create(name, os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        fcntl.fcntl(fd, fcntl.F_ADD_SEALS, _SEALS)
        os.lseek(fd, 0, os.SEEK_SET)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _encode(code: object, max_code_bytes: int) -> tuple[bytes, str | None]:
    """The program as UTF-8, or why it cannot be run."""
    if not isinstance(code, str):
        return b"", f"code must be text, got {type(code).__name__}"
    if len(code) > max_code_bytes:  # every character is at least one byte
        return b"", f"code is larger than max_code_bytes={max_code_bytes}"
    try:
        data = code.encode("utf-8")
    except UnicodeEncodeError as exc:
        return b"", f"code is not valid Unicode text ({exc.reason} at character {exc.start})"
    if len(data) > max_code_bytes:
        return b"", f"code is larger than max_code_bytes={max_code_bytes} ({len(data)} bytes)"
    if b"\0" in data:
        return b"", f"code contains a NUL character at character {code.index(chr(0))}"
    return data, None


def sandboxed(
    streams: Streams,
    *,
    stdin: int | None,
    command: Sequence[str] | None = None,
    binds: Sequence[tuple[str, str]] = (),
    env: Mapping[str, str] | None = None,
    timeout_s: float,
    memory_mb: int,
    scratch_mb: int,
    cpu_s: int | None = None,
) -> SandboxResult:
    """``command`` (default: ``python -I -``) run in bubblewrap (``bwrap_command``) under the
    seccomp filter, as a leased user, supervised (``supervise``)."""
    bwrap = find_bwrap()
    if bwrap is None:
        raise SandboxUnavailable("bubblewrap (bwrap) is not installed")
    root = sandbox_root(os.getuid() == 0)
    scratch = (staging_dir(), scratch_mb << 20, scratch_inodes(scratch_mb))
    fds: list[int] = []
    try:
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
            env=env,
        )
        with lease_user() as uid:
            return supervise(
                argv,
                streams,
                stdin=stdin,
                timeout_s=timeout_s,
                memory_mb=memory_mb,
                cpu_s=cpu_s,
                pass_fds=(seccomp_fd, info_w),
                info_fd=info_r,
                user=uid,
                scratch=scratch,
            )
    finally:
        for fd in fds:
            os.close(fd)


def _run_code(
    data: bytes,
    *,
    max_output: int,
    timeout_s: float,
    memory_mb: int,
    scratch_mb: int,
    cpu_s: int | None = None,
    unsafe: bool = False,
) -> SandboxResult:
    """``python -I`` reading ``data`` from a sealed memfd: sandboxed, or (``unsafe``) as a plain
    resource-limited subprocess with a scrubbed environment."""
    code_fd = _sealed("pastcast-code", data)
    try:
        if not unsafe:
            return sandboxed(
                Collected(max_output),
                stdin=code_fd,
                timeout_s=timeout_s,
                memory_mb=memory_mb,
                scratch_mb=scratch_mb,
                cpu_s=cpu_s,
            )
        with tempfile.TemporaryDirectory() as scratch:
            res = supervise(
                [sys.executable, "-I", "-"],
                Collected(max_output),
                stdin=code_fd,
                timeout_s=timeout_s,
                memory_mb=memory_mb,
                cpu_s=cpu_s,
                env={"PATH": "/usr/bin:/bin", "HOME": scratch, "LANG": "C.UTF-8"},
            )
        return res.model_copy(update={"sandboxed": False})
    finally:
        os.close(code_fd)


@cache
def _self_test() -> str | None:
    """None when the sandbox works here, else why not (checked once per process)."""
    if find_bwrap() is None:
        return "bubblewrap (bwrap) is not installed; install the 'bubblewrap' package"
    probe = "import os, socket\nprint(os.getuid())\n"
    probe += "try:\n    socket.socket()\nexcept OSError:\n    print('no-net')\n"
    try:
        res = _run_code(probe.encode(), max_output=10000, timeout_s=10, memory_mb=512, scratch_mb=8)
    except SandboxUnavailable as exc:
        return str(exc)
    except OSError as exc:
        return f"bubblewrap could not start: {exc}"
    if res.exit_code != 0 or res.stdout.split() != [str(SANDBOX_UID), "no-net"]:
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
    max_code_bytes: int = 1 << 20,
    cpu_s: int | None = None,
    allow_unsafe: bool = False,
) -> SandboxResult:
    """Run ``code`` with ``python -I`` in the sandbox (docs/sandbox.md). ``SandboxUnavailable``
    where isolation cannot be established, unless ``allow_unsafe``: then the code runs as a
    plain resource-limited subprocess with a scrubbed environment but full file-system and
    network access (for trusted code only)."""
    for name, value, low in (
        ("timeout_s", timeout_s, 0.0),
        ("memory_mb", memory_mb, 64),
        ("max_output", max_output, 0),
        ("scratch_mb", scratch_mb, 1),
        ("cpu_s", 1 if cpu_s is None else cpu_s, 1),
    ):
        if not value >= low or (name == "timeout_s" and value == 0):
            raise ValueError(f"run_python: option {name}={value!r} must be at least {low}")
    problem = _self_test()
    if problem is not None and not allow_unsafe:
        raise SandboxUnavailable(
            f"refusing to run model code without isolation: {problem} "
            "(pass allow_unsafe=True only for trusted code)"
        )
    data, error = _encode(code, max_code_bytes)
    if error is not None:
        return SandboxResult(
            stdout="", stderr=error, exit_code=None, error=error, sandboxed=problem is None
        )
    return _run_code(
        data,
        max_output=max_output,
        unsafe=problem is not None,
        timeout_s=timeout_s,
        memory_mb=memory_mb,
        scratch_mb=scratch_mb,
        cpu_s=cpu_s,
    )
