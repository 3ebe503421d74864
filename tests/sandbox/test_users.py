"""Each sandbox of a root caller leases a host uid no other running sandbox holds, and the
lease ends with its holder, however it ends."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys

import pytest

from pastcast.sandbox import SANDBOX_UIDS
from pastcast.sandbox._users import _LOCK_FOLDER, lease_user

pytestmark = pytest.mark.skipif(os.getuid() != 0, reason="only a root caller leases users")


def test_leases_held_at_once_are_distinct() -> None:
    with lease_user() as a, lease_user() as b, lease_user() as c:
        assert len({a, b, c}) == 3 and {a, b, c} <= set(SANDBOX_UIDS)


def test_a_killed_holder_leaves_its_uid_free() -> None:
    hold = (
        "import time\n"
        "from pastcast.sandbox._users import lease_user\n"
        "with lease_user() as uid:\n"
        "    print(uid, flush=True)\n"
        "    time.sleep(60)\n"
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", hold],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert holder.stdout is not None
    uid = int(holder.stdout.readline())
    fd = os.open(os.path.join(_LOCK_FOLDER, str(uid)), os.O_RDWR)
    try:
        with pytest.raises(BlockingIOError):
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # held while it lives
        holder.kill()
        holder.wait()
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # free once it is gone
    finally:
        os.close(fd)
        holder.stdout.close()
