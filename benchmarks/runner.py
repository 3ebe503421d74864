"""Run throughput and memory at scale against a provider that answers after a fixed delay.

A chat-completions server on loopback (a process of its own, so it does not share the run's
interpreter) answers every request after ``--latency`` seconds. The run is the no-tools agent
on a synthetic dataset, one model call per step, through the whole stack: the runner, the
episode, the model's HTTP client, grading and the fsynced run log. Printed:

- throughput at 1, 8, 64 and 256 episodes in flight, against the ideal (in flight / latency),
  for the local executor and for Dask (a LocalCluster of worker processes on 127.0.0.1, started
  before the timing), after a warm-up run (imports, first connections), with the driver's CPU
  a step (the comparable figure on a loaded machine);
- the same short run at the highest level end to end through ``pastcast run`` (a fresh
  process: start-up, imports, reading the dataset directory, the run and the log), its wall
  time against the ideal (steps x latency / in flight) and its CPU, and where the time beyond
  the ideal went, from when the provider saw each request and sent each reply: the first
  request after the start, the first and the last wave's spread, the exit after the last
  reply. Its Python reads compiled
  bytecode, as an installed package's does: an untimed 8-step run first fills a bytecode cache
  in the temporary folder (``PYTHONPYCACHEPREFIX``; ``PYTHONDONTWRITEBYTECODE`` is dropped for
  it), else a shell that sets ``PYTHONDONTWRITEBYTECODE`` compiles every module each start (0.3
  CPU s);
- resident memory while 20,000 steps run at 256 in flight, sampled through the run, so its
  growth with the number of steps shows (the driver; for Dask also the workers);
- the machine's load average at the start and at the end.

    python benchmarks/runner.py [--latency 1.0] [--steps 20000] [--seconds 10] [--no-dask]
        [--no-cli]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import resource
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import psutil

from pastcast.agents import agent_spec, clear_models
from pastcast.dataset import Dataset, save_dataset
from pastcast.records import Event, Resolution, StepSpec
from pastcast.runner import Executor, RunConfig, executors, run_benchmark

T0 = datetime(2024, 1, 1, tzinfo=UTC)
REPLY = json.dumps({"probabilities": {"Yes": 0.6, "No": 0.4}, "rationale": "benchmark"})


def _serve(port: int, latency: float, ready: Any) -> None:
    body = json.dumps(
        {
            "id": "b",
            "object": "chat.completion",
            "created": 0,
            "model": "bench",
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": REPLY},
                 "finish_reason": "stop"}
            ],
            "usage": {"prompt_tokens": 300, "completion_tokens": 20, "total_tokens": 320},
        }
    ).encode()  # fmt: skip

    arrivals: list[float] = []  # when each request had been read, and each reply sent
    replies: list[float] = []

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive: one connection per client thread

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def setup(self) -> None:
            super().setup()
            # Headers and body go out in two writes: without this, Nagle's algorithm holds the
            # body until the client's delayed ACK (40 ms a reply on a kept-alive connection).
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length", 0)))
            arrivals.append(time.time())
            time.sleep(latency)
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            replies.append(time.time())

        def do_GET(self) -> None:  # the times recorded since the last GET, then forgotten
            times = json.dumps({"arrivals": arrivals[:], "replies": replies[:]}).encode()
            del arrivals[:], replies[:]
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(times)))
            self.end_headers()
            self.wfile.write(times)

    class Server(ThreadingHTTPServer):
        daemon_threads = True
        request_queue_size = 2048

    server = Server(("127.0.0.1", port), Handler)
    ready.set()
    server.serve_forever()


def _dataset(n_steps: int) -> tuple[Dataset, int]:
    """Binary events with four forecast dates each, and the rollouts of them that make
    ``n_steps`` (at most 500 events; ``n_steps`` rounded down to a multiple of 4, at least 4)."""
    rollouts = -(-n_steps // 2000)
    n_events = max(1, n_steps // (4 * rollouts))
    events, resolutions, steps = [], {}, []
    for i in range(n_events):
        eid = f"ev-{i:04d}"
        end = T0 + timedelta(days=60)
        events.append(
            Event(id=eid, title=f"Will benchmark event {i} happen", kind="binary",
                  labels=("Yes", "No"), open_time=T0, close_time=end)
        )  # fmt: skip
        resolutions[eid] = Resolution(event_id=eid, label="Yes", resolved_at=end)
        steps += [StepSpec(event_id=eid, step_index=k, cutoff=T0 + timedelta(days=5 + 10 * k))
                  for k in range(4)]  # fmt: skip
    return Dataset("bench-v1", tuple(events), resolutions, {}, tuple(steps)), rollouts


class _Memory:
    """Resident memory of this process (and of Dask's workers), sampled every 0.5 s."""

    def __init__(self, executor: Executor) -> None:
        self.samples: list[tuple[float, float, float]] = []  # (seconds, driver MiB, workers MiB)
        self.executor = executor
        self.workers: list[int] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _rss(self, pid: int) -> float:
        try:
            return psutil.Process(pid).memory_info().rss / 2**20
        except psutil.Error:
            return 0.0

    def _run(self) -> None:
        start = time.monotonic()
        while not self._stop.wait(0.5):
            pids = getattr(self.executor, "worker_pids", None)
            if not self.workers and callable(pids) and getattr(self.executor, "client", None):
                self.workers = list(pids().values())  # once Dask's workers are up
            workers = sum(self._rss(p) for p in self.workers)
            driver = psutil.Process().memory_info().rss / 2**20
            self.samples.append((time.monotonic() - start, driver, workers))

    def __enter__(self) -> _Memory:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def _run(
    url: str, n_steps: int, in_flight: int, executor: Executor, out: Path
) -> tuple[int, float, float]:
    """Steps written (the count printed is the one that ran), their rate and this process's
    CPU milliseconds a step (the comparable figure on a loaded machine)."""
    dataset, rollouts = _dataset(n_steps)
    model = f"openai-compatible:bench@{url}"
    spec = agent_spec("no-tools", model=model, model_options={"max_retries": 0})
    config = RunConfig(agents=(spec,), rollouts=rollouts, workers=in_flight)
    started, cpu = time.perf_counter(), time.process_time()
    result = run_benchmark(dataset, None, config, out, progress=False, executor=executor)
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    clear_models()
    assert result.failures == 0, f"{result.failures} unusable forecasts"
    return result.written, result.written / elapsed, 1000 * cpu / max(1, result.written)


def _cli_run(url: str, n_steps: int, in_flight: int, tmp: Path, latency: float) -> str:
    """``pastcast run`` on the same synthetic dataset (saved as a dataset directory) in a fresh
    process, timed from its start to its exit: what a user waits for."""
    dataset, rollouts = _dataset(n_steps)
    directory = save_dataset(dataset, tmp / f"cli-dataset-{n_steps}")
    out = tmp / f"cli-{in_flight}.jsonl"
    agent = f"no-tools:model=openai-compatible:bench@{url}"
    main = "import sys; from pastcast.cli import main; sys.exit(main())"
    command = [
        sys.executable,
        "-c",
        main,
        "run",
        "--dataset",
        str(directory),
        "--agent",
        agent,
        "--rollouts",
        str(rollouts),
        "--workers",
        str(in_flight),
        "--out",
        str(out),
    ]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(tmp / "pycache")
    if not (tmp / "pycache").exists():  # untimed: fills the bytecode cache
        small = save_dataset(_dataset(8)[0], tmp / "cli-dataset-warm")
        warm = [*command[:5], str(small), *command[6:-1], str(tmp / "cli-warm.jsonl")]
        subprocess.run(
            warm, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=True
        )
    _times(url)  # forgets the warm-up's
    started, before = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.time()
    done = subprocess.run(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env
    )
    wall, after = time.perf_counter() - started, resource.getrusage(resource.RUSAGE_CHILDREN)
    ended = time.time()
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    if done.returncode:
        raise SystemExit(f"pastcast run failed ({done.returncode}): {done.stderr[-2000:]}")
    n = rollouts * len(dataset.steps)
    ideal = n * latency / in_flight
    times = _times(url)
    came, went = sorted(times["arrivals"]), max(times["replies"])
    return (
        f"pastcast run in flight {in_flight:4d}: {n:6d} steps in {wall:5.1f} s end to end, "
        f"ideal {ideal:5.1f} s, {ideal / wall:5.2f} x ideal; CPU {cpu:.2f} s "
        f"({1000 * cpu / n:.2f} ms a step, start-up included)\n"
        f"  its time beyond the ideal: the first request {came[0] - began:.2f} s after the "
        f"start; the first {in_flight} went out over {came[in_flight - 1] - came[0]:.2f} s, "
        f"the last {in_flight} over {came[-1] - came[-in_flight]:.2f} s; the exit "
        f"{ended - went:.2f} s after the last reply"
    )


def _times(url: str) -> dict[str, list[float]]:
    """When the provider read each request and sent each reply since the last call."""
    with urllib.request.urlopen(f"{url}/times", timeout=30) as reply:
        times: dict[str, list[float]] = json.load(reply)
    return times


def _load() -> str:
    """The machine's load (1, 5 and 15 minutes): on a shared machine the wall ratios follow it,
    the CPU a step much less."""
    return " / ".join(f"{x:.2f}" for x in os.getloadavg())


def _executor(kind: str, cluster: Any) -> Executor:
    if kind == "local":
        return executors.build("local")
    return executors.build("dask", address=cluster.scheduler_address)


def _cluster(workers: int, threads: int) -> Any:
    """A LocalCluster started before the timing (its start-up is printed on its own)."""
    import distributed

    started = time.perf_counter()
    cluster = distributed.LocalCluster(
        host="127.0.0.1",
        n_workers=workers,
        threads_per_worker=threads,
        dashboard_address=None,
        silence_logs=40,
    )
    took = time.perf_counter() - started
    print(f"dask: LocalCluster of {workers} processes x {threads} threads up in {took:.1f} s")
    return cluster


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=1.0)
    parser.add_argument("--steps", type=int, default=20_000, help="memory run steps (0: none)")
    parser.add_argument("--seconds", type=float, default=10.0, help="ideal length per level")
    parser.add_argument("--levels", default="1,8,64,256")
    parser.add_argument("--no-dask", action="store_true")
    parser.add_argument("--no-cli", action="store_true", help="no end-to-end `pastcast run`")
    parser.add_argument("--dask-workers", type=int, default=2)
    args = parser.parse_args()

    ctx = multiprocessing.get_context("spawn")
    ready = ctx.Event()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = ctx.Process(target=_serve, args=(port, args.latency, ready), daemon=True)
    server.start()
    if not ready.wait(300):  # a spawned interpreter on a busy machine can take a while
        raise SystemExit("the provider did not start")
    url = f"http://127.0.0.1:{port}/v1"
    kinds = ["local"] if args.no_dask else ["local", "dask"]
    print(f"provider latency {args.latency:.2f} s, one call per step; ideal: in flight / latency")
    print(f"load average at the start: {_load()}")
    levels = [int(x) for x in args.levels.split(",")]
    cluster = None if args.no_dask else _cluster(args.dask_workers, 256 // args.dask_workers)
    with tempfile.TemporaryDirectory() as tmp:
        # Once per process, not per run: imports, the code version, the first connections.
        _run(url, 16, 8, executors.build("local"), Path(tmp) / "warm-up.jsonl")
        for kind in kinds:
            for level in levels:
                n = max(level, int(level * args.seconds / args.latency))
                out = Path(tmp) / f"{kind}-{level}.jsonl"
                n, rate, cpu = _run(url, n, level, _executor(kind, cluster), out)
                ideal = level / args.latency
                print(
                    f"{kind:5s} in flight {level:4d}: {n:6d} steps, {rate:8.1f} steps/s, "
                    f"ideal {ideal:7.1f}, {rate / ideal:5.2f} x ideal; CPU {cpu:.2f} ms a step"
                )
        if not args.no_cli:
            level = levels[-1]
            n = max(level, int(level * args.seconds / args.latency))
            print(_cli_run(url, n, level, Path(tmp), args.latency))
        for kind in kinds if args.steps else ():
            out = Path(tmp) / f"{kind}-memory.jsonl"
            executor = _executor(kind, cluster)
            with _Memory(executor) as memory:
                ran, rate, _ = _run(url, args.steps, 256, executor, out)
            s = memory.samples
            marks = [s[min(len(s) - 1, int(f * len(s)))] for f in (0.1, 0.5, 1.0)] if s else []
            text = ", ".join(f"{t:5.0f} s: {d:6.0f} MiB" + (f" + workers {w:6.0f} MiB" if w else "")
                             for t, d, w in marks)  # fmt: skip
            peak = max((d for _, d, _ in s), default=0.0)
            print(
                f"{kind:5s} {ran} steps at 256 in flight: {rate:.1f} steps/s "
                f"({ran / rate:.0f} s); driver peak {peak:.0f} MiB; at 10/50/100%: {text}"
            )
    if cluster is not None:
        cluster.close()
    server.terminate()
    print(f"load average at the end: {_load()}")


if __name__ == "__main__":
    main()
