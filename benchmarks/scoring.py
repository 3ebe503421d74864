"""Time scoring and summarising 1M forecasts with 4,000-draw event-clustered bootstrap CIs.

Run: python benchmarks/scoring.py [--n 1000000] [--events 2000] [--threads 2]
A script, not a test: it prints the measured wall time of each stage.
"""

from __future__ import annotations

import argparse
import os
import time


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--n", type=int, default=1_000_000, help="forecasts")
    ap.add_argument("--events", type=int, default=2_000, help="distinct events")
    ap.add_argument("--labels", type=int, default=4, help="outcomes per market")
    ap.add_argument("--agents", type=int, default=5)
    ap.add_argument("--bootstrap", type=int, default=4000)
    ap.add_argument("--threads", type=int, default=2, help="BLAS threads (CI has 2 cores)")
    args = ap.parse_args()
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(args.threads)

    import numpy as np

    from pastcast.scoring import score_matrix, summarize

    rng = np.random.default_rng(0)
    n, k = args.n, args.labels
    settings = ("memory_free", "memory_on")
    agent = rng.integers(0, args.agents, n)
    setting = rng.integers(0, len(settings), n)
    event = rng.integers(0, args.events, n)
    probs = rng.dirichlet(np.ones(k), size=n)
    probs[rng.uniform(size=n) < 0.02] = 0.0  # ~2% unusable forecasts
    truth = rng.integers(0, k, n)
    market = rng.dirichlet(np.ones(k), size=n)
    keys = {
        "agent": (agent, tuple(f"agent{i}" for i in range(args.agents))),
        "setting": (setting, settings),
        "role": (np.zeros(n, dtype=np.int64), ("agent",)),
        "event": (event, tuple(f"e{i}" for i in range(args.events))),
    }

    t0 = time.perf_counter()
    table = score_matrix(
        probs, truth, market, keys=keys, step=rng.integers(0, 10, n), rollout=rng.integers(0, 4, n)
    )
    t1 = time.perf_counter()
    out = summarize(table, by=("agent", "setting"), bootstrap=args.bootstrap, seed=0)
    t2 = time.perf_counter()
    print(
        f"forecasts={n:,} events={args.events:,} groups={len(out)} labels={k} "
        f"bootstrap={args.bootstrap} threads={args.threads}"
    )
    print(f"score: {t1 - t0:.2f} s  summarize+bootstrap: {t2 - t1:.2f} s  total: {t2 - t0:.2f} s")
    b = out[0].metrics["brier"]
    print(
        f"e.g. {out[0].group}: Brier {b.mean:.4f} [{b.ci_low:.4f}, {b.ci_high:.4f}] "
        f"failures {out[0].failure_rate:.2%}"
    )


if __name__ == "__main__":
    main()
