"""The readers of a large run log: wall time and peak memory of `pastcast score`, `export table`,
`audit run`, `stats longitudinal` and the dashboard's index, each in a fresh process measured by
``/usr/bin/time -v`` (peak resident set), under one or more source trees (``--src NAME=PATH``,
e.g. ``--src before=/path/to/main/src --src after=src``).

The synthetic run log is written through ``RunLogWriter`` (so its columnar companion is written
as the run goes, as a real run's is): model-driven agents in two settings with 10 to 40 tool
calls per step and a few KB of text, a baseline and the market reference, over events of five
forecast dates. ``--rebuild`` also times rebuilding the companion from the JSONL alone.

    python benchmarks/runlogs.py --steps 100000 [--src NAME=PATH ...] [--readers score,table]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from pastcast.records import (
    EpisodeRecord,
    Forecast,
    Message,
    ModelCall,
    RequestedToolCall,
    ToolCall,
    Usage,
)
from pastcast.runlog import AgentSpec, Grading, RunHeader, RunLogWriter, Scores, StepRecord

T0 = datetime(2024, 1, 1, tzinfo=UTC)
AGENTS = [
    AgentSpec(name=f"model-{k}", factory="tool-agent", args={"model": f"provider:m{k}"}, setting=s)
    for k in range(4)
    for s in ("memory_free", "memory_on")
] + [
    AgentSpec(name="uniform", factory="uniform"),
    AgentSpec(name="market", factory="market", role="reference"),
]
STEPS_PER_EVENT = 5
SYSTEM = "You are an expert forecaster with research tools. " * 12


def _episode(n_tools: int, model: str, rng: random.Random) -> EpisodeRecord:
    """An episode of ``n_tools`` searches and reads, one model call per three tool calls."""
    msgs = [
        Message(role="system", content=SYSTEM),
        Message(role="user", content="Question: Will the event happen before the close? " * 4),
    ]
    tools, calls, seq = [], [], 0
    for j0 in range(0, n_tools, 3):  # one model call requests three tool calls
        batch = range(j0, min(j0 + 3, n_tools))
        names = {j: "search" if j % 2 == 0 else "read" for j in batch}
        args = {j: {"q": f"q{j}"} if names[j] == "search" else {"id": f"d{j}"} for j in batch}
        requested = tuple(
            RequestedToolCall(id=f"c{j}", name=names[j], arguments=args[j]) for j in batch
        )
        calls.append(
            ModelCall(
                seq=seq,
                model=model,
                messages=tuple(range(len(msgs))),
                reply=len(msgs),
                usage=Usage(model_calls=1, input_tokens=900, output_tokens=40, cost_usd=0.001),
                latency_s=rng.random(),
            )
        )
        seq += 1
        msgs.append(Message(role="assistant", content="", tool_calls=requested))
        for j in batch:
            result = f"[d{j}] Officials said it moved."
            msgs.append(Message(role="tool", content=result, tool_call_id=f"c{j}", name=names[j]))
            tools.append(
                ToolCall(
                    seq=seq, name=names[j], arguments=args[j], result=result, doc_ids=(f"d{j}",)
                )
            )
            seq += 1
    n = len(calls)
    total = Usage(model_calls=n, input_tokens=900 * n, output_tokens=40 * n, cost_usd=0.001 * n)
    return EpisodeRecord(
        messages=tuple(msgs),
        model_calls=tuple(calls),
        tool_calls=tuple(tools),
        usage=total,
        wall_s=2.5,
    )


def write_run(path: Path, n_steps: int, seed: int = 0) -> int:
    """Write a synthetic run log of about ``n_steps`` steps through the run-log writer; the
    number written. Episodes are drawn from a pool (their JSON is as large as fresh ones)."""
    rng = random.Random(seed)
    header = RunHeader(
        run_id="bench",
        created_at=T0,
        dataset_id="synthetic",
        config={"rollouts": 1},
        agents=tuple(AGENTS),
        code_version="bench",
    )
    pool = {(k, n): _episode(n, f"provider:m{k}", rng) for k in range(4) for n in range(10, 41, 3)}
    n_events = max(1, n_steps // (STEPS_PER_EVENT * len(AGENTS)))
    scores = Scores(brier=0.0, accuracy=0.0, log_loss=0.0)
    written = 0
    with RunLogWriter(path, header) as writer:
        for e in range(n_events):
            truth = "Yes" if rng.random() < 0.4 else "No"
            for s in range(STEPS_PER_EVENT):
                cutoff = T0 + timedelta(days=e % 300 + 7 * s)
                q = min(0.98, max(0.02, rng.random()))
                grading = Grading(
                    truth=truth, labels=("Yes", "No"), market_probs={"Yes": q, "No": 1 - q}
                )
                for spec in AGENTS:
                    if spec.role == "reference":
                        probs, episode = {"Yes": q, "No": 1 - q}, EpisodeRecord()
                    elif spec.factory == "uniform":
                        probs, episode = {"Yes": 0.5, "No": 0.5}, EpisodeRecord()
                    else:
                        p = min(0.99, max(0.01, q + rng.gauss(0, 0.15)))
                        probs = {"Yes": p, "No": 1 - p}
                        k = int(spec.name[-1])
                        episode = pool[(k, rng.choice(range(10, 41, 3)))]
                    rec = StepRecord(
                        run_id="bench", agent=spec.name, role=spec.role, setting=spec.setting,
                        event_id=f"event-{e:05d}", step_index=s, cutoff=cutoff,
                        category=("politics", "sports", "economics", "science")[e % 4],
                        forecast=Forecast(probs=probs), episode=episode, grading=grading,
                        scores=scores,
                    )  # fmt: skip
                    writer.write(rec, sync=False)
                    written += 1
                writer.sync()
    return written


CLI = "import sys; from pastcast.cli import main; sys.exit(main())"
INDEX = "import sys; from pastcast.reports.dashboard import RunIndex; RunIndex.load([sys.argv[1]])"


def _readers(log: Path, out: Path) -> dict[str, list[str]]:
    return {
        "score": ["-c", CLI, "score", str(log), "--bootstrap", "1000"],
        "table": ["-c", CLI, "export", "table", str(log), "--out", str(out / "table")],
        "audit": ["-c", CLI, "audit", "run", str(log)],
        "stats": ["-c", CLI, "stats", "longitudinal", str(log), "--bootstrap", "1000"],
        "index": ["-c", INDEX, str(log.parent)],
    }


def measure(src: str, args: list[str], timeout: float) -> dict[str, object]:
    """Wall time and peak RSS of ``python ARGS`` with ``src`` first on the path."""
    env = os.environ | {"PYTHONPATH": src}
    cmd = ["/usr/bin/time", "-v", sys.executable, *args]
    t = time.perf_counter()
    try:
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"rc": "timeout", "wall_s": round(time.perf_counter() - t, 1)}
    wall = time.perf_counter() - t
    peak = re.search(r"Maximum resident set size \(kbytes\): (\d+)", proc.stderr)
    cpu = [
        float(m.group(1))
        if (m := re.search(rf"{k} time \(seconds\): ([\d.]+)", proc.stderr))
        else 0.0
        for k in ("User", "System")
    ]
    return {
        "rc": proc.returncode,
        "wall_s": round(wall, 1),
        "cpu_s": round(sum(cpu), 1),  # the machine may be shared: CPU time says what it cost
        "peak_mb": round(int(peak.group(1)) / 1024) if peak else None,
        "error": proc.stderr.strip().splitlines()[0][:200] if proc.returncode else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100_000)
    parser.add_argument("--src", action="append", default=[], help="NAME=PATH of a source tree")
    parser.add_argument("--readers", default="score,table,audit,stats,index")
    parser.add_argument("--timeout", type=float, default=1800)
    parser.add_argument("--rebuild", action="store_true", help="Time a rebuild from the JSONL")
    args = parser.parse_args()
    trees = dict(s.split("=", 1) for s in args.src) or {"here": os.environ.get("PYTHONPATH", "")}
    tmp = Path(tempfile.mkdtemp(prefix="pastcast-runlogs-"))
    try:
        log = tmp / "run" / "run.jsonl"
        t = time.perf_counter()
        n = write_run(log, args.steps)
        size = log.stat().st_size / 1e6
        print(
            json.dumps(
                {"steps": n, "mb": round(size), "written_s": round(time.perf_counter() - t, 1)}
            ),
            flush=True,
        )
        readers = _readers(log, tmp)
        for name in args.readers.split(","):
            for tree, src in trees.items():
                shutil.rmtree(tmp / "table", ignore_errors=True)
                row = {"reader": name, "code": tree, **measure(src, readers[name], args.timeout)}
                print(json.dumps(row), flush=True)
        if args.rebuild:
            shutil.rmtree(log.with_suffix(".columns"))
            src = next(iter(trees.values()))
            probe = "import sys; from pastcast.runlog import read_step_columns as r; r(sys.argv[1])"
            row = {
                "reader": "companion rebuild",
                **measure(src, ["-c", probe, str(log)], args.timeout),
            }
            print(json.dumps(row), flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
