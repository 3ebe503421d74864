"""Attacks on process and thread creation, on memory that rlimits do not count and on the file
system, each with the containment it must meet (and nothing left alive: ``run_attack``)."""

from __future__ import annotations

import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from _attack import fields, needs_sandbox, run_attack
from _attack import x86_64_only as x86_64

from pastcast.sandbox._supervise import MAX_FILES, MAX_TASKS

pytestmark = needs_sandbox

REPO_ROOT = Path(__file__).resolve().parents[2]

# spawn(flags, stack): clone(flags, stack, 0, 0, 0); the child loops on pause(), which needs no
# stack, so every thread can share one; the parent returns the new tid or -errno.
_SPAWN = "b8 38 00 00 00 31 d2 45 31 d2 45 31 c0 0f 05 48 85 c0 75 09 b8 22 00 00 00 0f 05 eb f7 c3"


@x86_64
def test_raw_thread_bomb_stops_at_the_task_limit() -> None:
    """Threads made with clone() directly reserve no stack, so RLIMIT_AS cannot bound them."""
    res = run_attack(
        f"""
        import mmap
        page = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
        page.write(bytes.fromhex({_SPAWN!r}))
        spawn = ctypes.CFUNCTYPE(ctypes.c_long, ctypes.c_long, ctypes.c_void_p)(
            ctypes.addressof(ctypes.c_char.from_buffer(page)))
        stack = mmap.mmap(-1, 65536)
        top = ctypes.addressof(ctypes.c_char.from_buffer(stack)) + 65536 - 64
        flags = 0x100 | 0x200 | 0x400 | 0x800 | 0x10000 | 0x40000  # a thread, as glibc makes
        made, last = 0, 0
        while made < 2000:
            last = spawn(flags, top)
            if last < 0:
                break
            made += 1
        show("made", made)
        show("error", errno.errorcode.get(-last, last))
        """
    )
    got = fields(res)
    assert 0 < int(got["made"]) < MAX_TASKS, res
    assert got["error"] == "EAGAIN"


def test_python_thread_bomb_is_bounded() -> None:
    res = run_attack(
        """
        import threading
        stop, made = threading.Event(), 0
        try:
            while made < 2000:
                threading.Thread(target=stop.wait, daemon=True).start()
                made += 1
        except RuntimeError:
            pass
        show("made", made)
        stop.set()
        """
    )
    assert 0 < int(fields(res)["made"]) < MAX_TASKS, res


@x86_64
def test_no_process_can_be_created_by_any_call() -> None:
    res = run_attack(
        """
        show("fork", attempt(os.fork))
        show("clone", call(56, 17, 0))  # SIGCHLD only: a new process
        show("vfork", call(58))
        show("clone3", call(435, ctypes.create_string_buffer(88), 88))
        show("posix_spawn", attempt(os.posix_spawn, sys.executable, [sys.executable], {}))
        """
    )
    got = fields(res)
    assert got == {
        "fork": "EAGAIN",
        "clone": "EAGAIN",
        "vfork": "EAGAIN",
        "clone3": "ENOSYS",  # glibc then makes threads with clone
        "posix_spawn": "EAGAIN",
    }, res


def test_daemonising_leaves_nothing_behind() -> None:
    res = run_attack(
        """
        import threading
        show("setsid", attempt(os.setsid))  # already a session leader of its own
        show("double_fork", attempt(os.fork))
        threading.Thread(target=lambda: [None for _ in iter(int, 1)], daemon=True).start()
        show("main", "exits")
        """
    )
    assert fields(res) == {"setsid": "EPERM", "double_fork": "EAGAIN", "main": "exits"}
    assert res.exit_code == 0 and res.killed_reason is None


@x86_64
@pytest.mark.parametrize(
    ("name", "code"),
    [
        ("memfd_create", "attempt(os.memfd_create, 'x')"),
        ("shmget", "call(29, 0, 64 << 20, 0o1000 | 0o600)"),
        ("msgget", "call(68, 0, 0o1000 | 0o600)"),
        ("semget", "call(64, 0, 1, 0o1000 | 0o600)"),
        ("mq_open", "call(240, b'q', 0o100 | 2, 0o600, 0)"),
        ("F_SETPIPE_SZ", "attempt(__import__('fcntl').fcntl, os.pipe()[1], 1031, 1 << 20)"),
    ],
)
def test_memory_outside_rlimits_is_refused(name: str, code: str) -> None:
    res = run_attack(f"show({name!r}, {code})")
    assert fields(res) == {name: "EPERM"}, res


