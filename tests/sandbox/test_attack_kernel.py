"""Attacks on the host's kernel interfaces and on the network, each with the containment it must
meet. Every run also proves that nothing of it is left alive afterwards (``run_attack``)."""

from __future__ import annotations

import contextlib
import os
import socket
import threading
import time
from pathlib import Path

import pytest
from _attack import SANDBOX_UID, fields, needs_sandbox, new_token, run_attack, tasks_named
from _attack import x86_64_only as x86_64

from pastcast.sandbox import SANDBOX_UIDS

pytestmark = needs_sandbox


def _accept_into(server: socket.socket, accepted: list[object]) -> threading.Thread:
    """Accept in the background for a few seconds, recording any connection."""

    def accept() -> None:
        with contextlib.suppress(OSError):
            accepted.append(server.accept())

    server.settimeout(3)
    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    return thread


def _stop(server: socket.socket) -> None:
    with contextlib.suppress(OSError):
        server.shutdown(socket.SHUT_RDWR)  # wakes the pending accept
    server.close()


def _status(task: str) -> dict[str, str]:
    lines = Path(task, "status").read_text().splitlines()
    return {k: v.strip() for k, _, v in (line.partition(":") for line in lines)}


def test_runs_as_an_unprivileged_host_user_without_capabilities() -> None:
    """Seen from the host: not root, no capability in any set, no new privileges, filtered."""
    token = new_token()
    seen: list[dict[str, str]] = []
    result: list[object] = []
    runner = threading.Thread(
        target=lambda: result.append(run_attack("import time; time.sleep(1.5)", token=token)),
        daemon=True,
    )
    runner.start()
    deadline = time.monotonic() + 10
    while not seen and time.monotonic() < deadline:
        for task in tasks_named(token):
            with contextlib.suppress(OSError):
                seen.append(_status(task) | {"uid_map": Path(task, "uid_map").read_text()})
        time.sleep(0.05)
    runner.join()
    assert seen, "the sandboxed process was never seen"
    status = seen[0]
    host_uid = status["Uid"].split()[0]
    assert int(host_uid) in SANDBOX_UIDS if os.getuid() == 0 else int(host_uid) == os.getuid()
    assert status["Uid"].split() == [host_uid] * 4
    assert status["Gid"].split() == [host_uid] * 4
    assert status["Groups"] == ""
    for caps in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"):
        assert int(status[caps], 16) == 0, caps
    assert status["NoNewPrivs"] == "1" and status["Seccomp"] == "2"
    # The user namespace maps the sandbox's uid onto that unprivileged host uid, not root.
    assert status["uid_map"].split() == [str(SANDBOX_UID), host_uid, "1"]


def test_global_kernel_settings_are_out_of_reach() -> None:
    res = run_attack(
        """
        for p in ["/proc/sys/kernel/core_pattern", "/proc/sys/kernel/modprobe",
                  "/proc/sysrq-trigger", "/proc/sys/vm/drop_caches", "/proc/sys/fs/binfmt_misc"]:
            try:
                open(p, "r+").close()  # opened for writing only: never written
                show(p, "WRITABLE")
            except OSError as e:
                show(p, errno.errorcode[e.errno])
        show("proc", os.path.exists("/proc"))
        """
    )
    got = fields(res)
    assert got.pop("proc") == "False"
    assert set(got.values()) == {"ENOENT"}, got


def test_sys_debugfs_and_cgroupfs_are_absent() -> None:
    res = run_attack(
        """
        for p in ["/sys", "/sys/kernel/debug", "/sys/fs/cgroup", "/sys/fs/bpf",
                  "/sys/kernel/security"]:
            show(p, os.path.exists(p))
        """
    )
    assert set(fields(res).values()) == {"False"}, res


def test_dev_holds_four_devices_and_is_read_only() -> None:
    res = run_attack(
        """
        show("dev", sorted(os.listdir("/dev")))
        show("create", attempt(lambda: open("/dev/x", "w")))
        show("shm", os.path.exists("/dev/shm"))
        """
    )
    got = fields(res)
    assert got["dev"] == str(["null", "random", "urandom", "zero"])
    assert got["create"] == "EROFS" and got["shm"] == "False"


def test_no_way_back_to_root() -> None:
    res = run_attack(
        """
        open("/tmp/f", "w").close()
        show("setuid", attempt(os.setuid, 0))
        show("setgroups", attempt(os.setgroups, [0]))
        show("chown", attempt(os.chown, "/tmp/f", 0, 0))
        """
    )
    # uid 0 does not exist in the sandbox's user namespace at all; groups need a capability.
    assert fields(res) == {"setuid": "EINVAL", "setgroups": "EPERM", "chown": "EINVAL"}, res


