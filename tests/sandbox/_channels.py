"""Covert channels between two sandboxes running at once: a sender sets some shared state to
one of 16 values in each time slot, a receiver reads it in the middle of the slot. Both keep
time by the real clock, which every sandbox has. The first two slots calibrate (values 0 and
15), the rest carry the payload."""

from __future__ import annotations

import json
import secrets
import threading
import time
from dataclasses import dataclass

from pastcast.sandbox import SandboxResult, run_python

SLOT_S = 0.25
CALIBRATION = (0, 15)

_COMMON = """\
import ctypes, errno, fcntl, json, os, struct, threading, time
libc = ctypes.CDLL(None, use_errno=True)
libc.prctl(15, b"{token}", 0, 0, 0)
T0, SLOT, N = {t0!r}, {slot!r}, {n}
threading.stack_size(65536)
FILES = [os.__file__, json.__file__, threading.__file__, ctypes.__file__]
def at(t):
    d = t - time.time()
    if d > 0:
        time.sleep(d)
def err(e):
    return errno.errorcode.get(e, str(e))
"""

_SENDER = """\
VALUES = {values!r}
{setup}
{set_state}
for i, v in enumerate(VALUES):
    at(T0 + i * SLOT)
    set_state(v)
at(T0 + N * SLOT)
set_state(0)
print("sent")
"""

_RECEIVER = """\
{setup}
{read}
out = []
for i in range(N):
    at(T0 + (i + 0.6) * SLOT)
    try:
        out.append(read())
    except OSError as e:
        out.append(err(e.errno))
print("got=" + json.dumps(out))
"""

_HOLD_THREADS = """\
held = []
def set_state(v):
    while len(held) < v * 16:
        ev = threading.Event()
        t = threading.Thread(target=ev.wait)
        try:
            t.start()
        except RuntimeError:  # the receiver holds the rest of a shared task limit
            time.sleep(0.005)
            continue
        held.append((ev, t))
    while len(held) > v * 16:
        ev, t = held.pop()
        ev.set()
        t.join()
"""

_READ_SYSINFO = """\
buf = ctypes.create_string_buffer(128)
def read():
    if libc.sysinfo(buf) != 0:
        return err(ctypes.get_errno())
    return int.from_bytes(buf.raw[80:82], "little")  # procs: the host's task count
"""

_READ_TASK_LIMIT = """\
def read():
    made = []
    try:
        while len(made) < 1000:
            ev = threading.Event()
            t = threading.Thread(target=ev.wait)
            t.start()
            made.append((ev, t))
    except RuntimeError:
        pass
    for ev, t in made:
        ev.set()
    for ev, t in made:
        t.join()
    return len(made)
"""

_OPEN_FILES = "fds = [os.open(f, os.O_RDONLY) for f in FILES]"

_LOCK_FILES = """\
def set_state(v):
    for b, fd in enumerate(fds):
        try:
            fcntl.flock(fd, fcntl.LOCK_EX if v >> b & 1 else fcntl.LOCK_UN)
        except OSError:
            pass
"""

_READ_LOCKS = """\
def read():
    bits = 0
    for b, fd in enumerate(fds):
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            fcntl.flock(fd, fcntl.LOCK_UN)
        except BlockingIOError:
            bits |= 1 << b
    return bits
"""

_RECORD_LOCK_FILES = """\
def set_state(v):
    for b, fd in enumerate(fds):
        try:
            fcntl.lockf(fd, fcntl.LOCK_SH if v >> b & 1 else fcntl.LOCK_UN)
        except OSError:
            pass
"""

_READ_RECORD_LOCKS = """\
ASK = struct.pack("hhxxxxqqixxxx", fcntl.F_WRLCK, 0, 0, 0, 0)
def read():
    bits = 0
    for b, fd in enumerate(fds):
        answer = fcntl.fcntl(fd, fcntl.F_GETLK, ASK)
        if struct.unpack("hhxxxxqqixxxx", answer)[0] != fcntl.F_UNLCK:
            bits |= 1 << b
    return bits
"""

_TOUCH_FILES = """\
def set_state(v):
    for b, f in enumerate(FILES):
        if v >> b & 1:
            os.close(os.open(f, os.O_RDONLY))
"""

_WATCH_FILES = """\
ifd = libc.inotify_init1(0o4000)
problem = err(ctypes.get_errno()) if ifd < 0 else None
wds = {}
if ifd >= 0:
    for b, f in enumerate(FILES):
        wd = libc.inotify_add_watch(ifd, f.encode(), 0x20)  # IN_OPEN
        if wd < 0:
            problem = err(ctypes.get_errno())
        wds[wd] = b
"""

