"""The bubblewrap command line for one sandboxed run: every namespace unshared, capabilities
dropped, a fresh environment, the seccomp filter, a read-only root of what ``SandboxRoot`` lists
and a bounded ``/tmp`` (docs/sandbox.md, "Building blocks")."""

from __future__ import annotations

import shutil
from collections.abc import Mapping, Sequence

from pastcast.sandbox._root import SANDBOX_UID, SandboxRoot

SCRATCH = "/tmp"
_DEVICES = ("/dev/null", "/dev/zero", "/dev/random", "/dev/urandom")
_ENV = {
    "PATH": "/usr/bin:/bin",
    "HOME": SCRATCH,
    "TMPDIR": SCRATCH,
    "USER": "nobody",
    "LANG": "C.UTF-8",
    "TZ": "UTC",
}
# A hidden site-packages becomes an empty tmpfs; it is remounted read-only right after.
_HIDDEN_BYTES = 4096


def find_bwrap() -> str | None:
    return shutil.which("bwrap")


def bwrap_command(
    bwrap: str,
    root: SandboxRoot,
    *,
    scratch: str,
    seccomp_fd: int,
    info_fd: int,
    command: Sequence[str] | None = None,
    binds: Sequence[tuple[str, str]] = (),
    env: Mapping[str, str] | None = None,
) -> list[str]:
    """argv that runs ``python -I -`` (program on stdin) inside the sandbox, or ``command``.

    ``seccomp_fd`` holds the BPF filter; bubblewrap writes ``{"child-pid": N}`` (the sandbox's
    pid 1 as this process sees it) to ``info_fd``. Both are closed before the interpreter runs.
    ``scratch`` is the host-side path of the run's scratch tmpfs (mounted in the child's own mount
    namespace); ``binds`` (host path, sandbox path) are added read-only to the root; ``env`` adds
    variables.
    """
    uid = str(SANDBOX_UID)
    cmd = [
        bwrap,
        "--unshare-all",
        "--unshare-user",
        # The interpreter is the pid namespace's init: bubblewrap then reaps it itself, and exits
        # only once the whole namespace is gone (its own init would exit before being reaped).
        "--as-pid-1",
        "--disable-userns",
        "--uid",
        uid,
        "--gid",
        uid,
        "--cap-drop",
        "ALL",
        "--die-with-parent",
        "--new-session",
        "--clearenv",
        "--seccomp",
        str(seccomp_fd),
        "--info-fd",
        str(info_fd),
    ]
    for key, value in {**_ENV, **(env or {})}.items():
        cmd += ["--setenv", key, value]
    # Scratch first: an interpreter installed under /tmp is then bound on top of it.
    cmd += ["--bind", scratch, SCRATCH]
    for target, link in root.symlinks:
        cmd += ["--symlink", target, link]
    for source, dest in root.binds:
        cmd += ["--ro-bind", source, dest]
    for source, dest in binds:
        cmd += ["--ro-bind", source, dest]
    for path in root.hidden:
        cmd += ["--size", str(_HIDDEN_BYTES), "--tmpfs", path, "--remount-ro", path]
    for dev in _DEVICES:
        cmd += ["--dev-bind", dev, dev]
    cmd += ["--remount-ro", "/", "--chdir", SCRATCH]
    cmd += list(command) if command is not None else [root.executable, "-I", "-"]
    return cmd