def test_no_shared_memory_tmpfs_and_no_locked_memory() -> None:
    res = run_attack(
        """
        import mmap
        show("dev_shm", attempt(lambda: open("/dev/shm/x", "wb").write(b"x" * (64 << 20))))
        page = mmap.mmap(-1, 1 << 20)
        addr = ctypes.addressof(ctypes.c_char.from_buffer(page))
        show("mlock", "OK" if libc.mlock(ctypes.c_void_p(addr), 1 << 20) == 0 else "refused")
        show("noreserve", attempt(mmap.mmap, -1, 8 << 30, mmap.MAP_PRIVATE | 0x20 | 0x4000))
        """
    )
    assert fields(res) == {"dev_shm": "ENOENT", "mlock": "refused", "noreserve": "ENOMEM"}, res


def test_scratch_space_is_bounded() -> None:
    res = run_attack(
        """
        written, err = 0, None
        try:
            while written < 200:
                with open(f"/tmp/fill{written}", "wb") as f:
                    f.write(b"x" * (1 << 20))
                written += 1
        except OSError as e:
            err = errno.errorcode[e.errno]
        show("written_mb", written)
        show("error", err)
        """,
        scratch_mb=8,
    )
    got = fields(res)
    assert int(got["written_mb"]) <= 8 and got["error"] == "ENOSPC", res


def test_descriptors_are_bounded() -> None:
    res = run_attack(
        """
        held = []
        try:
            while len(held) < 5000:
                held.append(os.open("/dev/null", os.O_RDONLY))
        except OSError as e:
            show("error", errno.errorcode[e.errno])
        show("opened", len(held))
        """
    )
    got = fields(res)
    assert got["error"] == "EMFILE" and int(got["opened"]) < MAX_FILES, res


def test_no_descriptor_of_the_parent_is_inherited() -> None:
    res = run_attack(
        """
        show("open", [fd for fd in range(3, 1024) if attempt(os.fstat, fd) == "OK"])
        """
    )
    assert fields(res) == {"open": "[]"}, res


@pytest.fixture
def secret_dir() -> Iterator[Path]:
    """A stand-in for the data folder, outside /tmp so a tmpfs cannot hide it by accident."""
    folder = Path(tempfile.mkdtemp(prefix="pastcast-secret-", dir=REPO_ROOT))
    (folder / "resolutions.jsonl").write_text('{"event_id": "e1", "label": "Yes"}\n')
    yield folder
    shutil.rmtree(folder)


def test_host_paths_do_not_exist(secret_dir: Path) -> None:
    paths = [
        str(secret_dir / "resolutions.jsonl"),
        str(REPO_ROOT),
        str(REPO_ROOT / "runs"),
        str(REPO_ROOT.parent / "shared"),
        sys.prefix,
        sys.base_prefix,
        "/etc/shadow",
        "/etc/passwd",
        "/root",
        "/home",
        "/var",
        "/run",
        "/usr/local",
    ]
    res = run_attack(f"show('visible', [p for p in {paths!r} if os.path.lexists(p)])")
    assert fields(res) == {"visible": "[]"}, res


def test_no_tools_beside_the_interpreter() -> None:
    res = run_attack(
        """
        show("usr_bin", os.listdir("/usr/bin") == [os.path.basename(sys.executable)])
        tools = ["/bin/sh", "/usr/bin/env", "/usr/bin/perl", "/usr/bin/bwrap", "/sbin/modprobe"]
        show("tools", [t for t in tools if os.path.lexists(t)])
        show("exec_sh", attempt(os.execv, "/bin/sh", ["sh", "-c", "id"]))
        """
    )
    assert fields(res) == {"usr_bin": "True", "tools": "[]", "exec_sh": "ENOENT"}, res


def test_only_the_standard_library_is_importable() -> None:
    res = run_attack(
        """
        import importlib.util
        show("found", [m for m in ("numpy", "pydantic", "pastcast", "pip", "pyseccomp")
                       if importlib.util.find_spec(m)])
        import json, math, statistics, datetime, fractions, decimal, zoneinfo, sqlite3
        show("stdlib", zoneinfo.ZoneInfo("Europe/Paris").key)
        """
    )
    assert fields(res) == {"found": "[]", "stdlib": "Europe/Paris"}, res


def test_interpreter_files_are_read_only() -> None:
    res = run_attack(
        """
        import json
        show("stdlib", attempt(lambda: open(json.__file__, "a")))
        show("interpreter", attempt(lambda: open(sys.executable, "r+b")))
        show("new_file", attempt(lambda: open(os.path.dirname(json.__file__) + "/x.py", "w")))
        """
    )
    assert set(fields(res).values()) <= {"EROFS", "EACCES"}, res