_READ_WATCHES = """\
def read():
    if problem:
        return problem
    bits = 0
    try:
        data = os.read(ifd, 65536)
    except BlockingIOError:
        data = b""
    off = 0
    while off < len(data):
        wd, mask, cookie, size = struct.unpack_from("iIII", data, off)
        off += 16 + size
        bits |= 1 << wds.get(wd, 0)
    return bits
"""

_HOLD_FILES = """\
held = []
def set_state(v):
    while len(held) < v * 200:
        path = f"/tmp/s{len(held)}"
        os.close(os.open(path, os.O_CREAT | os.O_WRONLY))
        held.append(path)
    while len(held) > v * 200:
        os.unlink(held.pop())
"""

_READ_FREE_INODES = """\
def read():
    made = 0
    try:
        while made < 100000:
            os.close(os.open(f"/tmp/r{made}", os.O_CREAT | os.O_WRONLY))
            made += 1
    except OSError:
        pass
    for i in range(made):
        os.unlink(f"/tmp/r{i}")
    return made
"""


@dataclass(frozen=True)
class Channel:
    name: str
    sender_setup: str
    set_state: str
    receiver_setup: str
    read: str
    step: int
    """How much one unit of the value moves a reading (0: the reading is the value)."""
    sign: int = 1
    slot_s: float = SLOT_S


CHANNELS = (
    Channel("host_task_count", "", _HOLD_THREADS, "", _READ_SYSINFO, 16),
    # Probing the limit means making every task left: slower slots.
    Channel("per_user_task_limit", "", _HOLD_THREADS, "", _READ_TASK_LIMIT, 16, -1, 0.45),
    Channel("locks_on_shared_files", _OPEN_FILES, _LOCK_FILES, _OPEN_FILES, _READ_LOCKS, 0),
    Channel(
        "record_locks_on_shared_files",
        _OPEN_FILES,
        _RECORD_LOCK_FILES,
        _OPEN_FILES,
        _READ_RECORD_LOCKS,
        0,
    ),
    Channel("watches_on_shared_files", "", _TOUCH_FILES, _WATCH_FILES, _READ_WATCHES, 0),
    Channel("scratch_free_inodes", "", _HOLD_FILES, "", _READ_FREE_INODES, 200, -1),
)


def payload(n: int = 20) -> list[int]:
    """Values 1..14: a reading stuck at either calibration (0, 15) decodes none of them."""
    return [1 + secrets.randbelow(14) for _ in range(n)]


def decode(channel: Channel, readings: list[object]) -> list[int | None]:
    """The payload values the receiver's readings say (None where a reading is an error)."""
    base = readings[1]  # the reading at value 15 (the one at 0 drifts most with other load)
    out: list[int | None] = []
    for r in readings[len(CALIBRATION) :]:
        if not isinstance(r, int) or not isinstance(base, int):
            out.append(None)
        elif channel.step == 0:
            out.append(r)
        else:
            out.append(CALIBRATION[1] + round(channel.sign * (r - base) / channel.step))
    return out


@dataclass(frozen=True)
class Exchange:
    sender: SandboxResult
    receiver: SandboxResult
    readings: list[object]
    decoded: list[int | None]


def exchange(channel: Channel, values: list[int], tokens: tuple[str, str]) -> Exchange:
    """Run a sender and a receiver at once; what the receiver read and decoded."""
    sent = [*CALIBRATION, *values]
    t0 = time.time() + 2.0  # both have started by then, even on busy cores
    common = {"t0": t0, "slot": channel.slot_s, "n": len(sent)}
    sender = _COMMON.format(token=tokens[0], **common) + _SENDER.format(
        values=sent, setup=channel.sender_setup, set_state=channel.set_state
    )
    receiver = _COMMON.format(token=tokens[1], **common) + _RECEIVER.format(
        setup=channel.receiver_setup, read=channel.read
    )
    # the slots set the pace; the rest is slack for a machine busy with other work (a sandbox's
    # start and the threads a slot makes can take seconds there)
    timeout = 2.0 + len(sent) * channel.slot_s + 30.0
    results: dict[str, SandboxResult] = {}

    def run(role: str, code: str) -> None:
        results[role] = run_python(code, timeout_s=timeout, memory_mb=2048)

    threads = [threading.Thread(target=run, args=a) for a in (("s", sender), ("r", receiver))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    got = results["r"].stdout.split("got=", 1)
    readings = json.loads(got[1]) if len(got) == 2 else []
    decoded = decode(channel, readings) if len(readings) == len(sent) else []
    return Exchange(results["s"], results["r"], readings, decoded)
