"""The embedded index at scale: a realistic synthetic corpus streamed to JSONL, then the build
(time, peak memory of the build's process tree, disk), the open, BM25 latency at early, middle
and late cutoffs, search throughput with concurrent searchers, and dense/hybrid latency over
stand-in vectors.

The corpus: a Zipfian vocabulary of synthetic words (the most frequent ranks are stopwords, as in
real text), topics that come and go over the months (each lives a few months and lends its words
to the documents of its time), a mix of short comments (replies in threads, by a Zipfian
population of authors) and long articles, over six years with the volume growing over time.

    python benchmarks/scale.py --docs 1000000 [--workers 2] [--out results.json] [--dense]
    python benchmarks/scale.py --docs 1000000 --months 4 --build-memory [--compare-src DIR]
    python benchmarks/scale.py --search-index DIR/scale-*/index [--queries 100] [--uncached]

``--months`` puts the corpus in fewer, larger months. ``--build-memory`` measures only builds of
the same source, one after the other: pastcast's (and, with ``--compare-src``, the same command
run on another checkout's ``src``) and tantivy's (``retrieval_peers.Tantivy``), each as the peak
RSS summed over its process tree and its CPU seconds, with their ratios and the load.
``--search-index`` runs only the searches on an index kept by ``--keep`` (``--uncached``: its
files dropped from the page cache first), with the bytes read and major faults of the process.

Everything is written under a fresh folder in ``--tmp`` and deleted afterwards.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

START = datetime(2019, 1, 1, tzinfo=UTC)
MONTHS = 72
VOCAB = 200_000
TOPICS = 600
TOPIC_WORDS = 25
SOURCES = ["reuters", "apnews", "bbc", "reddit/r/worldnews", "reddit/r/politics", "forum"]
_SYLLABLES = [c + v for c in "bcdfghjklmnprstvwz" for v in "aeiou"] + ["an", "er", "on", "is"]


def _words(size: int, rng: np.random.Generator) -> list[str]:
    """``size`` distinct pronounceable pseudo-words; the first ranks are stopwords."""
    from pastcast.corpus import STOPWORDS

    words = sorted(STOPWORDS)
    seen = set(words)
    while len(words) < size:
        syl = rng.integers(0, len(_SYLLABLES), size=(size, 4))
        cut = rng.integers(2, 5, size=size)
        for row, n in zip(syl.tolist(), cut.tolist(), strict=True):
            w = "".join(_SYLLABLES[s] for s in row[:n])
            if w not in seen:
                seen.add(w)
                words.append(w)
                if len(words) == size:
                    break
    return words


def _month_start(m: int) -> datetime:
    return datetime(START.year + m // 12, m % 12 + 1, 1, tzinfo=UTC)


# the cutoffs measured: one early month admitted, half the months, and (nearly) every document
CUTOFFS = {
    "early": _month_start(6) + timedelta(days=10),
    "middle": _month_start(MONTHS // 2) + timedelta(days=10),
    "late": _month_start(MONTHS) - timedelta(seconds=1),
}


def month_counts(n: int, months: int = MONTHS) -> list[int]:
    """Documents per month: the volume grows linearly, the latest month three times the first."""
    weights = np.linspace(1.0, 3.0, months)
    bounds = np.round(np.cumsum(weights) / weights.sum() * n).astype(np.int64)
    return np.diff(np.concatenate([[0], bounds])).tolist()


def corpus_lines(n: int, seed: int = 0, months: int = MONTHS) -> Iterator[bytes]:
    """The JSONL lines of ``n`` documents, month by month (shuffled within a month)."""
    rng = np.random.default_rng(seed)
    words = np.array(_words(VOCAB, rng), dtype=object)
    weights = 1.0 / np.arange(1, VOCAB + 1) ** 1.05
    cdf = np.cumsum(weights / weights.sum())
    # topics: words from the middle of the frequency ranks, alive for 1 to 8 months
    topic_words = rng.integers(300, 40_000, size=(TOPICS, TOPIC_WORDS))
    topic_start = rng.integers(-6, MONTHS, size=TOPICS)
    topic_end = topic_start + rng.integers(1, 9, size=TOPICS)
    author_cdf = np.cumsum(1.0 / np.arange(1, 200_001) ** 0.9)
    author_cdf /= author_cdf[-1]
    emitted = 0
    recent_articles: list[str] = []
    for m, count in enumerate(month_counts(n, months)):
        start = _month_start(m)
        seconds = int((_month_start(m + 1) - start).total_seconds())
        live = np.flatnonzero((topic_start <= m) & (topic_end > m))
        if not len(live):
            live = np.arange(TOPICS)
        secs = rng.integers(0, seconds, size=count).tolist()
        article = rng.random(count) < 0.2
        body = np.where(
            article,
            rng.lognormal(np.log(120), 0.5, size=count),
            rng.lognormal(np.log(14), 0.7, size=count),
        )
        lengths = np.clip(body, 3, 2000).astype(np.int64)
        title_len = np.where(article, rng.integers(5, 12, size=count), 0)
        total = int(lengths.sum() + title_len.sum())
        tokens = np.searchsorted(cdf, rng.random(total))
        topic_of = live[rng.integers(0, len(live), size=count)]
        ends = np.cumsum(lengths + title_len)
        # a third of each document's tokens come from its topic
        doc_of = np.repeat(np.arange(count), lengths + title_len)
        from_topic = rng.random(total) < 0.33
        tokens[from_topic] = topic_words[
            topic_of[doc_of[from_topic]], rng.integers(0, TOPIC_WORDS, int(from_topic.sum()))
        ]
        text_tokens = words[tokens]
        authors = np.searchsorted(author_cdf, rng.random(count)).tolist()
        sources = rng.integers(0, len(SOURCES), size=count).tolist()
        picks = rng.random(count).tolist()
        ends_l, title_l, art_l = ends.tolist(), title_len.tolist(), article.tolist()
        for j in range(count):
            hi = ends_l[j]
            lo = hi - int(lengths[j]) - title_l[j]
            mid = lo + title_l[j]
            ordinal = emitted + j
            doc_id = f"{(ordinal * 0x9E3779B1) % (1 << 40):010x}"
            ts = (start + timedelta(seconds=secs[j])).strftime("%Y-%m-%dT%H:%M:%SZ")
            record: dict[str, Any] = {
                "id": doc_id,
                "timestamp": ts,
                "title": " ".join(text_tokens[lo:mid]),
                "text": " ".join(text_tokens[mid:hi]),
                "source": SOURCES[sources[j]],
                "author": f"u{authors[j]}",
            }
            if art_l[j]:
                recent_articles.append(doc_id)
            elif recent_articles and picks[j] < 0.8:  # a reply in a recent article's thread
                thread = recent_articles[-1 - int(picks[j] * 1000) % len(recent_articles)]
                record["thread_id"] = thread
                record["parent_id"] = thread
            yield (json.dumps(record, ensure_ascii=False) + "\n").encode()
        del recent_articles[:-2000]
        emitted += count


def write_corpus(n: int, path: Path, seed: int = 0, months: int = MONTHS) -> float:
    t0 = time.perf_counter()
    with path.open("wb", buffering=1 << 22) as fh:
        for line in corpus_lines(n, seed, months):
            fh.write(line)
    return time.perf_counter() - t0


def queries(count: int, seed: int = 1) -> list[str]:
    """Queries of 1 to 4 words: topic words (what a forecaster searches for) and common words."""
    rng = np.random.default_rng(seed)
    words = _words(VOCAB, np.random.default_rng(0))  # the corpus's own words
    out = []
    for _ in range(count):
        k = int(rng.integers(1, 5))
        ranks = rng.integers(300, 40_000, size=k)
        if rng.random() < 0.3:
            ranks[0] = rng.integers(180, 300)  # a frequent word: long postings lists
        out.append(" ".join(words[r] for r in ranks))
    return out


# -- measuring ---------------------------------------------------------------------------------


def _tree_rss(pid: int) -> int:
    import psutil

    try:
        proc = psutil.Process(pid)
        procs = [proc, *proc.children(recursive=True)]
    except psutil.NoSuchProcess:
        return 0
    total = 0
    for p in procs:
        with contextlib.suppress(psutil.NoSuchProcess):
            total += p.memory_info().rss
    return total


def run_tree(cmd: list[str], env: dict[str, str]) -> tuple[float, int, str]:
    """Run ``cmd``; its wall time, the peak RSS summed over its process tree (sampled every
    0.2 s) and its output."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    peak = 0
    out: list[bytes] = []
    reader = threading.Thread(target=lambda: out.append(proc.stdout.read()), daemon=True)  # type: ignore[union-attr]
    reader.start()
    while proc.poll() is None:
        peak = max(peak, _tree_rss(proc.pid))
        time.sleep(0.2)
    reader.join()
    text = b"".join(out).decode(errors="replace")
    if proc.returncode:
        raise RuntimeError(f"{cmd[:4]} failed ({proc.returncode}):\n{text[-3000:]}")
    return time.perf_counter() - t0, peak, text


