"""A tiny seccomp filter that forbids creating processes (threads stay allowed).

RLIMIT_NPROC does not hold a fork bomb when the sandbox runs as root on the host (the kernel
exempts the root user), so process creation is refused at the system-call level instead:
``fork``/``vfork`` and ``clone`` without ``CLONE_THREAD`` fail with EAGAIN, ``clone3`` with ENOSYS
(the C library then falls back to ``clone`` for threads). Threads are bounded by RLIMIT_AS, since
each reserves its stack. Written as raw classic BPF so no extra library is needed.
"""

from __future__ import annotations

import errno
import platform
import struct

__all__ = ["no_fork_filter"]

_LD_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JGE = 0x35  # BPF_JMP | BPF_JGE | BPF_K
_JSET = 0x45  # BPF_JMP | BPF_JSET | BPF_K
_RET = 0x06  # BPF_RET | BPF_K
_ALLOW = 0x7FFF0000
_KILL = 0x80000000
_ERRNO = 0x00050000
_CLONE_THREAD = 0x00010000

# (audit arch, clone, clone3, fork-like syscalls)
_ARCHES = {
    "x86_64": (0xC000003E, 56, 435, (57, 58)),
    "aarch64": (0xC00000B7, 220, 435, ()),
}


def _ins(code: int, jt: int, jf: int, k: int) -> bytes:
    return struct.pack("<HBBI", code, jt, jf, k)


def no_fork_filter() -> bytes | None:
    """The BPF program for this machine's architecture, or None where it is not known."""
    spec = _ARCHES.get(platform.machine())
    if spec is None:
        return None
    arch, clone, clone3, forks = spec
    eagain = _ERRNO | errno.EAGAIN
    prog = [
        _ins(_LD_ABS, 0, 0, 4),  # seccomp_data.arch
        _ins(_JEQ, 1, 0, arch),
        _ins(_RET, 0, 0, _KILL),
        _ins(_LD_ABS, 0, 0, 0),  # seccomp_data.nr
        _ins(_JGE, 0, 1, 0x40000000),  # x32 system calls
        _ins(_RET, 0, 0, _KILL),
    ]
    for nr in forks:
        prog += [_ins(_JEQ, 0, 1, nr), _ins(_RET, 0, 0, eagain)]
    prog += [
        _ins(_JEQ, 0, 1, clone3),
        _ins(_RET, 0, 0, _ERRNO | errno.ENOSYS),
        _ins(_JEQ, 1, 0, clone),
        _ins(_RET, 0, 0, _ALLOW),
        _ins(_LD_ABS, 0, 0, 16),  # seccomp_data.args[0], low 32 bits (clone flags)
        _ins(_JSET, 0, 1, _CLONE_THREAD),
        _ins(_RET, 0, 0, _ALLOW),
        _ins(_RET, 0, 0, eagain),
    ]
    return b"".join(prog)
