"""Bandwidth of the covert channels between two concurrent sandboxes that stay open.

Usage: python benchmarks/sandbox_channels.py [--bits 64] [--slot 0.1]
A sender and a receiver start at once; in each time slot (both read the real clock) the sender
sends one random bit, the receiver guesses it. Reported per channel: the bit error rate p and
the capacity of that binary channel, (1 - H(p)) / slot bits per second.

- cpu: the sender keeps every core busy for a 1, sleeps for a 0; the receiver counts how far
  a loop gets in the slot (contention on shared cores).
- page_cache: the sender reads a file no one has read lately for a 1; the receiver times
  reading it (a page-cache hit is faster than the disk). Each file carries one bit; this host
  process evicts the files it uses first (``POSIX_FADV_DONTNEED``; the sandbox may not).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import secrets
import sys
import threading
import time
from pathlib import Path

from pastcast.sandbox import SandboxResult, run_python, sandbox_available, sandbox_interpreter

_COMMON = """\
import json, os, sys, threading, time
T0, SLOT, BITS = {t0!r}, {slot!r}, {bits!r}
FILES = {files!r}
def at(t):
    d = t - time.time()
    if d > 0:
        time.sleep(d)
"""

_CPU_SENDER = """\
def spin(end):
    while time.time() < end:
        pass
for i, bit in enumerate(BITS):
    at(T0 + i * SLOT)
    if bit:
        end = T0 + (i + 1) * SLOT
        workers = [threading.Thread(target=spin, args=(end,)) for _ in range(os.cpu_count() or 2)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
"""

_CPU_RECEIVER = """\
out = []
for i in range(len(BITS)):
    at(T0 + i * SLOT + SLOT * 0.1)
    end, n = T0 + (i + 0.9) * SLOT, 0
    while time.time() < end:
        n += 1
    out.append(n)
print(json.dumps(out))
"""

_CACHE_SENDER = """\
for i, bit in enumerate(BITS):
    at(T0 + i * SLOT)
    if bit:
        with open(FILES[i], "rb") as f:
            f.read(65536)
"""

_CACHE_RECEIVER = """\
out = []
for i in range(len(BITS)):
    at(T0 + (i + 0.5) * SLOT)
    start = time.perf_counter()
    with open(FILES[i], "rb") as f:
        f.read(4096)
    out.append(-(time.perf_counter() - start))  # a higher reading means a 1 (a cached file)
print(json.dumps(out))
"""

CHANNELS = {"cpu": (_CPU_SENDER, _CPU_RECEIVER), "page_cache": (_CACHE_SENDER, _CACHE_RECEIVER)}


def _entropy(p: float) -> float:
    return 0.0 if p in (0.0, 1.0) else -p * math.log2(p) - (1 - p) * math.log2(1 - p)


def _cold_files(count: int) -> list[str]:
    """Files of the sandbox's standard library, evicted from the page cache first."""
    lib = Path(os.path.realpath(sandbox_interpreter())).parent.parent / "lib"
    found = sorted(
        str(p)
        for p in lib.glob("python3.*/**/*.py")
        if "-packages" not in str(p) and p.stat().st_size > 8192
    )
    chosen = found[-count:]
    for path in chosen:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)
    return chosen


def measure(name: str, bits: list[int], slot: float) -> tuple[float, float]:
    """(bit error rate, capacity in bits per second) of one channel."""
    sender_code, receiver_code = CHANNELS[name]
    files = _cold_files(len(bits)) if name == "page_cache" else []
    common = {"t0": time.time() + 2.0, "slot": slot, "bits": bits, "files": files}
    timeout = 2.0 + len(bits) * slot + 5.0
    results: dict[str, SandboxResult] = {}

    def run(role: str, code: str) -> None:
        results[role] = run_python(_COMMON.format(**common) + code, timeout_s=timeout)

    threads = [
        threading.Thread(target=run, args=("sender", sender_code)),
        threading.Thread(target=run, args=("receiver", receiver_code)),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if results["receiver"].exit_code != 0:
        raise SystemExit(f"{name}: the receiver failed: {results['receiver']}")
    readings = json.loads(results["receiver"].stdout)
    threshold = sorted(readings)[len(readings) // 2]
    if name == "cpu":
        guessed = [int(r < threshold) for r in readings]  # contention slows the receiver
    else:
        guessed = [int(r >= threshold) for r in readings]
    errors = sum(g != b for g, b in zip(guessed, bits, strict=True)) / len(bits)
    return errors, (1 - _entropy(min(errors, 0.5))) / slot


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--bits", type=int, default=64)
    parser.add_argument("--slot", type=float, default=0.1, help="seconds per bit")
    parser.add_argument("--channel", choices=sorted(CHANNELS), action="append")
    args = parser.parse_args()
    ok, why = sandbox_available()
    if not ok:
        raise SystemExit(f"sandbox unavailable: {why}")
    for name in args.channel or sorted(CHANNELS):
        # Balanced, so a median threshold is fair.
        bits = [1] * (args.bits // 2) + [0] * (args.bits - args.bits // 2)
        bits = sorted(bits, key=lambda _: secrets.randbelow(1 << 30))
        errors, capacity = measure(name, bits, args.slot)
        print(
            f"{name}: {args.bits} bits, slot {args.slot * 1000:.0f} ms, "
            f"error rate {errors:.3f}, capacity {capacity:.2f} bit/s",
            flush=True,
        )
    sys.stdout.flush()


if __name__ == "__main__":
    main()
