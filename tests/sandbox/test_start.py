"""Starting a sandbox does not depend on the caller's state: many descriptors open (a runner's
sockets, logs and pipes), or many sandboxes of one process at once, each with a user of its own."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator

import pytest
from _attack import needs_sandbox

from pastcast.sandbox import (
    SANDBOX_UIDS,
    Reply,
    SandboxResult,
    run_python,
    run_sandboxed,
    sandbox_interpreter,
)

pytestmark = needs_sandbox


@pytest.fixture
def many_descriptors() -> Iterator[None]:
    """More descriptors than the sandbox's own limit (128), as a busy runner holds."""
    fds = [os.open("/dev/null", os.O_RDONLY | os.O_CLOEXEC) for _ in range(300)]
    try:
        yield
    finally:
        for fd in fds:
            os.close(fd)


def test_a_caller_holding_many_descriptors_starts_the_python_tool(many_descriptors: None) -> None:
    res = run_python("print(6 * 7)")
    assert (res.exit_code, res.stdout, res.error) == (0, "42\n", None), res


def test_a_caller_holding_many_descriptors_starts_an_agent_process(
    many_descriptors: None,
) -> None:
    lines: list[bytes] = []

    def on_line(line: bytes) -> Reply:
        lines.append(line)
        return Reply(b"", done=True)

    res = run_sandboxed([sandbox_interpreter(), "-c", "print('hello')"], on_line=on_line)
    assert res.error is None and lines == [b"hello"], res


def test_concurrent_sandboxes_run_as_different_host_users() -> None:
    if os.getuid() != 0:
        pytest.skip("only a root caller gives each sandbox a user of its own")
    # The sandbox cannot see its host uid (it is 65534 inside); the host sees it.
    code = (
        "import threading, time\n"
        "threading.stack_size(65536)\n"
        "ev = threading.Event()\n"
        "ts = [threading.Thread(target=ev.wait) for _ in range(50)]\n"
        "[t.start() for t in ts]\n"
        "time.sleep(1.5)\n"
        "ev.set()\n"
        "print('ok')\n"
    )
    results: list[SandboxResult] = []
    owners: set[int] = set()
    stop = threading.Event()

    def watch() -> None:
        while not stop.wait(0.1):
            for pid in filter(str.isdigit, os.listdir("/proc")):
                try:
                    with open(f"/proc/{pid}/status") as f:
                        uid = int(next(ln for ln in f if ln.startswith("Uid:")).split()[1])
                except (OSError, StopIteration, ValueError):
                    continue
                if uid in SANDBOX_UIDS:
                    owners.add(uid)

    watcher = threading.Thread(target=watch)
    watcher.start()
    runs = [threading.Thread(target=lambda: results.append(run_python(code))) for _ in range(3)]
    for t in runs:
        t.start()
    for t in runs:
        t.join()
    stop.set()
    watcher.join()
    assert [r.stdout for r in results] == ["ok\n"] * 3, results
    assert len(owners) >= 3, owners
