"""Approximate dense search against the exact search and against faiss with a range filter, at
millions of stand-in vectors: recall@10, p50/p95 latency per ``nprobe``, load and peak memory.

    python benchmarks/dense_approximate.py [--docs 1000000] [--months 30] [--dim 384] \\
        [--nprobe 8 16 32] [--queries 200] [--stand-in stories|isotropic] [--peer flat|sq8|epoch] \\
        [--dir DIR] [--cold] [--json out.json]

No text model embeds a million documents on these CPUs, so the vectors are stand-ins. ``--stand-in
stories`` (the default, the easy case) models news: each month has its own stories of about 20
documents, each story near one of 1,024 topics (cosine about 0.8) and each document near its
story (about 0.9); a query sits near a story as its documents do. ``--stand-in isotropic`` (the
harder case) is ``benchmarks/retrieval.py``'s: unit vectors around 1,024 topic centres with
noise in every dimension (cosine about 0.5 to the centre), queries likewise. They are written to
a dense cache beside a stand-in of the index (month partitions of equal size, ids in ordinal
order: what ``DenseIndex`` reads of an ``EmbeddedIndex``), so every pastcast search runs
``DenseIndex``'s own code:

- exact (8-bit month copies propose candidates, rescored in full under the proven bound; equal
  to an exhaustive scan): the truth recall@10 is measured against;
- approximate (``ivf_min``: faiss IVF epochs, each trained only on documents before every
  cutoff it serves, searched through the range of rows before the cutoff, the candidates
  re-scored exactly);
- the peer, measured on the same vectors and queries in the same run: a plain faiss
  ``IndexIVFFlat`` (``--peer flat``, float32 lists) or ``IndexIVFScalarQuantizer`` with 8-bit
  codes (``--peer sq8``, pastcast's kind, a quarter of the memory; not re-scored) with as many
  lists as pastcast's last epoch, trained on a sample of every vector (the later ones included,
  as nothing stops it), searched with ``IDSelectorRange(0, n)`` over the time-ordered ids at the
  same ``nprobe``. It returns nothing after the cutoff either, but its lists depend on later
  documents, so it is not as of the cutoff; it is the speed to match. ``--peer epoch`` takes
  pastcast's last epoch itself, searched the same way by faiss alone (the same lists, without
  pastcast's epoch choice and re-scoring; nothing to build, for sizes where building a second
  IVF takes too long). ``--dir`` keeps the folder, so a second isotropic run reuses the vectors,
  the exact search's copies and the trained lists. ``--cold`` drops the vector file from the
  page cache before each of pastcast's measurements (what other processes' use does to a large
  file on a shared machine): every row pastcast re-scores is then read from disk.

Cutoffs: after the last document, and inside the last, a middle and an early month. Latency is
the search alone (query vectors come from the index's LRU), one thread, as pastcast searches.
Every pastcast result is checked to lie before its cutoff (``leaked`` counts those that do not).
The load average and the peak resident memory of the process (which counts the mapped vector
file's pages it touched) are printed: the machine may be shared.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import os
import random
import resource
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from pastcast.corpus.dense._dense import _RERANKED
from pastcast.npyfiles import drop_pages


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
        out.flush()
        drop_pages(out)  # written pages need not stay resident: one month at a time
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


def peak_gb() -> float:
    """The process's peak resident memory (Linux reports kilobytes)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def faiss_peer(vectors: np.ndarray, lists: int, kind: str) -> Any:
    """A plain faiss IVF of every vector with ``lists`` lists, float32 (``flat``) or 8-bit
    (``sq8``) codes, trained on a sample of all of them (at most 64 a list; the later ones
    included), ids in time order."""
    import faiss

    d, ip = vectors.shape[1], faiss.METRIC_INNER_PRODUCT
    if kind == "flat":
        peer = faiss.IndexIVFFlat(faiss.IndexFlatIP(d), d, lists, ip)
    else:
        sq8 = faiss.ScalarQuantizer.QT_8bit
        peer = faiss.IndexIVFScalarQuantizer(faiss.IndexFlatIP(d), d, lists, sq8, ip)
    rng = np.random.default_rng(0)
    sample = np.sort(rng.choice(len(vectors), min(len(vectors), 64 * lists), replace=False))
    peer.cp.max_points_per_centroid = 64
    peer.train(np.ascontiguousarray(vectors[sample]))
    for lo in range(0, len(vectors), 100_000):
        peer.add(np.ascontiguousarray(vectors[lo : lo + 100_000]))
        drop_pages(vectors)  # the mapped file's pages need not stay resident
    return peer


def peer_search(peer: Any, q: np.ndarray, n: int, k: int, nprobe: int) -> list[int]:
    """The peer's top k before row ``n``: ``IDSelectorRange`` over the time-ordered ids."""
    import faiss

    rows = faiss.IDSelectorRange(0, n, True)
    _, ids = peer.search(q, k, params=faiss.SearchParametersIVF(sel=rows, nprobe=nprobe))
    return [int(i) for i in ids[0] if i >= 0]


def uncache(dense: Any, path: Path) -> None:
    """The vector file out of the page cache: unmapped from this process, then dropped."""
    drop_pages(dense._vectors)
    drop_pages(dense._rows)
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def candidates(approx: Any, q: np.ndarray, n: int, k: int) -> list[int]:
    """What pastcast's search asks of faiss (its epoch, the range of rows before ``n``), the
    rows read in full and their exact ranking left out."""
    found = approx._approximate.search(q, n, k + _RERANKED, approx._nprobe)
    return [] if found is None else [int(o) for o in found]


