"""The sandbox's writable ``/tmp``: a tmpfs bounded in bytes and in inodes. bubblewrap's own
``--tmpfs`` takes a size only, and a tmpfs without ``nr_inodes`` lets code pin kernel memory
(charged to no limit) at about a gigabyte per second; so the child mounts one in a mount
namespace of its own and bubblewrap binds it (docs/sandbox.md, "Building blocks").
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import stat
import tempfile
from functools import cache

from pastcast.sandbox._result import SandboxUnavailable

_INODES_PER_MB = 64
_MIN_INODES = 1024
_CLONE_NEWNS = 0x00020000
_CLONE_NEWUSER = 0x10000000
_MS_NOSUID = 2
_MS_NODEV = 4
_PR_SET_DUMPABLE = 4
_libc = ctypes.CDLL(None, use_errno=True)  # resolved here: the child should only call it


def scratch_inodes(scratch_mb: int) -> int:
    """Inodes (files, directories, links) of a ``scratch_mb`` scratch tmpfs."""
    return max(_MIN_INODES, scratch_mb * _INODES_PER_MB)


@cache
def staging_dir() -> str:
    """An empty folder of the caller's own, where each child mounts its scratch tmpfs."""
    uid = os.getuid()
    name = "pastcast-sandbox-scratch" + ("" if uid == 0 else f"-{uid}")
    folder = os.path.join(tempfile.gettempdir(), name)
    with contextlib.suppress(FileExistsError):
        os.mkdir(folder, 0o755)
    info = os.lstat(folder)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != uid or info.st_mode & 0o022:
        raise SandboxUnavailable(f"{folder}: not a folder that only this user can write")
    os.chmod(folder, 0o755)  # the sandbox's user must reach it to mount on it
    return folder


def _check(result: int, what: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"sandbox scratch: {what}: {os.strerror(err)}")


def _write(path: str, data: str) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, data.encode())
    finally:
        os.close(fd)


def scratch_setup(target: str, size_bytes: int, inodes: int) -> None:
    """Runs in the child between fork and exec, after it took the sandbox's uid: mounts the
    scratch tmpfs on ``target`` (``staging_dir()``) in a mount namespace of its own."""
    uid, gid = os.getuid(), os.getgid()
    # A uid change made the child undumpable: its /proc files would belong to root, and it
    # could not write its own maps.
    _libc.prctl(_PR_SET_DUMPABLE, 1, 0, 0, 0)
    _check(_libc.unshare(_CLONE_NEWUSER | _CLONE_NEWNS), "unshare")
    _write("/proc/self/setgroups", "deny")
    _write("/proc/self/uid_map", f"{uid} {uid} 1")
    _write("/proc/self/gid_map", f"{gid} {gid} 1")
    options = f"size={size_bytes},nr_inodes={inodes},mode=0700".encode()
    flags = _MS_NOSUID | _MS_NODEV
    _check(_libc.mount(b"pastcast-scratch", target.encode(), b"tmpfs", flags, options), "mount")
