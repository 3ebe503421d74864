"""A host user of its own for every concurrent sandbox: the kernel keeps per-user counters
across the host (tasks, pending signals, pipe pages, ...) that two sandboxes under one uid could
signal each other through. A root caller leases a uid from ``SANDBOX_UIDS`` for the call (an
exclusive ``flock``, so it ends with its holder, crash included); any other caller runs every
sandbox as itself (docs/sandbox.md, docs/isolation.md).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import secrets
import stat
from collections.abc import Iterator

from pastcast.sandbox._result import SandboxUnavailable

SANDBOX_UIDS = range(1_600_000_000, 1_600_000_000 + 4096)
"""Host uids (and gids) of root-started sandboxes: outside system users, regular users and the
subordinate ranges tools allocate from 100000 up; one per sandbox running at a time."""

# One folder for the whole host, whatever TMPDIR a process has: every root process that starts
# sandboxes must see every lease.
_LOCK_FOLDER = "/tmp/pastcast-sandbox-users"


@contextlib.contextmanager
def lease_user() -> Iterator[int | None]:
    """A uid no other sandbox holds while the block runs; None when the caller is not root."""
    if os.getuid() != 0:
        yield None
        return
    # root's folder of lease files, refused if anyone else could have planted or changed it
    folder = _LOCK_FOLDER
    with contextlib.suppress(FileExistsError):
        os.mkdir(folder, 0o700)
    info = os.lstat(folder)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != 0 or info.st_mode & 0o022:
        raise SandboxUnavailable(
            f"{folder}: not a folder that only root can write (the sandbox users' leases)"
        )
    start = secrets.randbelow(len(SANDBOX_UIDS))  # concurrent callers rarely probe the same
    for i in range(len(SANDBOX_UIDS)):
        uid = SANDBOX_UIDS[(start + i) % len(SANDBOX_UIDS)]
        flags = os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW
        fd = os.open(os.path.join(folder, str(uid)), flags, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                continue
            raise
        try:
            yield uid
        finally:
            os.close(fd)  # releases the lease
        return
    raise SandboxUnavailable(
        f"all {len(SANDBOX_UIDS)} sandbox users are in use by sandboxes running now"
    )
