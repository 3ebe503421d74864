"""Helpers for the sandbox suites: run an attack, then prove nothing of it is left running."""

from __future__ import annotations

import fcntl
import os
import platform
import re
import secrets
import textwrap
from pathlib import Path
from typing import Any

import pytest

from pastcast.sandbox import SANDBOX_UIDS, SandboxResult, run_python, sandbox_available
from pastcast.sandbox._users import _LOCK_FOLDER as LEASES

available, why = sandbox_available()
needs_sandbox = pytest.mark.skipif(not available, reason=f"sandbox unavailable: {why}")
x86_64_only = pytest.mark.skipif(
    platform.machine() != "x86_64", reason="raw system call numbers and machine code for x86_64"
)

SANDBOX_UID = 65534
"""The sandbox's uid inside; on the host a root caller's sandboxes run as uids of SANDBOX_UIDS."""
HOST_UIDS = set(SANDBOX_UIDS) if os.getuid() == 0 else {os.getuid()}

# Runs first in every attack: names the process (threads inherit the name) so the host can find
# anything it leaves behind, and gives raw system calls that report the errno by name.
PRELUDE = """\
import ctypes, errno, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.prctl(15, b"{token}", 0, 0, 0)
libc.syscall.restype = ctypes.c_long
def call(nr, *args):
    ctypes.set_errno(0)
    conv = [ctypes.c_long(a) if isinstance(a, int) else a for a in args]
    r = libc.syscall(ctypes.c_long(nr), *conv)
    return errno.errorcode.get(ctypes.get_errno(), "?") if r == -1 else "OK"
def show(key, value):
    print(f"{{key}}={{value}}", flush=True)
def attempt(fn, *args):
    try:
        fn(*args)
        return "OK"
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))
"""


def tasks_named(token: str) -> list[str]:
    """Host tasks (threads included) whose name is ``token``."""
    found = []
    for comm in Path("/proc").glob("[0-9]*/task/[0-9]*/comm"):
        try:
            if comm.read_text().strip() == token:
                found.append(str(comm.parent))
        except OSError:
            continue
    return found


def _sandbox_user_tasks() -> set[tuple[str, str, int]]:
    """(pid, start time, uid) of every host process running as a sandbox's user."""
    out = set()
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            uid = re.search(r"^Uid:\s+(\d+)", status.read_text(), re.M)
            if uid and int(uid.group(1)) in HOST_UIDS:
                start = (status.parent / "stat").read_text().rsplit(")", 1)[1].split()[19]
                out.add((status.parent.name, start, int(uid.group(1))))
        except (OSError, IndexError):
            continue
    return out


def _leased(uid: int) -> bool:
    """Whether a running sandbox (of this process or another) holds ``uid`` now."""
    if os.getuid() != 0:
        return False
    try:
        fd = os.open(os.path.join(LEASES, str(uid)), os.O_RDONLY)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def new_token() -> str:
    return "pc" + secrets.token_hex(6)


def run_attack(code: str, token: str | None = None, **options: Any) -> SandboxResult:
    """Run ``code`` (after the prelude) and assert that no process or thread of it survives."""
    token = token or new_token()
    before, children = _sandbox_user_tasks(), _our_children()
    res = run_python(PRELUDE.format(token=token) + textwrap.dedent(code), **options)
    assert not tasks_named(token), f"sandbox tasks still alive after the call: {res}"
    # Another process's sandboxes may run meanwhile: they hold their users' leases.
    left = {t for t in _sandbox_user_tasks() - before if not _leased(t[2])}
    left &= _sandbox_user_tasks()  # and still alive once the lease was seen free
    assert not left, f"processes of the sandbox user still alive: {left}"
    assert not _our_children() - children, "a child process of the caller was not reaped"
    return res


def _our_children() -> set[str]:
    """Pids whose parent is this process (other fixtures may keep servers running)."""
    out = set()
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            ppid = re.search(r"^PPid:\s+(\d+)", status.read_text(), re.M)
        except OSError:
            continue
        if ppid and int(ppid.group(1)) == os.getpid():
            out.add(status.parent.name)
    return out


def fields(res: SandboxResult) -> dict[str, str]:
    """``key=value`` lines the attack printed."""
    return dict(line.split("=", 1) for line in res.stdout.splitlines() if "=" in line)
