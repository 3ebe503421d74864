"""Build time, index size, peak memory and as-of search latency per mode (bm25, dense, hybrid) at
several cutoffs, side by side with a naive baseline, on the real WCEP archive and a synthetic
corpus.

    python benchmarks/retrieval.py --wcep ../shared/data/wcep --wcep-dense 37178 \\
        --synthetic 1000000 --months 30 --naive-queries 15 --sequential-hybrid

The naive baseline scores every document (BM25 with the same as-of statistics in plain numpy,
ranking only the matching visible ones; exhaustive inner products for dense; both fused for
hybrid, ties by id) and drops the documents at or after the cutoff. ``retrieval_peers.py``
compares BM25 with tantivy and bm25s. Rows say "equal" when the ids and their order match the
baseline, else recall@10. Synthetic dense and hybrid run exact (months of ``--quantized-min``
or more documents propose candidates from their 8-bit copies, rescored in full, and the error
bound proves the top k; ``-scan`` rows, with ``--full-scan``, read every full vector instead),
and approximate (``-ivf`` rows: faiss IVF epochs trained only on earlier documents, from the
end of the first month of ``--ivf-min`` or more documents; ``dense_approximate.py`` measures
recall against the exact search and faiss with a range filter). Query vectors come from
the index's LRU for both sides; the model call is timed on its own. Build figures are kept next
to the index and printed again when
it is reused. Each row shows the machine's load average, since the machine may be shared.

Dense vectors: WCEP uses all-MiniLM-L6-v2 on the first ``--wcep-dense`` documents (all of them
when it is at least the archive's size; CPU embedding runs at ~20-25 documents/s). The synthetic
corpus cannot be embedded on CPU, so its vectors are random unit vectors around 1,024 random
topic centres (a stand-in with cluster structure); queries are random vectors around a centre.
They go through the same faiss code path via the index's embedding cache.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import resource
import statistics
import time
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
from search_latency import synthetic_stream

from pastcast.corpus import tokenize
from pastcast.corpus.dense import RRF_K
from pastcast.corpus.embedded import EmbeddedIndex
from pastcast.corpus.sources import read_wcep
from pastcast.records import Document

DIM = 384


def rss_mb(who: int = resource.RUSAGE_SELF) -> float:
    return resource.getrusage(who).ru_maxrss / 1024


def _child_build(kind: str, arg: Any, out: str, conn: Any) -> None:
    docs: Iterable[Document]
    docs = read_wcep(arg) if kind == "wcep" else synthetic_stream(arg[0], months=arg[1])
    t0 = time.perf_counter()
    EmbeddedIndex.build(docs, out, progress=True)
    conn.send(time.perf_counter() - t0)


def build(kind: str, arg: Any, out: Path) -> None:
    """Build in a child process, so its peak memory is measured on its own.

    The figures are kept next to the index (``build-stats.json``) and printed again when a later
    run reuses it.
    """
    stats = out.with_name(out.name + ".build-stats.json")
    if not (out / "manifest.json").is_file():
        here, there = multiprocessing.Pipe()
        proc = multiprocessing.get_context("fork").Process(
            target=_child_build, args=(kind, arg, str(out), there)
        )
        proc.start()
        seconds = here.recv()
        proc.join()
        # ru_maxrss of the children: the build child is the only child this process waited for
        peak = rss_mb(resource.RUSAGE_CHILDREN)
        stats.write_text(json.dumps({"seconds": seconds, "peak_mb": peak}))
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file()) / 1e6
    known = json.loads(stats.read_text()) if stats.is_file() else None
    built = (
        f"{known['seconds']:.1f} s, peak memory {known['peak_mb']:.0f} MB (build process)"
        if known
        else "build figures not recorded"
    )
    print(f"build {out.name}: {built}; {size:.0f} MB on disk (with any embedding cache)")


class TableEmbedder:
    """Query vectors fixed in advance (the synthetic corpus has no text model)."""

    name = "synthetic-topics"

    def __init__(self, table: dict[str, np.ndarray]) -> None:
        self.table = table

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        return np.stack([self.table[t] for t in texts]).astype(np.float32)


def _unit(x: np.ndarray) -> np.ndarray:
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def write_topic_vectors(index: EmbeddedIndex, centres: np.ndarray, seed: int) -> None:
    """Stand-in embeddings in the index's cache (see the module docstring)."""
    assert index.path is not None
    cache = index.path / f"dense-{TableEmbedder.name}.npy"
    meta = index.path / f"dense-{TableEmbedder.name}.json"
    digest = index.manifest["content_sha256"]
    if meta.is_file() and json.loads(meta.read_text()).get("content_sha256") == digest:
        return
    rng = np.random.default_rng(seed)
    out = np.lib.format.open_memmap(cache, mode="w+", dtype=np.float32, shape=(len(index), DIM))
    for lo in range(0, len(index), 100_000):
        hi = min(len(index), lo + 100_000)
        topic = rng.integers(0, len(centres), size=hi - lo)
        out[lo:hi] = _unit(centres[topic] + 0.08 * rng.standard_normal((hi - lo, DIM)))
    out.flush()
    del out
    meta.write_text(json.dumps({"content_sha256": digest, "model": TableEmbedder.name}))