TANTIVY_BUILD = """
import sys
from pathlib import Path
sys.path.insert(0, sys.argv[3])
from bm25_vs_tantivy import documents
from retrieval_peers import Tantivy
Tantivy(documents(Path(sys.argv[1])), Path(sys.argv[2]))
"""


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measure_build_memory(source: Path, work: Path, args: argparse.Namespace) -> dict[str, Any]:
    """The builds of ``source``, one after the other: pastcast's (this checkout's and
    ``--compare-src``'s) and tantivy's; peak RSS of each process tree, CPU seconds, ratios."""
    here = Path(__file__).resolve()
    srcs = {"pastcast": here.parents[1] / "src"}
    if args.compare_src is not None:
        srcs["compared"] = args.compare_src.resolve()
    cli = "import sys; from pastcast.cli import main; sys.exit(main())"
    out: dict[str, Any] = {}
    runs = [
        (
            name,
            [
                sys.executable,
                "-c",
                cli,
                "corpus",
                "build",
                f"jsonl:{source}",
                "--out",
                str(work / name),
                "--workers",
                str(args.workers),
                "--json",
            ],
            src,
        )
        for name, src in srcs.items()
    ]
    runs.append(
        (
            "tantivy",
            [
                sys.executable,
                "-c",
                TANTIVY_BUILD,
                str(source),
                str(work / "tantivy"),
                str(here.parent),
            ],
            srcs["pastcast"],
        )
    )
    for name, cmd, src in runs:
        env = {**os.environ, "PYTHONPATH": str(src)}
        load, cpu = _load(), children_cpu()
        wall, peak, _ = run_tree(cmd, env)
        row = {
            "wall_s": round(wall, 1),
            "cpu_s": round(children_cpu() - cpu, 1),
            "peak_rss_mb": round(peak / 2**20),
            "load_before": load,
            "load_after": _load(),
        }
        report = work / name / "build_report.json"
        if report.is_file():
            saved = json.loads(report.read_text())
            row["partitions"] = saved["partitions"]
            row["phase_cpu_s"] = saved["phase_cpu_seconds"]
        if not args.keep:  # kept: bm25_vs_tantivy.py times searches on both indexes
            shutil.rmtree(work / name, ignore_errors=True)
        out[name] = row
        print(json.dumps({name: row}), flush=True)
    peer = out["tantivy"]
    for name in srcs:
        out[f"{name}_vs_tantivy"] = {
            "peak_rss": round(out[name]["peak_rss_mb"] / peer["peak_rss_mb"], 2),
            "cpu": round(out[name]["cpu_s"] / peer["cpu_s"], 2),
        }
    return out


