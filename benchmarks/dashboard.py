"""Dashboard at scale: the one-time index, the time to the first page, page latencies and the
peak memory of ``pastcast view`` on a large run, under one or more source trees (``--src
NAME=PATH``, e.g. ``--src before=/path/to/main/src --src after=src``; target: the first page
within 10 s after a one-time index of at most 120 s, every page's p50 under 200 ms, peak
memory under 1.5 GB).

The synthetic run log (``synthetic_runs.write_run``, shared with ``runlogs.py``) has ten agents
(model-driven ones with 10 to 40 tool calls per step and 2 to 8 KB of result text in the log),
over events of five forecast dates (``--log``: an existing one instead). For each source tree
the dashboard (``pastcast.app.dashboard``, served by uvicorn on 127.0.0.1) is started twice in
a fresh process: *cold*, with no index stored beside the log (the one-time index: start to the
first page), then *warm* (the index kept beside the log: start to the first page). Each page is
then requested over HTTP (full response: until the last byte): the leaderboard (cached and a
filter's first request), its events page 7, an agent's forecasts (a page deep in the list),
random events, random trajectories and the comparison page (a pair's first request, then
cached). The server's peak resident memory (``VmHWM``) is read at the end.

    python benchmarks/dashboard.py [--steps 100000] [--requests 40] [--src NAME=PATH ...]
        [--log LOG] [--starts cold,warm]
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from synthetic_runs import AGENTS, STEPS_PER_EVENT, write_run

SERVE = """
import sys, uvicorn
from pastcast.app import dashboard
board = dashboard([sys.argv[1]])
print("indexed", len(board.index), flush=True)
uvicorn.run(board.app, host="127.0.0.1", port=int(sys.argv[2]), log_level="warning")
"""


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _get(port: int, path: str) -> tuple[float, int]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    t = time.perf_counter()
    conn.request("GET", path)
    res = conn.getresponse()
    body = res.read()
    full = time.perf_counter() - t
    conn.close()
    assert res.status == 200, (path, res.status)
    return full, len(body)


def _stats(name: str, samples: list[tuple[float, int]]) -> dict[str, object]:
    ms = [s[0] * 1000 for s in samples]
    q = statistics.quantiles(ms, n=20) if len(ms) > 1 else [ms[0]] * 19
    return {
        "page": name,
        "n": len(samples),
        "p50_ms": round(statistics.median(ms), 1),
        "p95_ms": round(q[18], 1),
        "bytes": int(statistics.median(s[1] for s in samples)),
    }


def _peak_mb(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) // 1024
    except OSError:
        return None
    return None


def _start(src: str, log: Path, timeout: float) -> tuple[subprocess.Popen[str], int, float]:
    # the index a cold start must not find is removed by the caller
    """A dashboard server over ``log``; returns once its first page came back (the seconds)."""
    port = _port()
    env = os.environ | {"PYTHONPATH": src}
    t = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-c", SERVE, str(log), str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    while time.perf_counter() - t < timeout:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited {proc.returncode}: {proc.stderr.read()[-2000:]}")
        try:
            _get(port, "/")
            return proc, port, round(time.perf_counter() - t, 1)
        except (ConnectionRefusedError, OSError):
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("timed out")


def _pages(port: int, n_steps: int, requests: int) -> list[dict[str, object]]:
    rng = random.Random(1)
    per_event = STEPS_PER_EVENT * len(AGENTS)
    n_events = n_steps // per_event
    model_rows = [i for i in range(len(AGENTS)) if AGENTS[i].factory == "tool-agent"]
    steps = [rng.randrange(n_events) * per_event + rng.randrange(STEPS_PER_EVENT) * len(AGENTS)
             + rng.choice(model_rows) for _ in range(requests)]  # fmt: skip
    events = [f"/event/event-{rng.randrange(n_events):05d}" for _ in range(requests)]
    deep = max(1, n_events * STEPS_PER_EVENT // 50 // 2)
    forecasts = [
        f"/forecasts?agent=model-{rng.randrange(4)}&setting=memory_on&page={rng.randrange(1, deep)}"
        for _ in range(requests)
    ]
    pair = "/compare?a=model-1%40memory_free%40bench&b=model-1%40memory_on%40bench"
    out = [
        _stats("leaderboard (computed at start)", [_get(port, "/") for _ in range(requests)]),
        _stats("leaderboard, a filter's first request", [_get(port, "/?category=sports")]),
        _stats("leaderboard, filtered (cached)",
               [_get(port, "/?category=sports") for _ in range(requests)]),
        _stats("leaderboard, events page 7", [_get(port, "/?page=7") for _ in range(requests)]),
        _stats("agent's forecasts, a deep page", [_get(port, f) for f in forecasts]),
        _stats("event", [_get(port, e) for e in events]),
        _stats("trajectory", [_get(port, f"/step/{i}") for i in steps]),
        _stats("comparison, a pair's first request", [_get(port, pair)]),
        _stats("comparison (cached)", [_get(port, pair) for _ in range(requests)]),
    ]  # fmt: skip
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100_000)
    parser.add_argument("--requests", type=int, default=40)
    parser.add_argument("--src", action="append", default=[], help="NAME=PATH of a source tree")
    parser.add_argument("--log", type=Path, default=None, help="An existing synthetic run log")
    parser.add_argument("--timeout", type=float, default=3600)
    parser.add_argument("--starts", default="cold,warm", help="cold: no stored index; warm")
    args = parser.parse_args()
    trees = dict(s.split("=", 1) for s in args.src) or {"here": os.environ.get("PYTHONPATH", "")}
    tmp = Path(tempfile.mkdtemp(prefix="pastcast-dashboard-", dir=os.environ.get("TMPDIR")))
    try:
        log = args.log or tmp / "run" / "run.jsonl"
        if args.log is None:
            t = time.perf_counter()
            write_run(log, args.steps)
            print(json.dumps({"written_s": round(time.perf_counter() - t, 1)}), flush=True)
        n = sum(1 for _ in log.open("rb"))
        print(json.dumps({"steps": n, "mb": round(log.stat().st_size / 1e6)}), flush=True)
        for tree, src in trees.items():
            for start in args.starts.split(","):
                if start == "cold":  # nothing stored beside the log: the one-time index
                    log.with_suffix(".dashboard.npz").unlink(missing_ok=True)
                    log.with_suffix(".dashboard-board.json").unlink(missing_ok=True)
                proc, port, first = _start(src, log, args.timeout)
                row: dict[str, object] = {"code": tree, "start": start, "first_page_s": first}
                try:
                    row["pages"] = _pages(port, n, args.requests)
                    row["peak_mb"] = _peak_mb(proc.pid)
                finally:
                    proc.terminate()
                    proc.wait(timeout=60)
                print(json.dumps(row), flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
