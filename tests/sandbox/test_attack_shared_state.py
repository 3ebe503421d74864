"""Kernel interfaces through which concurrent sandboxes could see each other: host-wide counters,
locks and watches on the read-only files every sandbox shares, page-cache residency probes and
evictions, per-user priorities, and extended attributes (kernel memory outside every limit).
Each is refused by the filter, with high bits of 32-bit arguments unable to slip past, while
the neighbouring calls that computation uses still work. One sandbox run makes every attempt."""

from __future__ import annotations

import pytest
from _attack import fields, needs_sandbox, run_attack
from _attack import x86_64_only as x86_64

pytestmark = [needs_sandbox, x86_64]

_SETUP = """\
import fcntl, mmap
shared = os.open(os.__file__, os.O_RDONLY)  # the same inode in every sandbox
folder = os.open("/tmp", os.O_RDONLY | os.O_DIRECTORY)
open("/tmp/x", "w").write("x" * 8192)
mine = os.open("/tmp/x", os.O_RDWR)
view = mmap.mmap(shared, 4096, prot=mmap.PROT_READ)
address = ctypes.addressof(ctypes.c_char.from_buffer_copy(b"x")) & ~4095
lock = ctypes.create_string_buffer(32)
buf = ctypes.create_string_buffer(256)
HIGH = 0x100000000
"""

REFUSED = {
    "sysinfo": ("call(99, buf)", "EPERM"),
    "statvfs": ("attempt(os.statvfs, '/usr')", "EPERM"),
    "fstatvfs": ("attempt(os.fstatvfs, shared)", "EPERM"),
    "inotify_init": ("call(253)", "EPERM"),
    "inotify_init1": ("call(294, 0)", "EPERM"),
    "inotify_add_watch": ("call(254, 0, b'/tmp', 0x20)", "EPERM"),
    "flock_shared_file": ("attempt(fcntl.flock, shared, fcntl.LOCK_EX | fcntl.LOCK_NB)", "ENOLCK"),
    "lockf_shared_file": ("attempt(fcntl.lockf, shared, fcntl.LOCK_SH | fcntl.LOCK_NB)", "ENOLCK"),
    "fcntl_getlk_high_bits": ("call(72, shared, HIGH | 5, lock)", "ENOLCK"),
    "fcntl_setlkw": ("call(72, mine, 7, lock)", "ENOLCK"),
    "fcntl_ofd_getlk": ("call(72, shared, 36, lock)", "ENOLCK"),
    "fcntl_ofd_setlk": ("call(72, shared, 37, lock)", "ENOLCK"),
    "fcntl_ofd_setlkw": ("call(72, shared, 38, lock)", "ENOLCK"),
    "dnotify": ("call(72, folder, 1026, 1)", "EPERM"),
    "dnotify_high_bits": ("call(72, folder, HIGH | 1026, 1)", "EPERM"),
    "mincore": ("call(27, address, 4096, buf)", "EPERM"),
    # The kernel itself now refuses it on files the caller cannot write; older ones did not.
    "cachestat": ("call(451, mine, buf, buf, 0)", "EPERM"),
    "readahead": ("call(187, shared, 0, 4096)", "EPERM"),
    "fadvise_dontneed": (
        "attempt(os.posix_fadvise, shared, 0, 0, os.POSIX_FADV_DONTNEED)",
        "EPERM",
    ),
    "fadvise_noreuse": ("attempt(os.posix_fadvise, shared, 0, 0, os.POSIX_FADV_NOREUSE)", "EPERM"),
    "madvise_pageout": ("attempt(view.madvise, 21)", "EPERM"),  # MADV_PAGEOUT
    "madvise_cold": ("attempt(view.madvise, 20)", "EPERM"),  # MADV_COLD
    "preadv2_nowait": ("attempt(os.preadv, shared, [bytearray(16)], 0, os.RWF_NOWAIT)", "ENOTSUP"),
    "setxattr": ("call(188, b'/tmp/x', b'user.a', b'v', 1, 0)", "ENOTSUP"),
    "lsetxattr": ("call(189, b'/tmp/x', b'user.a', b'v', 1, 0)", "ENOTSUP"),
    "fsetxattr": ("call(190, mine, b'user.a', b'v', 1, 0)", "ENOTSUP"),
    "removexattr": ("call(197, b'/tmp/x', b'user.a')", "ENOTSUP"),
    "lremovexattr": ("call(198, b'/tmp/x', b'user.a')", "ENOTSUP"),
    "fremovexattr": ("call(199, mine, b'user.a')", "ENOTSUP"),
    "setxattrat": ("call(463, -100, b'/tmp/x', 0, b'user.a', buf, 32)", "ENOTSUP"),
    "removexattrat": ("call(466, -100, b'/tmp/x', 0, b'user.a')", "ENOTSUP"),
    "setpriority_user": ("attempt(os.setpriority, os.PRIO_USER, 0, 19)", "EPERM"),
    "getpriority_user": ("attempt(os.getpriority, os.PRIO_USER, 0)", "EPERM"),
    "ioprio_set_user": ("call(251, 3, 0, 0)", "EPERM"),
    "ioprio_get_user": ("call(252, 3, 0)", "EPERM"),
}

ALLOWED = {
    "fadvise_willneed": "attempt(os.posix_fadvise, shared, 0, 0, os.POSIX_FADV_WILLNEED)",
    "madvise_dontneed": "attempt(view.madvise, mmap.MADV_DONTNEED)",
    "preadv2_plain": "attempt(os.preadv, shared, [bytearray(16)], 0, 0)",
    "getpriority_own": "attempt(os.getpriority, os.PRIO_PROCESS, 0)",
    "fcntl_getfl": "attempt(fcntl.fcntl, shared, fcntl.F_GETFL)",
    "listxattr": "attempt(os.listxattr, '/tmp/x')",
    "cpu_count": "'OK' if os.cpu_count() else 'none'",
}


@pytest.fixture(scope="module")
def attempts() -> dict[str, str]:
    lines = [f"show({name!r}, {code})" for name, (code, _) in REFUSED.items()]
    lines += [f"show({name!r}, {code})" for name, code in ALLOWED.items()]
    res = run_attack(_SETUP + "\n".join(lines) + "\n")
    got = fields(res)
    assert res.exit_code == 0 and len(got) == len(REFUSED) + len(ALLOWED), res
    return got


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_interface_shared_between_sandboxes_is_refused(name: str, attempts: dict[str, str]) -> None:
    assert attempts[name] == REFUSED[name][1]


@pytest.mark.parametrize("name", sorted(ALLOWED))
def test_neighbouring_call_still_works(name: str, attempts: dict[str, str]) -> None:
    assert attempts[name] == "OK"
