"""Start-up time of ``import pastcast``, ``pastcast --help`` and ``pastcast run --help`` (which
imports the run command): the median wall and CPU of 5 fresh processes each, beside the
interpreter alone and ``import numpy`` for scale, with the machine's load.

    python benchmarks/startup.py [--runs 5]

Targets: ``import pastcast`` <= 0.2 s, ``pastcast --help`` <= 0.3 s.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time

CASES = {
    "python -c pass": ["-c", "pass"],
    "import numpy": ["-c", "import numpy"],
    "import pastcast": ["-c", "import pastcast"],
    "pastcast --help": ["-c", "from pastcast.cli import main; main()", "--help"],
    "pastcast run --help": ["-c", "from pastcast.cli import main; main()", "run", "--help"],
}
TARGETS = {"import pastcast": 0.2, "pastcast --help": 0.3}


def run_once(args: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds of one fresh process."""
    t0, before = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, *args], check=True, stdout=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return time.perf_counter() - t0, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    print(f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.2f} at start")
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in CASES}
    for _ in range(args.runs):  # interleaved, so a burst of load hits every case alike
        for name, argv in CASES.items():
            times[name].append(run_once(argv))
    for name, runs in times.items():
        walls, cpus = [w for w, _ in runs], [c for _, c in runs]
        target, median = TARGETS.get(name), statistics.median(walls)
        verdict = ""
        if target is not None:
            verdict = f"  target <= {target} s: {'met' if median <= target else 'MISSED'}"
        print(
            f"{name:20} median {median:.3f} s (min {min(walls):.3f}), "
            f"CPU {statistics.median(cpus):.3f} s{verdict}"
        )
    print(f"load {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
