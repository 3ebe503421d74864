"""Kernel memory a sandbox can pin is bounded: files, directories with long names and extended
attributes in its scratch space are charged to slab and shmem, outside RLIMIT_AS; the scratch
tmpfs has an inode limit besides its size, and setting extended attributes is refused. Each
attack runs for a few seconds and holds what it made while the host's /proc/meminfo is sampled
(Slab + Shmem). Without the inode limit one such call pinned over a gigabyte."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from _attack import needs_sandbox, run_attack

from pastcast.sandbox import SandboxResult, run_python

pytestmark = needs_sandbox

SCRATCH_MB = 64
# What one sandbox may pin (docs/sandbox.md) is its scratch bytes (these attacks write none) plus
# the inodes and dentries of its inode limit (64 per MiB, under 2 KiB each, so 8 MiB here):
# 16 MiB each, plus slack for what the rest of the host does meanwhile.
PER_SANDBOX_MB = 16
HOST_SLACK_MB = 40

_ATTACK = """\
import time
deadline = time.time() + {seconds}
made, stop = 0, "deadline"
def run(step):
    global made, stop
    try:
        while time.time() < deadline:
            step(made)
            made += 1
    except OSError as e:
        stop = errno.errorcode.get(e.errno, str(e.errno))
{body}
show("made", made)
show("stop", stop)
time.sleep(max(0.0, deadline - time.time()) + 0.8)  # hold it while the host measures
"""

ATTACKS = {
    "empty_files": "run(lambda n: os.close(os.open(f'/tmp/f{n}', os.O_CREAT | os.O_WRONLY)))",
    "long_directory_names": "run(lambda n: os.mkdir('/tmp/' + str(n).rjust(255, 'd')))",
    "extended_attributes": (
        "open('/tmp/x', 'w').close()\n"
        "run(lambda n: os.setxattr('/tmp/x', f'user.{n}', b'v' * 60000))"
    ),
    "every_kind": (
        "run(lambda n: os.mkdir('/tmp/' + str(n).rjust(255, 'd')))\n"
        "stop, deadline = 'deadline', deadline + 0.7\n"
        "run(lambda n: os.setxattr('/tmp/' + str(0).rjust(255, 'd'), f'user.{n}', b'v' * 60000))"
    ),
}


# Two at once cannot use run_attack: each would see the other's processes as left behind.
_PLAIN_PRELUDE = "import errno, os\ndef show(k, v):\n    print(f'{k}={v}', flush=True)\n"


def _pinned_kib() -> int:
    fields = {}
    with open("/proc/meminfo") as f:
        for line in f:
            key, value = line.split(":", 1)
            fields[key] = int(value.split()[0])
    return fields["Slab"] + fields["Shmem"]


@contextmanager
def _peak() -> Iterator[list[int]]:
    """[the largest rise of Slab + Shmem over the block, in KiB]."""
    base = _pinned_kib()
    peak = [0]
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.05):
            peak[0] = max(peak[0], _pinned_kib() - base)

    watcher = threading.Thread(target=sample, daemon=True)
    watcher.start()
    try:
        yield peak
    finally:
        done.set()
        watcher.join()


def _code(kind: str, seconds: float = 2.5) -> str:
    return _ATTACK.format(seconds=seconds, body=ATTACKS[kind])


@pytest.mark.parametrize("kind", sorted(ATTACKS))
def test_kernel_memory_one_sandbox_pins_is_bounded(kind: str) -> None:
    with _peak() as peak:
        res = run_attack(_code(kind), timeout_s=8, scratch_mb=SCRATCH_MB)
    assert res.exit_code == 0, res
    print(f"{kind}: +{peak[0] >> 10} MiB")
    assert peak[0] < (PER_SANDBOX_MB + HOST_SLACK_MB) * 1024, f"+{peak[0] >> 10} MiB: {res}"


def test_kernel_memory_of_two_concurrent_sandboxes_is_bounded() -> None:
    results: list[SandboxResult] = []

    def attack() -> None:
        results.append(run_python(_PLAIN_PRELUDE + _code("every_kind"), timeout_s=8))

    with _peak() as peak:
        threads = [threading.Thread(target=attack) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert [r.exit_code for r in results] == [0, 0], results
    bound = (2 * PER_SANDBOX_MB + HOST_SLACK_MB) * 1024
    print(f"two at once: +{peak[0] >> 10} MiB")
    assert peak[0] < bound, f"+{peak[0] >> 10} MiB: {results}"


def test_scratch_inodes_run_out_before_memory() -> None:
    res = run_attack(_code("empty_files", 1.0), timeout_s=5)
    made = dict(line.split("=", 1) for line in res.stdout.splitlines() if "=" in line)
    assert made["stop"] == "ENOSPC" and int(made["made"]) < SCRATCH_MB * 64, res


def test_setting_extended_attributes_is_refused() -> None:
    res = run_attack(
        """
        open("/tmp/x", "w").close()
        show("set", attempt(os.setxattr, "/tmp/x", "user.a", b"v"))
        show("remove", attempt(os.removexattr, "/tmp/x", "user.a"))
        show("list", attempt(os.listxattr, "/tmp/x"))
        show("copy", attempt(__import__("shutil").copy2, "/tmp/x", "/tmp/y"))
        """
    )
    got = dict(line.split("=", 1) for line in res.stdout.splitlines())
    assert got == {"set": "ENOTSUP", "remove": "ENOTSUP", "list": "OK", "copy": "OK"}, res