@x86_64
def test_mounts_and_root_changes_are_refused() -> None:
    res = run_attack(
        """
        show("mount", call(165, b"none", b"/tmp", b"tmpfs", 0, 0))
        show("umount2", call(166, b"/tmp", 2))
        show("pivot_root", call(155, b"/tmp", b"/tmp"))
        show("chroot", call(161, b"/tmp"))
        show("fsopen", call(430, b"tmpfs", 0))
        show("open_tree", call(428, -100, b"/", 1))
        """
    )
    assert set(fields(res).values()) == {"EPERM"}, res


@x86_64
def test_namespaces_cannot_be_created_or_joined() -> None:
    res = run_attack(
        """
        show("unshare_user", call(272, 0x10000000))
        show("unshare_net", call(272, 0x40000000))
        show("setns", call(308, 0, 0))  # EINVAL without the filter
        show("clone_thread_newnet", call(56, 0x00010000 | 0x800 | 0x100 | 0x40000000, 0))
        """
    )
    assert set(fields(res).values()) == {"EPERM"}, res


@x86_64
@pytest.mark.parametrize(
    ("name", "call"),
    [
        ("bpf", "call(321, 0, 0, 0)"),
        ("perf_event_open", "call(298, ctypes.create_string_buffer(128), 0, -1, -1, 0)"),
        ("userfaultfd", "call(323, 1)"),  # UFFD_USER_MODE_ONLY: allowed to plain users
        ("io_uring_setup", "call(425, 1, ctypes.create_string_buffer(120))"),
        ("keyctl_read_keyring", "call(250, 0, -4, 1)"),
        ("add_key", "call(248, b'user', b'pastcast', b'secret', 6, -3)"),
        ("request_key", "call(249, b'user', b'pastcast', 0, -3)"),
        ("kexec_load", "call(246, 0, 0, 0, 0)"),
        ("kexec_file_load", "call(320, -1, -1, 0, 0, 0)"),
        ("finit_module", "call(313, 0, b'', 0)"),
        ("delete_module", "call(176, b'loop', 0)"),
        ("ptrace_traceme", "call(101, 0, 0, 0, 0)"),
        ("process_vm_readv", "call(310, 1, 0, 0, 0, 0, 0)"),
        ("syslog_read", "call(103, 10, 0, 0)"),
        ("clock_settime", "call(227, 0, ctypes.create_string_buffer(16))"),
        ("settimeofday", "call(164, 0, 0)"),
        ("name_to_handle_at", "call(303, -100, b'/tmp', 0, 0, 0)"),
        ("fanotify_init", "call(300, 0, 0)"),
        ("acct", "call(163, 0)"),
        ("reboot", "call(169, 0, 0, 0, 0)"),
        ("swapon", "call(167, b'/tmp/x', 0)"),
        ("iopl", "call(172, 3)"),
    ],
)
def test_kernel_interface_is_refused_by_the_filter(name: str, call: str) -> None:
    res = run_attack(f"show({name!r}, {call})")
    assert fields(res) == {name: "EPERM"}, res


@x86_64
def test_terminal_input_injection_is_refused_even_with_high_bits() -> None:
    res = run_attack(
        """
        c = ctypes.c_char(b"x")
        show("tiocsti", call(16, 0, 0x5412, ctypes.byref(c)))
        show("tiocsti_high_bits", call(16, 0, 0x100005412, ctypes.byref(c)))
        show("tioclinux", call(16, 0, 0x541C, ctypes.byref(c)))
        """
    )
    assert set(fields(res).values()) == {"EPERM"}, res  # ENOTTY without the filter


@x86_64
@pytest.mark.parametrize(
    ("name", "machine_code"),
    [
        # mov eax, 359 (i386 socket); mov ebx, 2; mov ecx, 1; xor edx, edx; int 0x80; ret
        ("i386", "b8 67 01 00 00 bb 02 00 00 00 b9 01 00 00 00 31 d2 cd 80 c3"),
        # mov eax, 0x40000029 (x32 socket); mov edi, 2; mov esi, 1; xor edx, edx; syscall; ret
        ("x32", "b8 29 00 00 40 bf 02 00 00 00 be 01 00 00 00 31 d2 0f 05 c3"),
    ],
)
def test_other_system_call_abis_kill_the_process(name: str, machine_code: str) -> None:
    """socket() through the i386 or x32 ABI would bypass rules keyed on x86_64 numbers."""
    res = run_attack(
        f"""
        import mmap
        page = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
        page.write(bytes.fromhex({machine_code!r}))
        fn = ctypes.CFUNCTYPE(ctypes.c_long)(ctypes.addressof(ctypes.c_char.from_buffer(page)))
        show("returned", fn())
        """
    )
    assert "returned" not in fields(res), res
    assert res.exit_code == 128 + 31  # SIGSYS: the filter's bad-architecture action


