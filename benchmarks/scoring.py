"""`pastcast score` of a 100,000-step run log beside a DuckDB process computing the Brier per
agent and setting from the same log's Parquet parts; then 1M forecasts summarised with
4,000-draw event-clustered bootstrap CIs.

Run: python benchmarks/scoring.py [--steps 100000] [--repeats 3] [--n 1000000] [--threads 2]
A script, not a test: it prints measured figures.

The run log (``synthetic_runs.write_scoring_run``: twelve agents in three settings and the
market reference, two rollouts, binary and multi-outcome events, unusable forecasts, steps
without a market) is written in a temporary folder, removed at the end. Each command runs in a
fresh process under a small wrapper process, which reports its child's CPU seconds (user +
system) and peak resident set (``resource.getrusage(RUSAGE_CHILDREN)``); one untimed run of each
first, then the median of ``--repeats``:

* ``pastcast score LOG --bootstrap 0`` and ``pastcast score LOG`` (4,000 draws);
* DuckDB: the Brier per agent and setting, re-scored from the ``probs``, ``truth`` and
  ``labels`` columns of the log's companion (``run.columns/part-*.parquet``), unusable
  forecasts as the uniform forecast (pastcast's default).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CLI = "import sys; from pastcast.cli import main; sys.exit(main())"
DUCKDB = """
import sys, duckdb
print(duckdb.sql(f'''
SELECT agent, setting, count(*) AS n,
  avg(CASE WHEN usable AND tot > 0 THEN sq / (tot * tot) - 2 * pt / tot + 1 ELSE 1 - 1 / k END)
FROM (
  SELECT agent, setting, usable,
    coalesce(list_sum(list_transform(probs, lambda x: x.p * x.p)), 0) AS sq,
    coalesce(list_sum(list_transform(probs, lambda x: x.p)), 0) AS tot,
    coalesce(list_sum(list_transform(list_filter(probs, lambda x: x.label = truth),
                                     lambda x: x.p)), 0) AS pt,
    len(list_distinct(list_append(labels, truth))) AS k
  FROM read_parquet('{sys.argv[1]}')
) GROUP BY agent, setting ORDER BY agent, setting''').fetchall())
"""
MEASURE = """
import resource, subprocess, sys
done = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL)
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(done.returncode, r.ru_utime + r.ru_stime, r.ru_maxrss / 1024)
"""


def measured(args: list[str]) -> tuple[float, float]:
    """CPU seconds and peak MB of ``python args`` in a fresh process."""
    out = subprocess.run(
        [sys.executable, "-c", MEASURE, sys.executable, *args],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    if out[0] != "0":
        raise SystemExit(f"failed ({out[0]}): {' '.join(args)}")
    return float(out[1]), float(out[2])


def command_figures(steps: int, repeats: int) -> None:
    from synthetic_runs import write_scoring_run

    with tempfile.TemporaryDirectory(prefix="pastcast-scoring-") as tmp:
        log = Path(tmp) / "run.jsonl"
        t0 = time.perf_counter()
        written = write_scoring_run(log, steps)
        print(f"run log: {written:,} steps written in {time.perf_counter() - t0:.1f} s")
        parts = str(log.with_suffix(".columns") / "part-*.parquet")
        systems = {
            "score --bootstrap 0": ["-c", CLI, "score", str(log), "--bootstrap", "0"],
            "score (4,000 draws)": ["-c", CLI, "score", str(log)],
            "DuckDB": ["-c", DUCKDB, parts],
        }
        for args in systems.values():
            measured(args)  # untimed: the companion checked once, the files in the page cache
        got: dict[str, tuple[float, float]] = {}
        loads = [os.getloadavg()[0]]
        for name, args in systems.items():
            runs = [measured(args) for _ in range(repeats)]
            got[name] = (
                statistics.median(c for c, _ in runs),
                statistics.median(m for _, m in runs),
            )
            loads.append(os.getloadavg()[0])
        duck_cpu = got["DuckDB"][0]
        for name, (cpu, mb) in got.items():
            ratio = f"  {cpu / duck_cpu:4.1f}x DuckDB's CPU" if name != "DuckDB" else ""
            print(f"{name:22} {cpu:5.2f} s CPU  {mb:4.0f} MB peak{ratio}")
        print(
            f"median of {repeats}, each a fresh process; load {min(loads):.1f} to "
            f"{max(loads):.1f} on {os.cpu_count()} cores"
        )
        print(
            json.dumps(
                {k: {"cpu_s": round(c, 3), "peak_mb": round(m)} for k, (c, m) in got.items()}
            )
        )


def forecast_table(n: int, events: int, agents: int, k: int) -> object:
    """Step columns of ``n`` forecasts over ``k`` labels (2% unusable), as Arrow arrays."""
    import numpy as np
    import pyarrow as pa

    rng = np.random.default_rng(0)
    labels = pa.array([f"o{j}" for j in range(k)] * n)
    offsets = pa.array(np.arange(n + 1, dtype=np.int32) * k)

    def pairs(p: np.ndarray) -> pa.Array:
        values = pa.StructArray.from_arrays([labels, pa.array(p.ravel())], ["label", "p"])
        return pa.ListArray.from_arrays(offsets, values)

    probs = rng.dirichlet(np.ones(k), size=n)
    probs[rng.uniform(size=n) < 0.02] = 0.0
    settings = np.array(["memory_free", "memory_on"])
    return pa.table(
        {
            "agent": pa.array(np.char.add("agent", rng.integers(0, agents, n).astype(str))),
            "setting": pa.array(settings[rng.integers(0, 2, n)]),
            "role": pa.array(np.full(n, "agent")),
            "run_id": pa.array(np.full(n, "run")),
            "event_id": pa.array(np.char.add("e", rng.integers(0, events, n).astype(str))),
            "split": pa.array(np.full(n, "")),
            "category": pa.array(np.full(n, "")),
            "step_index": pa.array(rng.integers(0, 10, n)),
            "rollout": pa.array(rng.integers(0, 4, n)),
            "usable": pa.array(np.ones(n, dtype=bool)),
            "probs": pairs(probs),
            "truth": pa.array(np.char.add("o", rng.integers(0, k, n).astype(str))),
            "labels": pa.ListArray.from_arrays(offsets, labels),
            "market_probs": pairs(rng.dirichlet(np.ones(k), size=n)),
        }
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--steps", type=int, default=100_000, help="steps of the run log")
    ap.add_argument("--repeats", type=int, default=3, help="timed runs per command (median)")
    ap.add_argument("--n", type=int, default=1_000_000, help="forecasts summarised (0: none)")
    ap.add_argument("--events", type=int, default=2_000, help="distinct events")
    ap.add_argument("--labels", type=int, default=4, help="outcomes per market")
    ap.add_argument("--agents", type=int, default=5)
    ap.add_argument("--bootstrap", type=int, default=4000)
    ap.add_argument("--threads", type=int, default=2, help="BLAS threads (CI has 2 cores)")
    args = ap.parse_args()
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(args.threads)
    sys.path.insert(0, str(Path(__file__).parent))
    print(f"load average at start: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    command_figures(args.steps, args.repeats)
    if args.n <= 0:
        return

    from pastcast.scoring import summarize, table_from_columns

    columns = forecast_table(args.n, args.events, args.agents, args.labels)
    t0 = time.perf_counter()
    table = table_from_columns(columns)  # type: ignore[arg-type]
    t1 = time.perf_counter()
    out = summarize(table, by=("agent", "setting"), bootstrap=args.bootstrap, seed=0)
    t2 = time.perf_counter()
    print(
        f"forecasts={args.n:,} events={args.events:,} groups={len(out)} labels={args.labels} "
        f"bootstrap={args.bootstrap} threads={args.threads} (load {os.getloadavg()[0]:.1f})"
    )
    print(f"score: {t1 - t0:.2f} s  summarize+bootstrap: {t2 - t1:.2f} s  total: {t2 - t0:.2f} s")
    b = out[0].metrics["brier"]
    print(
        f"e.g. {out[0].group}: Brier {b.mean:.4f} [{b.ci_low:.4f}, {b.ci_high:.4f}] "
        f"failures {out[0].failure_rate:.2%}"
    )


if __name__ == "__main__":
    main()
