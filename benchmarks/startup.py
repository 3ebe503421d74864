"""Start-up time of ``import pastcast`` and ``pastcast --help``: the median of 5 fresh processes
each, beside the interpreter alone and ``import numpy`` for scale, with the machine's load.

    python benchmarks/startup.py [--runs 5]

Targets: ``import pastcast`` <= 0.2 s, ``pastcast --help`` <= 0.3 s.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

CASES = {
    "python -c pass": ["-c", "pass"],
    "import numpy": ["-c", "import numpy"],
    "import pastcast": ["-c", "import pastcast"],
    "pastcast --help": ["-c", "from pastcast.cli import main; main()", "--help"],
}
TARGETS = {"import pastcast": 0.2, "pastcast --help": 0.3}


def run_once(args: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, *args], check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    print(f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.2f} at start")
    times: dict[str, list[float]] = {name: [] for name in CASES}
    for _ in range(args.runs):  # interleaved, so a burst of load hits every case alike
        for name, argv in CASES.items():
            times[name].append(run_once(argv))
    for name, xs in times.items():
        target, median = TARGETS.get(name), statistics.median(xs)
        verdict = ""
        if target is not None:
            verdict = f"  target <= {target} s: {'met' if median <= target else 'MISSED'}"
        print(f"{name:18} median {median:.3f} s  (min {min(xs):.3f}){verdict}")
    print(f"load {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