def measure(
    search: Any, work: list[tuple[str, int]], truth: dict[tuple[str, int], list[int]]
) -> dict[str, Any]:
    """p50/p95 of ``search(query, n)``, its recall@10 against ``truth``, rows at or after n."""
    import faiss

    faiss.omp_set_num_threads(1)  # one query at a time, as pastcast searches
    ms, recall, leaked = [], [], 0
    for q, n in work:
        t = time.perf_counter()
        got = search(q, n)
        ms.append(1000 * (time.perf_counter() - t))
        want = truth[(q, n)]
        leaked += sum(1 for o in got if o >= n)
        recall.append(len(set(got) & set(want)) / max(1, len(want)))
    return {
        "p50_ms": statistics.median(ms),
        "p95_ms": pct(ms, 95),
        "recall_at_10": statistics.fmean(recall),
        "leaked": leaked,
    }


def pct(xs: list[float], q: int) -> float:
    return statistics.quantiles(xs, n=100)[q - 1] if len(xs) > 1 else xs[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=int, default=1_000_000)
    parser.add_argument("--months", type=int, default=30)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--nprobe", type=int, nargs="+", default=[8, 16, 32])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--stand-in", choices=["stories", "isotropic"], default="stories")
    parser.add_argument(
        "--peer",
        choices=["flat", "sq8", "epoch"],
        default="flat",
        help="the peer's list codes, or pastcast's last epoch searched by faiss alone",
    )
    parser.add_argument(
        "--dir", type=Path, help="a folder kept between runs: isotropic vectors and lists reused"
    )
    parser.add_argument("--cold", action="store_true", help="the vectors uncached for pastcast")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()

    from pastcast.corpus.dense import DenseIndex

    print(f"load average at start: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    rng = np.random.default_rng(1)
    centres = unit(rng.standard_normal((1024, args.dim)))
    queries = [f"q{i}" for i in range(args.queries)]
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="pastcast-ann-") as tmp:
        index = StandInIndex(args.dir or Path(tmp), args.docs, args.months)
        t0 = time.perf_counter()
        if (
            args.stand_in == "isotropic"
            and (index.path / f"dense-{TableEmbedder.name}.npy").exists()
        ):
            anchors = centres  # a kept folder's vectors: queries sit near the topic centres
        else:
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
        del exact  # its 8-bit copies are not needed from here
        t0 = time.perf_counter()
        approx = DenseIndex(index, TableEmbedder(table), ivf_min=1000, nprobe=args.nprobe[0])  # type: ignore[arg-type]
        epochs = approx._approximate.indexes if approx._approximate else []
        lists = int(epochs[-1].nlist) if epochs else 1  # the epoch serving the late cutoffs
        print(
            f"pastcast approximate: {len(epochs)} epochs, {sum(int(e.nlist) for e in epochs):,} "
            f"lists ({lists:,} in the last), trained on earlier documents and filled in "
            f"{time.perf_counter() - t0:.1f} s (peak RSS {peak_gb():.2f} GB)"
        )
        t0 = time.perf_counter()
        stored = np.load(index.path / f"dense-{TableEmbedder.name}.npy", mmap_mode="r")
        # ``epoch``: the very lists pastcast searches, without its epoch choice and re-scoring
        peer = epochs[-1] if args.peer == "epoch" else faiss_peer(stored, lists, args.peer)
        print(
            f"faiss peer: {type(peer).__name__} of {lists:,} lists trained and filled in "
            f"{time.perf_counter() - t0:.1f} s (peak RSS {peak_gb():.2f} GB)"
        )
        vectors = {q: table[q][None] for q in queries}
        for nprobe in args.nprobe:
            approx._nprobe = nprobe  # the option the search reads
            if args.cold:
                uncache(approx, index.path / f"dense-{TableEmbedder.name}.npy")
            ours = measure(lambda q, n: [o for o, _ in approx.ranked(q, n, args.k)], work, truth)
            theirs = measure(
                lambda q, n, p=nprobe: peer_search(peer, vectors[q], n, args.k, p), work, truth
            )
            # pastcast's faiss search alone (its epoch's candidates, no rows read, no ranking)
            scan = measure(lambda q, n: candidates(approx, vectors[q], n, args.k), work, truth)
            row = {"mode": f"nprobe={nprobe}", "load": os.getloadavg()[0], "peak_gb": peak_gb()}
            row |= {f"pastcast_{k}": v for k, v in ours.items()}
            row |= {f"faiss_{k}": v for k, v in theirs.items()}
            row["p50_ratio"] = ours["p50_ms"] / theirs["p50_ms"]
            row["pastcast_candidates_p50_ms"] = scan["p50_ms"]
            rows.append(row)
            print(
                f"  nprobe={nprobe:<3} pastcast p50 {ours['p50_ms']:6.2f} ms, p95 "
                f"{ours['p95_ms']:6.2f} ms, recall@10 {ours['recall_at_10']:.3f}, leaked "
                f"{ours['leaked']} | faiss+range p50 {theirs['p50_ms']:6.2f} ms, p95 "
                f"{theirs['p95_ms']:6.2f} ms, recall@10 {theirs['recall_at_10']:.3f} | p50 ratio "
                f"{row['p50_ratio']:.2f} (load {row['load']:.2f}, peak RSS {row['peak_gb']:.2f} GB)"
            )
            print(f"             of pastcast's p50: its faiss search {scan['p50_ms']:6.2f} ms")
            assert ours["leaked"] == 0  # never at or after the cutoff
        approx.close()
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))
    print(f"load average at the end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
