"""The bubblewrap command line for one sandboxed Python run.

Isolation: every namespace unshared (no network at all, not even loopback to the host; own pid
tree, so everything it started dies with it), all capabilities dropped, an unprivileged uid, a
read-only view of only the system directories and the interpreter's prefixes, and a private,
size-limited tmpfs as the only writable place. The environment is replaced, so no API key or
data path of the parent reaches the code.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

__all__ = ["SCRATCH", "bwrap_command", "find_bwrap"]

SCRATCH = "/tmp"
_SYSTEM = ("/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin")
_SYSTEM_FILES = ("/etc/ld.so.cache", "/etc/localtime")
_ENV = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "HOME": SCRATCH,
    "TMPDIR": SCRATCH,
    "LANG": "C.UTF-8",
    # Numeric libraries would start one thread per core; threads count against the process limit.
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
}


def find_bwrap() -> str | None:
    return shutil.which("bwrap")


def _interpreter_dirs() -> list[str]:
    """Prefixes the interpreter needs: the venv, its base installation, and the real binary's."""
    dirs = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    real = Path(os.path.realpath(sys.executable)).parent.parent
    dirs.add(str(real))
    out = sorted({os.path.realpath(d) for d in dirs} | dirs)
    # Anything already under /usr is covered by the system bind.
    return [d for d in out if not d.startswith("/usr/") and d != "/usr" and os.path.isdir(d)]


def bwrap_command(bwrap: str, scratch_bytes: int, seccomp_fd: int | None) -> list[str]:
    """argv that runs ``python -I -`` (program on stdin) inside the sandbox.

    ``seccomp_fd`` is an open file holding a BPF filter applied just before the interpreter runs.
    """
    cmd = [
        bwrap,
        "--unshare-all",
        "--unshare-user",
        "--uid",
        "65534",
        "--gid",
        "65534",
        "--disable-userns",
        "--cap-drop",
        "ALL",
        "--die-with-parent",
        "--new-session",
        "--clearenv",
    ]
    if seccomp_fd is not None:
        cmd += ["--seccomp", str(seccomp_fd)]
    for key, value in _ENV.items():
        cmd += ["--setenv", key, value]
    for path in _SYSTEM:
        if os.path.islink(path):
            cmd += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            cmd += ["--ro-bind", path, path]
    for path in _SYSTEM_FILES:
        cmd += ["--ro-bind-try", path, path]
    cmd += ["--proc", "/proc", "--dev", "/dev"]
    cmd += ["--size", str(scratch_bytes), "--tmpfs", SCRATCH]
    # After the tmpfs: an interpreter or venv that lives under /tmp must stay visible.
    for path in _interpreter_dirs():
        cmd += ["--ro-bind", path, path]
    cmd += ["--remount-ro", "/", "--chdir", SCRATCH, sys.executable, "-I", "-"]
    return cmd
