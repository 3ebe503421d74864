"""The seccomp filter of the sandbox, compiled by libseccomp (through ``pyseccomp``): default
allow, every kernel interface plain computation does not need refused, including what concurrent
sandboxes could signal each other through (a covert channel across cutoffs). The list and why
each entry is on it: docs/sandbox.md ("Building blocks", "Guarantees").
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterable
from functools import cache
from typing import Any

from pastcast.sandbox._result import SandboxUnavailable

_CLONE_THREAD = 0x00010000
# Namespace flags of clone: refused even on a thread (no capability could use them anyway).
_CLONE_NAMESPACES = (
    0x00000080,  # CLONE_NEWTIME
    0x00020000,  # CLONE_NEWNS
    0x02000000,  # CLONE_NEWCGROUP
    0x04000000,  # CLONE_NEWUTS
    0x08000000,  # CLONE_NEWIPC
    0x10000000,  # CLONE_NEWUSER
    0x20000000,  # CLONE_NEWPID
    0x40000000,  # CLONE_NEWNET
)
_AF_UNIX = 1
_TIOCSTI = 0x5412
_TIOCLINUX = 0x541C
_F_SETPIPE_SZ = 1031
_PERSONALITY_QUERY = 0xFFFFFFFF
_F_NOTIFY = 1026
# F_GETLK, F_SETLK, F_SETLKW and their open-file-description forms.
_LOCK_COMMANDS = (5, 6, 7, 36, 37, 38)
_POSIX_FADV_DONTNEED = 4
_POSIX_FADV_NOREUSE = 5
_MADV_COLD = 20
_MADV_PAGEOUT = 21
_RWF_NOWAIT = 0x08
_PRIO_USER = 2
_IOPRIO_WHO_USER = 3
# System calls newer than libseccomp 2.5 knows, by their x86_64 numbers (others: unknown, skipped).
_NEWER_X86_64 = {"cachestat": 451, "setxattrat": 463, "removexattrat": 466}

# Refused with EPERM. Names unknown to the installed libseccomp are skipped (see _resolve).
DENIED: tuple[str, ...] = (
    # network: every address family, including the ones that cross a network namespace
    # (AF_VSOCK to the hypervisor, netlink, packet, ...)
    "socket",
    "socketcall",
    # namespaces, mounts and changing root
    "unshare",
    "setns",
    "mount",
    "umount",
    "umount2",
    "pivot_root",
    "chroot",
    "open_tree",
    "move_mount",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "mount_setattr",
    # other processes and the kernel's own interfaces
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "process_madvise",
    "kcmp",
    "pidfd_getfd",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "keyctl",
    "add_key",
    "request_key",
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    "create_module",
    "query_module",
    "get_kernel_syms",
    "reboot",
    "swapon",
    "swapoff",
    "acct",
    "quotactl",
    "quotactl_fd",
    "syslog",
    "lookup_dcookie",
    "nfsservctl",
    "_sysctl",
    "sysfs",
    "ustat",
    "uselib",
    "vhangup",
    "iopl",
    "ioperm",
    "modify_ldt",
    "vm86",
    "vm86old",
    "open_by_handle_at",
    "name_to_handle_at",
    "fanotify_init",
    "mbind",
    "set_mempolicy",
    "migrate_pages",
    "move_pages",
    # clocks and host identity
    "settimeofday",
    "clock_settime",
    "clock_adjtime",
    "adjtimex",
    "sethostname",
    "setdomainname",
    # memory that RLIMIT_AS does not count
    "memfd_create",
    "memfd_secret",
    "ipc",
    "shmget",
    "shmat",
    "shmdt",
    "shmctl",
    "msgget",
    "msgsnd",
    "msgrcv",
    "msgctl",
    "semget",
    "semop",
    "semctl",
    "semtimedop",
    "mq_open",
    "mq_unlink",
    "mq_timedsend",
    "mq_timedreceive",
    "mq_notify",
    "mq_getsetattr",
    # host-wide counters another sandbox moves (task count, load, free memory, free blocks)
    "sysinfo",
    "statfs",
    "fstatfs",
    # watching the read-only files every sandbox shares, or their page-cache residency
    "inotify_init",
    "inotify_init1",
    "inotify_add_watch",
    "mincore",
    "cachestat",
    "readahead",
)
# Refused with ENOLCK: a lock on a shared read-only file is visible to every other sandbox.
LOCKS: tuple[str, ...] = ("flock",)
# Refused with EOPNOTSUPP, as on a file system without them: kernel memory outside every limit.
XATTR_WRITES: tuple[str, ...] = (
    "setxattr",
    "lsetxattr",
    "fsetxattr",
    "setxattrat",
    "removexattr",
    "lremovexattr",
    "fremovexattr",
    "removexattrat",
)
# Process creation fails like an exhausted process table, so callers see an ordinary OSError.
FORKS: tuple[str, ...] = ("fork", "vfork")


def _library() -> Any:
    try:
        import pyseccomp
    except Exception as exc:  # the binding raises RuntimeError/OSError when libseccomp is absent
        raise SandboxUnavailable(
            f"the seccomp library is unavailable ({exc}); install libseccomp2 and pyseccomp"
        ) from exc
    return pyseccomp


def _resolve(lib: Any, names: Iterable[str]) -> list[int]:
    """System call numbers of ``names``; pseudo numbers (negative, not on this architecture)
    are kept, since libseccomp ignores them, and unknown names are dropped."""
    out = []
    x86_64 = os.uname().machine == "x86_64"
    for name in names:
        nr = int(lib.resolve_syscall(lib.Arch.NATIVE, name))
        if nr == -1 and x86_64:
            nr = _NEWER_X86_64.get(name, -1)
        if nr != -1:
            out.append(nr)
    return out


def _add_channel_rules(lib: Any, flt: Any) -> None:
    """What concurrent sandboxes could signal each other through, and extended attributes."""
    eperm = lib.ERRNO(errno.EPERM)
    for nr in _resolve(lib, LOCKS):
        flt.add_rule(lib.ERRNO(errno.ENOLCK), nr)
    for nr in _resolve(lib, XATTR_WRITES):
        flt.add_rule(lib.ERRNO(errno.EOPNOTSUPP), nr)
    low = 0xFFFFFFFF
    for command in _LOCK_COMMANDS:
        flt.add_rule(lib.ERRNO(errno.ENOLCK), "fcntl", lib.Arg(1, lib.MASKED_EQ, low, command))
    flt.add_rule(eperm, "fcntl", lib.Arg(1, lib.MASKED_EQ, low, _F_NOTIFY))
    for advice in (_POSIX_FADV_DONTNEED, _POSIX_FADV_NOREUSE):
        flt.add_rule(eperm, "fadvise64", lib.Arg(3, lib.MASKED_EQ, low, advice))
    for advice in (_MADV_COLD, _MADV_PAGEOUT):
        flt.add_rule(eperm, "madvise", lib.Arg(2, lib.MASKED_EQ, low, advice))
    nowait = lib.Arg(5, lib.MASKED_EQ, _RWF_NOWAIT, _RWF_NOWAIT)
    flt.add_rule(lib.ERRNO(errno.EOPNOTSUPP), "preadv2", nowait)
    for call in ("getpriority", "setpriority"):
        flt.add_rule(eperm, call, lib.Arg(0, lib.MASKED_EQ, low, _PRIO_USER))
    for call in ("ioprio_get", "ioprio_set"):
        flt.add_rule(eperm, call, lib.Arg(0, lib.MASKED_EQ, low, _IOPRIO_WHO_USER))


@cache
def sandbox_filter() -> bytes:
    """The compiled BPF program for this machine's architecture (built once per process)."""
    lib = _library()
    eperm, eagain = lib.ERRNO(errno.EPERM), lib.ERRNO(errno.EAGAIN)
    flt = lib.SyscallFilter(lib.ALLOW)
    flt.set_attr(lib.Attr.ACT_BADARCH, lib.KILL_PROCESS)
    for nr in _resolve(lib, DENIED):
        flt.add_rule(eperm, nr)
    for nr in _resolve(lib, FORKS):
        flt.add_rule(eagain, nr)
    # glibc creates threads with clone3 and falls back to clone on ENOSYS; clone3's flags sit in
    # a structure the filter cannot read, so only clone (flags in a register) is allowed.
    flt.add_rule(lib.ERRNO(errno.ENOSYS), "clone3")
    flt.add_rule(eagain, "clone", lib.Arg(0, lib.MASKED_EQ, _CLONE_THREAD, 0))
    for flag in _CLONE_NAMESPACES:
        flt.add_rule(eperm, "clone", lib.Arg(0, lib.MASKED_EQ, flag, flag))
    flt.add_rule(eperm, "socketpair", lib.Arg(0, lib.NE, _AF_UNIX))
    # ioctl and fcntl commands are 32-bit in the kernel: compare the low half only, so high bits
    # set by the caller cannot slip a command past the filter.
    for request in (_TIOCSTI, _TIOCLINUX):
        flt.add_rule(eperm, "ioctl", lib.Arg(1, lib.MASKED_EQ, 0xFFFFFFFF, request))
    flt.add_rule(eperm, "fcntl", lib.Arg(1, lib.MASKED_EQ, 0xFFFFFFFF, _F_SETPIPE_SZ))
    flt.add_rule(eperm, "personality", lib.Arg(0, lib.NE, _PERSONALITY_QUERY))
    _add_channel_rules(lib, flt)
    # Exported into a memfd (this process is not filtered): a pipe could fill up while written.
    fd = os.memfd_create("pastcast-seccomp-export", os.MFD_CLOEXEC)
    with os.fdopen(fd, "w+b") as out:
        flt.export_bpf(out)
        out.seek(0)
        return out.read()
