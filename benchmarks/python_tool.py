"""Latency of the sandboxed python tool: median and p90 over repeated small calls.

Usage: python benchmarks/python_tool.py [--calls 50]. Target: median <= 50 ms per call.
Each call starts bubblewrap, the seccomp filter and the interpreter afresh; the first call of a
process (building the sandbox's root and filter, the self-test) is a warm-up and not counted.
"""

from __future__ import annotations

import argparse
import statistics
import time

from pastcast.sandbox import run_python, sandbox_available

CODE = "import math\nprint(sum(math.sqrt(i) for i in range(10000)))\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=50)
    args = parser.parse_args()
    ok, why = sandbox_available()
    if not ok:
        raise SystemExit(f"sandbox unavailable: {why}")
    run_python(CODE)  # warm-up: page cache, self-test
    times: list[float] = []
    for _ in range(args.calls):
        t0 = time.perf_counter()
        res = run_python(CODE)
        times.append((time.perf_counter() - t0) * 1000)
        if res.exit_code != 0:
            raise SystemExit(f"sandboxed call failed: {res.stderr}")
    times.sort()
    interpreter = run_python("import sys; print(sys.executable, sys.version.split()[0])")
    p90 = times[int(0.9 * (len(times) - 1))]
    print(
        f"python tool: {args.calls} calls, median {statistics.median(times):.1f} ms, "
        f"p90 {p90:.1f} ms, max {times[-1]:.1f} ms (target median <= 50 ms); "
        f"sandboxed interpreter: {interpreter.stdout.strip()}"
    )


if __name__ == "__main__":
    main()