def test_tcp_to_a_host_listener_and_dns_fail() -> None:
    accepted: list[object] = []
    servers = [socket.create_server(("127.0.0.1", 0))]
    with contextlib.suppress(OSError):
        servers.append(socket.create_server(("::1", 0), family=socket.AF_INET6))
    threads = [_accept_into(s, accepted) for s in servers]
    targets = [s.getsockname()[:2] for s in servers]
    res = run_attack(
        f"""
        import socket
        for i, addr in enumerate({targets!r}):
            show(f"connect{{i}}", attempt(socket.create_connection, addr, 2))
        show("dns", attempt(socket.getaddrinfo, "example.com", 80))
        """
    )
    for server in servers:
        _stop(server)
    for t in threads:
        t.join()
    got = fields(res)
    assert all(got[f"connect{i}"] == "EPERM" for i in range(len(targets))), got
    assert got["dns"] != "OK"
    assert not accepted


def test_no_socket_of_any_family_or_type() -> None:
    res = run_attack(
        """
        import socket
        made = []
        for family in range(64):
            for kind in (1, 2, 3, 4, 5, 10):
                try:
                    socket.socket(family, kind).close()
                    made.append((family, kind))
                except OSError as e:
                    if e.errno != errno.EPERM:
                        made.append((family, kind, errno.errorcode[e.errno]))
        show("made", made)
        """
    )
    assert fields(res)["made"] == "[]", res


@pytest.mark.parametrize(
    ("family", "kind", "proto"),
    [
        ("AF_VSOCK", 1, 0),  # to the hypervisor: crosses every network namespace
        ("AF_NETLINK route", 3, 0),
        ("AF_NETLINK uevent", 2, 15),
        ("AF_NETLINK audit", 3, 9),
        ("AF_PACKET", 3, 0x0300),
        ("AF_ALG", 5, 0),
        ("AF_KEY", 3, 2),
        ("AF_BLUETOOTH", 3, 1),
        ("AF_CAN", 3, 1),
        ("AF_TIPC", 5, 0),
        ("AF_RDS", 5, 0),
        ("AF_XDP", 3, 0),
        ("AF_QIPCRTR", 2, 0),
        ("AF_UNIX", 1, 0),
    ],
)
def test_named_socket_family_is_refused(family: str, kind: int, proto: int) -> None:
    number = {
        "AF_VSOCK": 40,
        "AF_NETLINK": 16,
        "AF_PACKET": 17,
        "AF_ALG": 38,
        "AF_KEY": 15,
        "AF_BLUETOOTH": 31,
        "AF_CAN": 29,
        "AF_TIPC": 30,
        "AF_RDS": 21,
        "AF_XDP": 44,
        "AF_QIPCRTR": 42,
        "AF_UNIX": 1,
    }[family.split()[0]]
    res = run_attack(
        f"import socket\nshow('socket', attempt(socket.socket, {number}, {kind}, {proto}))"
    )
    assert fields(res) == {"socket": "EPERM"}, res


def test_abstract_unix_socket_of_the_host_is_unreachable() -> None:
    name = "\0pastcast-test-" + new_token()
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(name)
    server.listen()
    accepted: list[object] = []
    t = _accept_into(server, accepted)
    res = run_attack(
        f"""
        import socket
        def connect():
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect({name!r})
        show("connect", attempt(connect))
        """
    )
    _stop(server)
    t.join()
    assert fields(res) == {"connect": "EPERM"} and not accepted, res


@x86_64
def test_only_unix_socketpairs_exist_and_asyncio_runs() -> None:
    res = run_attack(
        """
        import asyncio, socket
        show("unix", attempt(socket.socketpair, socket.AF_UNIX))
        show("inet", attempt(socket.socketpair, socket.AF_INET))
        show("netlink", call(53, 16, 3, 0, ctypes.create_string_buffer(8)))
        show("unix_high_bits", call(53, 0x100000001, 1, 0, ctypes.create_string_buffer(8)))
        show("asyncio", asyncio.run(asyncio.sleep(0, "ran")))
        """
    )
    got = fields(res)
    assert got == {
        "unix": "OK",
        "inet": "EPERM",
        "netlink": "EPERM",
        "unix_high_bits": "EPERM",
        "asyncio": "ran",
    }, res
