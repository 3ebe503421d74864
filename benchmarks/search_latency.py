"""Search latency of the embedded BM25 index at several cutoffs, against a naive baseline.

The baseline scores every document in plain numpy (with the same as-of statistics, so its
results are equal), drops the future ones and ranks only the matching ones. Both
are measured in the same run on the same synthetic corpus.

    python benchmarks/search_latency.py [--docs 5000] [--queries 300]
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

from pastcast.corpus import STOPWORDS
from pastcast.corpus.embedded import EmbeddedIndex, to_micros
from pastcast.records import Document

START = datetime(2024, 1, 1, tzinfo=UTC)
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


MONTH_SECONDS = 30 * 86400


def zipf_vocabulary(size: int = 200_000, exponent: float = 1.07) -> tuple[list[str], np.ndarray]:
    """Words and their cumulative Zipf probabilities. As in real text, the most frequent ranks
    are stopwords (which the tokenizer drops); the rest are synthetic words."""
    words = sorted(STOPWORDS) + [f"w{i}" for i in range(size - len(STOPWORDS))]
    weights = 1.0 / np.arange(1, size + 1) ** exponent
    return words, np.cumsum(weights / weights.sum())


def synthetic_stream(n: int, *, months: int = 30, seed: int = 0) -> Iterator[Document]:
    """``n`` documents in time order over ``months`` 30-day months from 2023-01-01: 50-200 Zipf
    tokens of text and 8 of title each; timestamps at whole seconds (so some coincide)."""
    rng = np.random.default_rng(seed)
    words, cdf = zipf_vocabulary()
    emitted = 0
    for m in range(months):
        count = n * (m + 1) // months - emitted
        start = START + timedelta(seconds=m * MONTH_SECONDS)
        secs = np.sort(rng.integers(0, MONTH_SECONDS, size=count)).tolist()
        lengths = rng.integers(50, 201, size=count)
        ends = np.cumsum(lengths).tolist()
        body = np.searchsorted(cdf, rng.random(int(lengths.sum()))).tolist()
        heads = np.searchsorted(cdf, rng.random(count * 8)).tolist()
        for j in range(count):
            lo = ends[j] - int(lengths[j])
            yield Document(
                id=f"d{emitted + j:07d}",
                timestamp=start + timedelta(seconds=secs[j]),
                title=" ".join(map(words.__getitem__, heads[j * 8 : j * 8 + 8])),
                text=" ".join(map(words.__getitem__, body[lo : ends[j]])),
                source="synthetic",
            )
        emitted += count


def synthetic_corpus(n: int, seed: int = 0) -> list[Document]:
    return list(synthetic_stream(n, months=24, seed=seed))


def naive_search(index: EmbeddedIndex, query: str, as_of: datetime, k: int) -> list[int]:
    """Score all documents (as-of statistics), drop those at or after the cutoff, rank the
    matching rest."""
    ordinals, _ = index.naive_score(index.query_terms(query), index.count_before(as_of), k)
    return ordinals.tolist()


def timed(fn: Callable[[], object], repeats: int) -> list[float]:
    out = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t0) * 1000)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=5000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--k", type=int, default=10)
    args = parser.parse_args()
    docs = synthetic_corpus(args.docs)
    rng = random.Random(1)
    queries = [" ".join(rng.sample(d.title.split(), 3)) for d in rng.sample(docs, args.queries)]
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        EmbeddedIndex.build(docs, Path(tmp) / "index")
        build_s = time.perf_counter() - t0
        index = EmbeddedIndex.open(Path(tmp) / "index")
        size = sum(p.stat().st_size for p in (Path(tmp) / "index").rglob("*")) / 1e6
        print(f"{args.docs} documents: build {build_s:.2f} s, index {size:.1f} MB on disk")
        stamps = sorted(to_micros(d.timestamp) for d in docs)
        print(
            f"{'cutoff':>28} {'visible':>8} | {'as-of p50':>9} {'p95':>7} | "
            f"{'naive p50':>9} {'p95':>7}  (ms, k={args.k})"
        )
        for frac in (0.1, 0.5, 0.9, 1.0):
            cutoff = EPOCH + timedelta(microseconds=stamps[int(frac * (len(stamps) - 1))])
            ours: list[float] = []
            naive: list[float] = []
            for q in queries:
                ours += timed(lambda q=q, c=cutoff: index.search(q, as_of=c, k=args.k), 3)
                naive += timed(lambda q=q, c=cutoff: naive_search(index, q, c, args.k), 3)
            p = lambda xs, q: statistics.quantiles(xs, n=100)[q - 1]  # noqa: E731
            print(
                f"{cutoff.isoformat():>28} {index.count_before(cutoff):8d} | "
                f"{statistics.median(ours):9.3f} {p(ours, 95):7.3f} | "
                f"{statistics.median(naive):9.3f} {p(naive, 95):7.3f}"
            )


if __name__ == "__main__":
    main()
