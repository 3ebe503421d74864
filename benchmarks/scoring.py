"""Scoring 1M forecasts: pastcast side by side with scikit-learn and plain numpy, then
summarising with 4,000-draw event-clustered bootstrap CIs.

Run: python benchmarks/scoring.py [--n 1000000] [--events 2000] [--threads 2]
A script, not a test: it prints the measured wall time of each stage (median of ``--repeats``).

Side by side, on 1M binary and 1M four-option forecasts (2% unusable rows):

* pastcast: ``score_matrix(probs, truth, market).metrics()``: every per-forecast score (Brier,
  accuracy with fractional ties, log loss, information alpha, alpha, binary Brier, Hindcast
  accuracy, distance to market), unusable rows filled by the uniform convention;
* scikit-learn: ``brier_score_loss``, ``log_loss`` and ``accuracy_score`` (means only);
* plain numpy: the same three scores per row, written directly (clip, renormalise, one gather).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable
from typing import Any


def median_time(fn: Callable[[], Any], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def side_by_side(n: int, k: int, repeats: int) -> None:
    import numpy as np
    from sklearn.metrics import accuracy_score, brier_score_loss, log_loss

    from pastcast.scoring import LOG_FLOOR, score_matrix

    rng = np.random.default_rng(k)
    probs = rng.dirichlet(np.ones(k), size=n)
    probs[rng.uniform(size=n) < 0.02] = 0.0  # unusable forecasts
    truth = rng.integers(0, k, n)
    market = rng.dirichlet(np.ones(k), size=n)

    def ours() -> float:
        return float(np.mean(score_matrix(probs, truth, market).metrics()["brier"]))

    def plain() -> float:
        p = np.where(np.isfinite(probs) & (probs > 0), probs, 0.0)
        tot = p.sum(axis=1)
        ok = tot > 0
        p /= np.where(ok, tot, 1.0)[:, None]
        p[~ok] = 1.0 / k  # unusable rows count as uniform, as pastcast's default convention
        pt = p[np.arange(n), truth]
        brier = np.einsum("ij,ij->i", p, p) - 2.0 * pt + 1.0
        loss = -np.log(np.maximum(pt, LOG_FLOOR))
        acc = p.argmax(axis=1) == truth
        return float(brier.mean() + loss.mean() + acc.mean())

    def sklearn() -> float:
        p = np.where(np.isfinite(probs) & (probs > 0), probs, 0.0)
        tot = p.sum(axis=1)
        ok = tot > 0
        p /= np.where(ok, tot, 1.0)[:, None]
        p[~ok] = 1.0 / k
        if k == 2:
            brier = brier_score_loss(truth == 0, p[:, 0])
        else:
            brier = brier_score_loss(truth, p, labels=list(range(k)))
        loss = log_loss(truth, p, labels=list(range(k)))
        return float(brier + loss + accuracy_score(truth, p.argmax(axis=1)))

    label = "binary" if k == 2 else f"{k}-option"
    got = {name: median_time(fn, repeats) for name, fn in (("numpy", plain), ("pastcast", ours))}
    got["scikit-learn"] = median_time(sklearn, repeats)
    base = got["numpy"]
    cells = "  ".join(f"{name} {s * 1000:7.1f} ms ({s / base:4.2f}x)" for name, s in got.items())
    print(f"{n:,} {label:9} forecasts: {cells}  (load {os.getloadavg()[0]:.2f})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--n", type=int, default=1_000_000, help="forecasts")
    ap.add_argument("--events", type=int, default=2_000, help="distinct events")
    ap.add_argument("--labels", type=int, default=4, help="outcomes per market (bootstrap run)")
    ap.add_argument("--agents", type=int, default=5)
    ap.add_argument("--bootstrap", type=int, default=4000)
    ap.add_argument("--repeats", type=int, default=5, help="timed runs per system (median)")
    ap.add_argument("--threads", type=int, default=2, help="BLAS threads (CI has 2 cores)")
    args = ap.parse_args()
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(args.threads)

    import numpy as np

    from pastcast.scoring import score_matrix, summarize

    print(f"load average at start: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    for k in (2, 4):
        side_by_side(args.n, k, args.repeats)

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
