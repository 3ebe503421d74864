"""Approximate dense search (frozen per-month IVF, the cutoff's month exact) against the exact
search, at a million stand-in vectors: recall@10 and p50/p95 latency per ``nprobe``, at cutoffs
late in the corpus and inside its months.

    python benchmarks/dense_approximate.py [--docs 1000000] [--months 30] [--dim 384] \\
        [--nprobe 4 8 16 32] [--queries 200] [--json out.json]

No text model embeds a million documents on these CPUs, so the vectors are stand-ins. ``--stand-in
stories`` (the default) models news: each month has its own stories of about 20 documents,
each story near one of 1,024 topics (cosine about 0.8) and each document near its story (about
0.9); a query sits near a story as its documents do. ``--stand-in isotropic`` is
``benchmarks/retrieval.py``'s: unit vectors around 1,024 topic centres with noise in every
dimension (cosine about 0.5 to the centre), queries likewise: every neighbour is about as far as
the next, the hardest case for a clustering index. They are written to a dense cache beside a
stand-in of the index (month partitions of equal size, ids in ordinal order: what ``DenseIndex``
reads of an ``EmbeddedIndex``), so both searches run ``DenseIndex``'s own code: the exact one
(8-bit month copies propose candidates, rescored in full under the proven bound; equal to an
exhaustive scan) and the approximate one (``ivf_min``: every month before the month of the last
admitted document searched by its IVF index with ``nprobe`` lists, that month exactly).
recall@10 is the share of the exact top 10 that the approximate top 10 holds. Latency is the
search alone (query vectors come from the index's LRU for both). The load average is printed:
the machine may be shared.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import os
import random
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np


class TableEmbedder:
    """Query vectors fixed in advance (the stand-in corpus has no text model)."""

    name = "stand-in-topics"

    def __init__(self, table: dict[str, np.ndarray]) -> None:
        self.table = table

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        return np.stack([self.table[t] for t in texts]).astype(np.float32)


class StandInIndex:
    """What ``DenseIndex`` reads of an ``EmbeddedIndex``: its folder, manifest (content digest,
    one digest per month), size, month partitions and id ranks."""

    def __init__(self, path: Path, n: int, months: int) -> None:
        self.path = path
        per = n // months
        bases = [p * per for p in range(months)] + [n]
        self.partition_bounds = list(itertools.pairwise(bases))
        parts = [
            {"content_sha256": hashlib.sha256(f"{lo}-{hi}".encode()).hexdigest()}
            for lo, hi in self.partition_bounds
        ]
        digest = hashlib.sha256(json.dumps(parts).encode()).hexdigest()
        self.manifest: dict[str, object] = {"content_sha256": digest, "partitions": parts}
        self.id_rank = np.arange(n, dtype=np.int64)
        self._n = n

    def __len__(self) -> int:
        return self._n


def unit(x: np.ndarray) -> np.ndarray:
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def noise(rng: np.random.Generator, rows: int, dim: int) -> np.ndarray:
    """Random directions of unit length."""
    return unit(rng.standard_normal((rows, dim)))


def write_vectors(
    index: StandInIndex, centres: np.ndarray, name: str, seed: int, stand_in: str
) -> np.ndarray:
    """The corpus's vectors in its dense cache; returns the story centres (queries sit near
    them) of ``stories``, or the topic centres of ``isotropic``."""
    n, dim = len(index), centres.shape[1]
    rng = np.random.default_rng(seed)
    out = np.lib.format.open_memmap(
        index.path / f"dense-{name}.npy", mode="w+", dtype=np.float32, shape=(n, dim)
    )
    anchors = []
    for lo, hi in index.partition_bounds:
        if stand_in == "isotropic":  # topic centres plus noise in every dimension
            for a in range(lo, hi, 100_000):
                b = min(hi, a + 100_000)
                topic = rng.integers(0, len(centres), size=b - a)
                out[a:b] = unit(centres[topic] + 0.08 * rng.standard_normal((b - a, dim)))
            continue
        # news: each month's stories (about 20 documents each) near one of the topics; a
        # document is close to its story (cosine about 0.9), a story to its topic (about 0.8)
        k = max(1, (hi - lo) // 20)
        topic = rng.integers(0, len(centres), size=k)
        stories = unit(centres[topic] + 0.7 * noise(rng, k, dim))
        anchors.append(stories)
        for a in range(lo, hi, 100_000):
            b = min(hi, a + 100_000)
            story = rng.integers(0, k, size=b - a)
            out[a:b] = unit(stories[story] + 0.5 * noise(rng, b - a, dim))
    out.flush()
    del out
    meta = {"content_sha256": index.manifest["content_sha256"], "model": name, "dim": dim}
    (index.path / f"dense-{name}.json").write_text(json.dumps(meta))
    return centres if stand_in == "isotropic" else np.concatenate(anchors)


def pct(xs: list[float], q: int) -> float:
    return statistics.quantiles(xs, n=100)[q - 1] if len(xs) > 1 else xs[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=int, default=1_000_000)
    parser.add_argument("--months", type=int, default=30)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--nprobe", type=int, nargs="+", default=[4, 8, 16, 32])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--stand-in", choices=["stories", "isotropic"], default="stories")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()

    from pastcast.corpus.dense import DenseIndex

    print(f"load average at start: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    rng = np.random.default_rng(1)
    centres = unit(rng.standard_normal((1024, args.dim)))
    queries = [f"q{i}" for i in range(args.queries)]
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="pastcast-ann-") as tmp:
        index = StandInIndex(Path(tmp), args.docs, args.months)
        t0 = time.perf_counter()
        anchors = write_vectors(index, centres, TableEmbedder.name, 2, args.stand_in)
        spread = 0.08 * np.sqrt(args.dim) if args.stand_in == "isotropic" else 0.5
        table = {
            q: unit(
                anchors[rng.integers(0, len(anchors))][None] + spread * noise(rng, 1, args.dim)
            )[0]
            for q in queries
        }
        print(
            f"{args.docs:,} {args.stand_in} vectors of {args.dim} dimensions over {args.months} "
            f"months ({args.docs // args.months:,} a month), written in "
            f"{time.perf_counter() - t0:.1f} s"
        )
        t0 = time.perf_counter()
        exact = DenseIndex(index, TableEmbedder(table))  # type: ignore[arg-type]
        print(f"exact: 8-bit month copies built in {time.perf_counter() - t0:.1f} s")
        # cutoffs: after the last document, and inside the last, a middle and an early month
        bounds = index.partition_bounds
        cut = [args.docs, bounds[-1][0] + (bounds[-1][1] - bounds[-1][0]) // 2]
        cut += [bounds[len(bounds) // 2][0] + 1000, bounds[2][1] - 1]
        picks = random.Random(3)
        work = [(q, picks.choice(cut)) for q in queries]
        truth: dict[tuple[str, int], list[int]] = {}
        ms: list[float] = []
        for q, n in work:
            exact.embed_query(q)
            t = time.perf_counter()
            truth[(q, n)] = [o for o, _ in exact.ranked(q, n, args.k)]
            ms.append(1000 * (time.perf_counter() - t))
        row = {"mode": "exact", "p50_ms": statistics.median(ms), "p95_ms": pct(ms, 95)}
        row |= {"recall_at_10": 1.0, "load": os.getloadavg()[0]}
        rows.append(row)
        print(
            f"  exact       : p50 {row['p50_ms']:6.1f} ms, p95 {row['p95_ms']:6.1f} ms "
            f"(load {row['load']:.2f})"
        )
        exact.close()
        t0 = time.perf_counter()
        approx = DenseIndex(index, TableEmbedder(table), ivf_min=1000, nprobe=args.nprobe[0])  # type: ignore[arg-type]
        print(f"approximate: month IVF indexes trained in {time.perf_counter() - t0:.1f} s")
        import faiss

        for nprobe in args.nprobe:
            for ivf in approx._ivf.values():
                faiss.extract_index_ivf(ivf).nprobe = nprobe
            ms, recall = [], []
            for q, n in work:
                approx.embed_query(q)
                t = time.perf_counter()
                got = [o for o, _ in approx.ranked(q, n, args.k)]
                ms.append(1000 * (time.perf_counter() - t))
                want = truth[(q, n)]
                assert all(o < n for o in got)  # never at or after the cutoff
                recall.append(len(set(got) & set(want)) / max(1, len(want)))
            row = {
                "mode": f"ivf nprobe={nprobe}",
                "p50_ms": statistics.median(ms),
                "p95_ms": pct(ms, 95),
                "recall_at_10": statistics.fmean(recall),
                "load": os.getloadavg()[0],
            }
            rows.append(row)
            print(
                f"  ivf nprobe={nprobe:<3}: p50 {row['p50_ms']:6.1f} ms, p95 {row['p95_ms']:6.1f} "
                f"ms, recall@10 {row['recall_at_10']:.3f} (load {row['load']:.2f})"
            )
        approx.close()
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))
    print(f"load average at the end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
