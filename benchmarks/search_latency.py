"""Search latency of the embedded BM25 index at several cutoffs, against a naive baseline.

The baseline ranks every document with whole-corpus statistics and then drops the future ones
(what a stock engine with a post-filter does; its scores are not as-of exact). Both are measured
in the same run on the same synthetic corpus.

    python benchmarks/search_latency.py [--docs 5000] [--queries 300]
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

from pastcast.corpus import EmbeddedIndex, tokenize
from pastcast.corpus._arrays import to_micros
from pastcast.records import Document

START = datetime(2024, 1, 1, tzinfo=UTC)
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def synthetic_corpus(n: int, seed: int = 0, vocab: int = 20_000) -> list[Document]:
    """Documents with a Zipf-like vocabulary spread uniformly over two years."""
    rng = np.random.default_rng(seed)
    words = np.array([f"t{i}" for i in range(vocab)])
    weights = 1.0 / np.arange(1, vocab + 1)
    weights /= weights.sum()
    span = 730 * 86400
    docs = []
    for i in range(n):
        length = int(rng.integers(20, 300))
        text = " ".join(words[rng.choice(vocab, size=length, p=weights)])
        title = " ".join(words[rng.choice(vocab, size=6, p=weights)])
        ts = START + timedelta(seconds=int(rng.integers(0, span)))
        docs.append(Document(id=f"d{i:07d}", timestamp=ts, title=title, text=text))
    return docs


def naive_search(index: EmbeddedIndex, query: str, as_of: datetime, k: int) -> list[int]:
    """Rank all documents (whole-corpus statistics), then drop those at or after the cutoff."""
    terms = list(dict.fromkeys(tokenize(query)))
    ordinals, _ = index.score(terms, len(index), len(index))
    n = index.count_before(as_of)
    return [o for o in ordinals.tolist() if o < n][:k]


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
        size = sum(p.stat().st_size for p in (Path(tmp) / "index").iterdir()) / 1e6
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