def _disk(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def _pct(values: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q)) * 1000.0


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def uncache(*folders: Path) -> None:
    """Every file under ``folders`` out of the page cache (written back first)."""
    for path in (p for folder in folders for p in folder.rglob("*") if p.is_file()):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fdatasync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def measure_search(index_dir: Path, n_queries: int) -> dict[str, Any]:
    from pastcast.corpus.embedded import EmbeddedIndex

    t0, c0 = time.perf_counter(), time.process_time()
    index = EmbeddedIndex.open(index_dir)
    open_s, open_cpu_s = time.perf_counter() - t0, time.process_time() - c0
    qs = queries(n_queries)
    cutoffs = CUTOFFS
    t0, c0 = time.perf_counter(), time.process_time()
    index.search(qs[0], as_of=cutoffs["late"], k=10)
    first_s, first_cpu_s = time.perf_counter() - t0, time.process_time() - c0
    out: dict[str, Any] = {
        "open_s": open_s,
        "open_cpu_s": open_cpu_s,
        "first_search_s": first_s,
        "first_search_cpu_s": first_cpu_s,
        "bm25": {},
    }
    for name, cutoff in cutoffs.items():
        times = []
        for q in qs:
            t = time.perf_counter()
            index.search(q, as_of=cutoff, k=10)
            times.append(time.perf_counter() - t)
        out["bm25"][name] = {
            "visible": index.count_before(cutoff),
            "p50_ms": _pct(times, 50),
            "p95_ms": _pct(times, 95),
        }
    late = cutoffs["late"]

    def one(q: str) -> None:
        index.search(q, as_of=late, k=10)

    many = qs * max(1, 2000 // len(qs))
    with ThreadPoolExecutor(64) as pool:
        t = time.perf_counter()
        list(pool.map(one, many))
        out["threads64_qps"] = len(many) / (time.perf_counter() - t)
    return out


CLUSTERS = 600  # one per topic of the generator: real text embeddings cluster by topic
SPREAD = 0.6  # noise per dimension against unit-variance centres: cosine to the centre ~0.85


def _centres(dim: int) -> np.ndarray:  # type: ignore[type-arg]
    return np.random.default_rng(11).standard_normal((CLUSTERS, dim)).astype(np.float32)


def _clustered(
    rng: np.random.Generator,
    n: int,
    centres: np.ndarray,  # type: ignore[type-arg]
    spread: float,
) -> np.ndarray:  # type: ignore[type-arg]
    rows = centres[rng.integers(0, len(centres), size=n)]
    rows = rows + spread * rng.standard_normal(rows.shape, dtype=np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


class StandInEmbedder:
    """Stand-in vectors, clustered as text embeddings are: a hashed text picks one of
    ``CLUSTERS`` fixed centres and gets that centre plus noise, so the same text always gets the
    same vector and queries fall where documents are (uniform random vectors, with no cluster
    at all, are the worst case of any IVF index and unlike any embedder). No embedder can encode
    millions of texts on this machine in a benchmark's time: what is measured is the search."""

    name = "stand-in-64"
    dim = 64

    def __init__(self, spread: float = SPREAD) -> None:
        self._centres = _centres(self.dim)
        self._spread = spread

    def encode(self, texts: Any) -> np.ndarray:  # type: ignore[type-arg]
        import hashlib

        rows = []
        for text in texts:
            seed = int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big")
            rng = np.random.default_rng(seed)
            rows.append(_clustered(rng, 1, self._centres, self._spread)[0])
        return np.asarray(rows, dtype=np.float32).reshape(len(rows), self.dim)


def _timed(searcher: Any, qs: list[str], cutoff: datetime) -> tuple[list[float], list[list[str]]]:
    times, ids = [], []
    for q in qs:
        t = time.perf_counter()
        hits = searcher.search(q, as_of=cutoff, k=10)
        times.append(time.perf_counter() - t)
        ids.append([h.id for h in hits])
    return times, ids


def measure_dense(
    index: Any, qs: list[str], cutoff: datetime, spread: float = SPREAD
) -> dict[str, Any]:
    """Exact, approximate (IVF epochs at two nprobe settings, recall@10 against the exact
    scan) and hybrid p50/p95 over clustered stand-in vectors."""
    from pastcast.corpus.dense import DenseIndex, HybridIndex

    emb = StandInEmbedder(spread)
    n = len(index)
    path = index.path / f"dense-{emb.name}.npy"
    vectors = np.lib.format.open_memmap(path, mode="w+", dtype=np.float32, shape=(n, emb.dim))
    rng = np.random.default_rng(3)
    centres = _centres(emb.dim)
    for lo in range(0, n, 1 << 18):
        hi = min(n, lo + (1 << 18))
        vectors[lo:hi] = _clustered(rng, hi - lo, centres, spread)
    vectors.flush()
    del vectors
    meta = {"content_sha256": index.manifest["content_sha256"], "model": emb.name}
    (index.path / f"dense-{emb.name}.json").write_text(json.dumps(meta))
    out: dict[str, Any] = {
        "dim": emb.dim,
        "vectors": f"stand-ins: {CLUSTERS} fixed centres plus noise {spread} (no embedder)",
    }
    t = time.perf_counter()
    exact = DenseIndex(index, emb)
    out["exact_open_s"] = time.perf_counter() - t
    times, truth = _timed(exact, qs, cutoff)
    out["exact_p50_ms"], out["exact_p95_ms"] = _pct(times, 50), _pct(times, 95)
    for nprobe in (8, 32):
        t = time.perf_counter()
        approx = DenseIndex(index, emb, ivf_min=10_000, nprobe=nprobe)
        out[f"ivf{nprobe}_open_s"] = time.perf_counter() - t  # the first trains and stores
        times, got = _timed(approx, qs, cutoff)
        recall = [len(set(a) & set(b)) / max(1, len(b)) for a, b in zip(got, truth, strict=True)]
        out[f"ivf{nprobe}_p50_ms"], out[f"ivf{nprobe}_p95_ms"] = _pct(times, 50), _pct(times, 95)
        out[f"ivf{nprobe}_recall_at_10"] = float(np.mean(recall))
        times, _ = _timed(HybridIndex(approx), qs, cutoff)
        out[f"hybrid_ivf{nprobe}_p50_ms"] = _pct(times, 50)
        out[f"hybrid_ivf{nprobe}_p95_ms"] = _pct(times, 95)
        approx.close()
    times, _ = _timed(HybridIndex(exact), qs, cutoff)
    out["hybrid_exact_p50_ms"], out["hybrid_exact_p95_ms"] = _pct(times, 50), _pct(times, 95)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, default=1_000_000)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--tmp", type=Path, default=Path("/work/tmp"))
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--dense", action="store_true")
    ap.add_argument("--months", type=int, default=MONTHS, help="months the corpus spans")
    ap.add_argument("--build-memory", action="store_true", help="only builds, beside tantivy's")
    ap.add_argument("--compare-src", type=Path, help="--build-memory: another checkout's src")
    ap.add_argument("--keep", action="store_true", help="keep the data (default: deleted)")
    ap.add_argument(
        "--spread", type=float, default=SPREAD, help="stand-in vectors' noise (larger: harder)"
    )
    ap.add_argument(
        "--dense-index",
        type=Path,
        default=None,
        help="only the dense part, on this index (kept by --keep); its stand-in vectors rewritten",
    )
    ap.add_argument("--search-index", type=Path, help="only the searches, on this kept index")
    ap.add_argument(
        "--uncached", action="store_true", help="--search-index: dropped from the page cache first"
    )
    args = ap.parse_args()
    if args.search_index is not None:
        if args.uncached:
            uncache(args.search_index)
        r0 = resource.getrusage(resource.RUSAGE_SELF)
        found = {"load_before": _load(), **measure_search(args.search_index, args.queries)}
        r1 = resource.getrusage(resource.RUSAGE_SELF)
        found |= {"read_mb": (r1.ru_inblock - r0.ru_inblock) * 512 / 1e6, "load_after": _load()}
        print(json.dumps(found | {"major_faults": r1.ru_majflt - r0.ru_majflt}, indent=2))
        return 0
    if args.dense_index is not None:
        from pastcast.corpus.embedded import EmbeddedIndex

        late = _month_start(MONTHS) - timedelta(seconds=1)
        index = EmbeddedIndex.open(args.dense_index)
        for stale in args.dense_index.glob("*stand-in-64*"):  # vectors and month indexes
            shutil.rmtree(stale) if stale.is_dir() else stale.unlink()
        only = {"docs": len(index), "load_before": _load(), "spread": args.spread}
        only["dense"] = measure_dense(index, queries(args.queries)[:100], late, args.spread)
        only["load_after_dense"] = _load()
        text = json.dumps(only, indent=2)
        print(text)
        if args.out is not None:
            args.out.write_text(text + "\n")
        return 0
    args.tmp.mkdir(parents=True, exist_ok=True)
    # source, spool and index together peak near 2.1 KB a document: leave the disk a margin
    needed, free = args.docs * 2600, shutil.disk_usage(args.tmp).free
    if free < needed:
        print(f"not enough disk: {free / 2**30:.0f} GiB free, {needed / 2**30:.0f} GiB needed")
        return 1
    work = Path(tempfile.mkdtemp(prefix="scale-", dir=args.tmp))
    result: dict[str, Any] = {
        "docs": args.docs,
        "workers": args.workers,
        "nproc": os.cpu_count(),
        "load_before": _load(),
        "started": datetime.now(UTC).isoformat(timespec="seconds"),
    }

    def save() -> None:
        text = json.dumps(result, indent=2)
        print(text, flush=True)
        if args.out is not None:
            args.out.write_text(text + "\n")

    try:
        source = work / "docs.jsonl"
        result["generate_s"] = write_corpus(args.docs, source, months=args.months)
        result["source_bytes"] = source.stat().st_size
        result.update(months=args.months, largest_month=max(month_counts(args.docs, args.months)))
        save()
        if args.build_memory:
            result["builds"] = measure_build_memory(source, work, args)
            result["uptime"] = subprocess.run(["uptime"], capture_output=True, text=True).stdout
            save()
            return 0
        env = dict(os.environ)
        env.setdefault("PYTHONPATH", str(Path(__file__).resolve().parents[1] / "src"))
        cli = "import sys; from pastcast.cli import main; sys.exit(main())"
        cmd = [sys.executable, "-c", cli, "corpus", "build", f"jsonl:{source}"]
        cmd += ["--out", str(work / "index"), "--workers", str(args.workers), "--json"]
        result["load_build_start"] = _load()
        build_s, peak, text = run_tree(cmd, env)
        result["load_build_end"] = _load()
        source.unlink()  # the disk holds one copy at a time
        result.update(build_s=build_s, build_peak_rss_mb=peak / 2**20)
        result["index_bytes"] = _disk(work / "index")
        report = json.loads((work / "index" / "build_report.json").read_text())
        result["build_report"] = report
        save()
        result.update(measure_search(work / "index", args.queries))
        result["load_after"] = _load()
        save()  # the BM25 figures are kept even if the dense part runs out of time or memory
        if args.dense:
            from pastcast.corpus.embedded import EmbeddedIndex

            index = EmbeddedIndex.open(work / "index")
            late = _month_start(MONTHS) - timedelta(seconds=1)
            qs = queries(args.queries)[:100]
            result["dense"] = measure_dense(index, qs, late, args.spread)
            result["load_after_dense"] = _load()
            save()
        del text
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
