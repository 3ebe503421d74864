"""Build time, index size, peak memory and as-of search latency on the real WCEP archive and on
a synthetic corpus, against the naive rank-everything-then-drop-the-future baseline.

    python benchmarks/retrieval.py --wcep ../shared/data/wcep --synthetic 100000 [--dense 2000]

``--dense N`` also times dense and hybrid search over the first N WCEP documents (embedding on
CPU is slow, so N is kept small).
"""

from __future__ import annotations

import argparse
import random
import resource
import statistics
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from search_latency import naive_search, synthetic_corpus, timed

from pastcast.corpus import CorpusBackend, EmbeddedIndex, read_wcep
from pastcast.records import Document


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def latency(
    backend: CorpusBackend,
    index: EmbeddedIndex,
    queries: list[str],
    cutoffs: list[datetime],
    naive: bool,
) -> None:
    for cutoff in cutoffs:
        ours = [
            t for q in queries for t in timed(lambda q=q, c=cutoff: backend.search(q, as_of=c), 3)
        ]
        line = (
            f"  {cutoff.date()} visible {index.count_before(cutoff):8d}  as-of p50 "
            f"{statistics.median(ours):7.3f} p95 {statistics.quantiles(ours, n=20)[18]:7.3f} ms"
        )
        if naive:
            base = [
                t
                for q in queries
                for t in timed(lambda q=q, c=cutoff: naive_search(index, q, c, 10), 3)
            ]
            line += (
                f" | naive p50 {statistics.median(base):7.3f} "
                f"p95 {statistics.quantiles(base, n=20)[18]:7.3f} ms"
            )
        print(line)


def run(name: str, docs: list[Document], tmp: Path, queries: list[str]) -> EmbeddedIndex:
    t0 = time.perf_counter()
    index = EmbeddedIndex.build(docs, tmp / name)
    build = time.perf_counter() - t0
    size = sum(p.stat().st_size for p in (tmp / name).iterdir()) / 1e6
    print(
        f"{name}: {len(docs)} docs, build {build:.1f} s, {size:.0f} MB on disk, "
        f"peak RSS so far {peak_mb():.0f} MB"
    )
    stamps = sorted(d.timestamp for d in docs)
    cutoffs = [stamps[int(f * (len(stamps) - 1))] for f in (0.1, 0.5, 0.9, 1.0)]
    latency(index, index, queries, cutoffs, naive=True)
    return index


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wcep", type=Path)
    parser.add_argument("--synthetic", type=int, default=0)
    parser.add_argument("--dense", type=int, default=0)
    args = parser.parse_args()
    rng = random.Random(0)
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        if args.wcep:
            docs = list(read_wcep(args.wcep))
            queries = [" ".join(d.title.split()[:3]) for d in rng.sample(docs, 100)]
            run("wcep", docs, tmp, queries)
            if args.dense:
                from pastcast.corpus import DenseIndex, HybridIndex, MiniLMEmbedder

                sub = docs[: args.dense]
                index = EmbeddedIndex.build(sub, tmp / "wcep-dense")
                t0 = time.perf_counter()
                dense = DenseIndex(index, MiniLMEmbedder())
                print(f"dense: embedded {len(sub)} docs in {time.perf_counter() - t0:.1f} s")
                cut = [
                    sorted(d.timestamp for d in sub)[len(sub) // 2],
                    datetime(2030, 1, 1, tzinfo=UTC),
                ]
                print(" dense")
                latency(dense, index, queries[:30], cut, naive=False)
                print(" hybrid")
                latency(HybridIndex(dense), index, queries[:30], cut, naive=False)
        if args.synthetic:
            t0 = time.perf_counter()
            docs = synthetic_corpus(args.synthetic)
            print(f"generated {len(docs)} synthetic docs in {time.perf_counter() - t0:.1f} s")
            queries = [" ".join(rng.sample(d.title.split(), 3)) for d in rng.sample(docs, 100)]
            run("synthetic", docs, tmp, queries)


if __name__ == "__main__":
    main()