def pct(xs: list[float], q: int) -> float:
    return statistics.quantiles(xs, n=100)[q - 1] if len(xs) > 1 else xs[0]


def timed(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[float, Any]:
    t0 = time.perf_counter()
    out = fn(*args, **kwargs)
    return (time.perf_counter() - t0) * 1000, out


def rrf(id_rank: np.ndarray, *rankings: list[int]) -> list[int]:
    """Reciprocal-rank fusion; equal fused scores (common) ordered by id, as the index does."""
    fused: dict[int, float] = {}
    for ranking in rankings:
        for rank, o in enumerate(ranking, start=1):
            fused[o] = fused.get(o, 0.0) + 1.0 / (RRF_K + rank)
    return [o for o, _ in sorted(fused.items(), key=lambda p: (-p[1], int(id_rank[p[0]])))]


class Naive:
    """The rank-everything-then-drop-the-future baseline for each mode."""

    def __init__(self, index: EmbeddedIndex, vectors: np.ndarray | None, embed: Any) -> None:
        self.index, self.vectors, self.embed = index, vectors, embed

    def bm25(self, query: str, n: int, k: int) -> list[int]:
        ords, _ = self.index.naive_score(self.index.query_terms(query), n, k)
        return ords.tolist()

    def dense(self, query: str, n: int, k: int) -> list[int]:
        assert self.vectors is not None
        scores = self.vectors @ self.embed.embed_query(query)[0]
        order = np.lexsort((np.asarray(self.index.id_rank), -scores))
        return order[order < n][:k].tolist()

    def hybrid(self, query: str, n: int, k: int) -> list[int]:
        return rrf(self.index.id_rank, self.bm25(query, n, 100), self.dense(query, n, 100))[:k]


def measure(
    index: EmbeddedIndex,
    queries: list[str],
    cutoffs: list[datetime],
    dense: dict[str, Any],
    vectors: np.ndarray | None,
    naive_queries: int,
    sequential: bool = False,
) -> None:
    """``dense`` maps a label ("" for exact, "-ivf" for approximate) to a ``DenseIndex``;
    ``sequential`` adds hybrid rows with the two legs run one after the other."""
    from pastcast.corpus.dense import HybridIndex

    # Query vectors come from the index's cache for both sides: the model call is measured
    # separately (see main), so the rows compare the searches themselves.
    naive = Naive(index, vectors, next(iter(dense.values())) if dense else None)
    backends: dict[str, Any] = {"bm25": index}
    for label, searcher in dense.items():
        backends |= {f"dense{label}": searcher, f"hybrid{label}": HybridIndex(searcher)}
        if sequential:
            backends[f"hybrid{label}-seq"] = HybridIndex(searcher, concurrent=False)
    starts = [b[0] for b in index.partition_bounds]
    print(
        f"  {'mode':14} {'cutoff':>16} {'parts':>5} {'visible':>8} | {'p50':>7} {'p95':>7} | "
        f"{'naive p50':>9} {'p95':>7} | {'speedup':>7} | equal/recall@10"
    )
    for mode, backend in backends.items():
        for cutoff in cutoffs:
            n = index.count_before(cutoff)
            admitted = sum(1 for s in starts if s < n)
            ours, got = [], []
            for q in queries:
                ms, hits = timed(backend.search, q, as_of=cutoff, k=10)
                ours.append(ms)
                got.append([h.id for h in hits])
            base, agree, total, equal = [], 0, 0, True
            for q, ids in zip(queries[:naive_queries], got, strict=False):
                ms, ords = timed(getattr(naive, mode.split("-")[0]), q, n, 10)
                base.append(ms)
                want = [index.read_ordinal(o).id for o in ords]
                equal &= want == ids
                agree += len(set(want) & set(ids))
                total += len(want)
            check = "equal" if equal else f"recall {agree / max(total, 1):.3f}"
            if mode == "bm25" and not equal:
                check += "  (BM25 MISMATCH)"
            print(
                f"  {mode:14} {cutoff.strftime('%Y-%m-%d %H:%M'):>16} {admitted:5d} {n:8d} | "
                f"{statistics.median(ours):7.2f} {pct(ours, 95):7.2f} | "
                f"{statistics.median(base):9.1f} {pct(base, 95):7.1f} | "
                f"{statistics.median(base) / statistics.median(ours):6.1f}x | {check}"
                f" (load {os.getloadavg()[0]:.1f})"
            )


def cutoffs_for(index: EmbeddedIndex) -> list[datetime]:
    """Mid-month cutoffs admitting 1, ~1/4, ~1/2 and all partitions (plus the end)."""
    bounds = index.partition_bounds
    first = [index.read_ordinal(lo).timestamp for lo, _ in bounds]
    picks = sorted({0, len(bounds) // 4, len(bounds) // 2, len(bounds) - 1})
    out = [first[p] + timedelta(days=14, hours=7) for p in picks]
    last = index.read_ordinal(len(index) - 1).timestamp
    return [*out, last + timedelta(days=1)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wcep", type=Path)
    parser.add_argument("--wcep-dense", type=int, default=0)
    parser.add_argument(
        "--wcep-quantized-min",
        type=int,
        default=0,
        help="also time WCEP dense/hybrid with 8-bit copies for months this big (0: no)",
    )
    parser.add_argument("--synthetic", type=int, default=0)
    parser.add_argument("--months", type=int, default=30)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--naive-queries", type=int, default=30)
    parser.add_argument(
        "--ivf-min", type=int, default=20_000, help="also measure IVF for months this big (0: no)"
    )
    parser.add_argument("--nprobe", type=int, default=8, help="IVF lists searched per month")
    parser.add_argument(
        "--quantized-min",
        type=int,
        default=10_000,
        help="8-bit candidate copies (exact by bound) for months this big",
    )
    parser.add_argument(
        "--full-scan", action="store_true", help="also time exact search without 8-bit copies"
    )
    parser.add_argument(
        "--skip-exact", action="store_true", help="synthetic: time only the IVF dense modes"
    )
    parser.add_argument(
        "--sequential-hybrid", action="store_true", help="also time hybrid without the thread"
    )
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/pastcast-retrieval"))
    args = parser.parse_args()
    print(f"load average at start: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    rng = random.Random(0)
    args.workdir.mkdir(parents=True, exist_ok=True)
    if args.wcep:
        print(f"== WCEP ({args.wcep})")
        build("wcep", args.wcep, args.workdir / "wcep")
        index = EmbeddedIndex.open(args.workdir / "wcep")
        picks = [index.read_ordinal(rng.randrange(len(index))) for _ in range(args.queries)]
        queries = [" ".join(d.title.split()[:4]) for d in picks]
        print(f"  {len(index)} documents, {len(index.partition_bounds)} partitions")
        measure(index, queries, cutoffs_for(index), {}, None, args.naive_queries)
        if args.wcep_dense:
            from pastcast.corpus import open_backend
            from pastcast.corpus.dense import DenseIndex, MiniLMEmbedder

            if args.wcep_dense >= len(index):  # the whole archive
                sub_dir, sub_index = args.workdir / "wcep", index
            else:
                sub = [index.read_ordinal(i) for i in range(args.wcep_dense)]
                sub_dir = args.workdir / f"wcep-first-{args.wcep_dense}"
                if not (sub_dir / "manifest.json").is_file():
                    EmbeddedIndex.build(sub, sub_dir)
                sub_index = EmbeddedIndex.open(sub_dir)
            t0 = time.perf_counter()
            dense = open_backend(sub_dir, "dense")  # MiniLM, as `--retrieval dense` opens it
            assert isinstance(dense, DenseIndex)
            print(
                f"== WCEP first {len(sub_index)} documents, MiniLM (embedded or loaded from cache "
                f"in {time.perf_counter() - t0:.1f} s)"
            )
            vectors = np.load(sub_dir / f"dense-{MiniLMEmbedder.name}.npy")
            model_ms = [timed(dense.embed_query, q)[0] for q in queries]  # fills the cache
            print(
                f"  query embedding (one model call, once per distinct query): p50 "
                f"{statistics.median(model_ms):.1f} ms, p95 {pct(model_ms, 95):.1f} ms"
            )
            wcep_searchers: dict[str, Any] = {"": dense}
            if args.wcep_quantized_min:
                # the 8-bit candidate path on real model vectors (WCEP's months are small)
                wcep_searchers["-8bit"] = open_backend(
                    sub_dir, "dense", quantized_min=args.wcep_quantized_min
                )
                quantized = wcep_searchers["-8bit"]._quantized
                months = 0 if quantized is None else len(quantized.months)
                print(f"  8-bit copies for the {months} months of >= {args.wcep_quantized_min}")
                for q in queries:
                    wcep_searchers["-8bit"].embed_query(q)  # the model call is not what is timed
            measure(
                sub_index,
                queries,
                cutoffs_for(sub_index),
                wcep_searchers,
                vectors,
                args.naive_queries,
                args.sequential_hybrid,
            )
    if args.synthetic:
        from pastcast.corpus.dense import DenseIndex

        print(f"== synthetic: {args.synthetic} documents over {args.months} months")
        out = args.workdir / f"synthetic-{args.synthetic}-{args.months}"
        build("synthetic", (args.synthetic, args.months), out)
        t0 = time.perf_counter()
        index = EmbeddedIndex.open(out)
        print(f"  opened in {time.perf_counter() - t0:.1f} s; peak memory now {rss_mb():.0f} MB")
        vec_rng = np.random.default_rng(1)
        centres = _unit(vec_rng.standard_normal((1024, DIM)))
        t0 = time.perf_counter()
        write_topic_vectors(index, centres, seed=2)
        picks = [index.read_ordinal(rng.randrange(len(index))) for _ in range(args.queries)]
        queries = [
            " ".join(rng.sample(tokenize(d.title), min(3, len(tokenize(d.title))))) for d in picks
        ]
        queries = [q or "w1" for q in queries]
        table = {
            q: _unit(
                centres[vec_rng.integers(0, 1024)][None] + 0.08 * vec_rng.standard_normal((1, DIM))
            )[0]
            for q in queries
        }
        print(f"  vectors ready in {time.perf_counter() - t0:.1f} s")
        searchers: dict[str, Any] = {}
        if not args.skip_exact:
            t0 = time.perf_counter()
            searchers[""] = DenseIndex(
                index, TableEmbedder(table), quantized_min=args.quantized_min
            )
            print(f"  8-bit month copies built or loaded in {time.perf_counter() - t0:.1f} s")
            if args.full_scan:
                searchers["-scan"] = DenseIndex(index, TableEmbedder(table), quantized_min=None)
        if args.ivf_min:
            t0 = time.perf_counter()
            searchers["-ivf"] = DenseIndex(
                index, TableEmbedder(table), ivf_min=args.ivf_min, nprobe=args.nprobe
            )
            print(f"  IVF epochs trained in {time.perf_counter() - t0:.1f} s")
        print(f"  peak memory now {rss_mb():.0f} MB")
        vectors = np.load(out / f"dense-{TableEmbedder.name}.npy", mmap_mode="r")
        measure(
            index,
            queries,
            cutoffs_for(index),
            searchers,
            np.asarray(vectors),
            args.naive_queries,
            args.sequential_hybrid,
        )
        print(f"  peak memory of the query process: {rss_mb():.0f} MB")
    print(f"load average at the end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
