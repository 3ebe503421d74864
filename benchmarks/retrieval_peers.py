"""pastcast's exact as-of BM25 against the libraries users would pick instead, in one run.

    pip install -e '.[bench]'
    python benchmarks/retrieval_peers.py --wcep ../shared/data/wcep --synthetic 300000

Systems, all interleaved query by query (the order shuffled each time) on the same corpus:

* ``pastcast``: ``EmbeddedIndex.search``: hits with titles, timestamps and snippets;
* ``tantivy``: the cutoff as a fast-field range filter inside the query, top 10 stored ids;
* ``bm25s-mask``: bm25s with a weight mask of the visible documents;
* ``bm25s-post``: bm25s over the whole corpus, future documents dropped afterwards (the depth
  doubled until 10 visible ones are found);
* ``numpy``: a plain whole-corpus index (one CSR of postings, whole-corpus statistics) that
  scores and ranks only the matching visible documents: the fair "naive" baseline;
* ``exact``: the reference: the same CSR with statistics counted over the visible documents
  only, i.e. BM25 of an index built from the past alone (cross-checked below against an index
  rebuilt from those documents).

Every system gets pastcast's tokens (tantivy through an equivalent analyzer: ``\\w+``,
lower-case, the same stopwords), k1 = 1.2, b = 0.75 and Lucene's idf, so disagreement comes from
the statistics (whole corpus versus as of the cutoff) and from tantivy's one-byte length norms.
"agree" is the mean recall@10 against the exact reference; pastcast also prints how many of its
result lists equal the reference's ids in order. Build times start from the same in-memory
documents; each peer's includes its tokenization. The 1-minute load average is printed with
every row, since the machine may be shared.

The synthetic corpus: ``--synthetic`` documents over ``--months`` 30-day months, a Zipfian
background vocabulary (200k words, exponent 1.07, stopwords at the top ranks) plus topics that
come and go: each topic has 12 words of middling frequency and lives 1-3 months; a document
draws a quarter of its words from one topic active in its month.
"""

from __future__ import annotations

import argparse
import math
import os
import random
import shutil
import statistics
import tempfile
import time
from array import array
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from pastcast.corpus import STOPWORDS, tokenize, tokenize_utf8
from pastcast.corpus.embedded import K1, B, EmbeddedIndex, to_micros
from pastcast.corpus.sources import read_wcep
from pastcast.records import Document

K = 10
START = datetime(2023, 1, 1, tzinfo=UTC)
MONTH = timedelta(days=30)


def load() -> str:
    return f"load {os.getloadavg()[0]:.2f}"


# -- corpora -----------------------------------------------------------------------------------


def topic_stream(n: int, months: int, seed: int = 0) -> Iterator[Document]:
    """The synthetic corpus of the module docstring, in time order."""
    rng = np.random.default_rng(seed)
    size = 200_000
    words = sorted(STOPWORDS) + [f"w{i}" for i in range(size - len(STOPWORDS))]
    weights = 1.0 / np.arange(1, size + 1) ** 1.07
    cdf = np.cumsum(weights / weights.sum())
    n_topics = 40 * months
    topic_words = rng.integers(500, 60_000, size=(n_topics, 12))
    born = rng.integers(-2, months, size=n_topics)
    dies = born + rng.integers(1, 4, size=n_topics)
    emitted = 0
    for m in range(months):
        count = n * (m + 1) // months - emitted
        active = np.flatnonzero((born <= m) & (m < dies))
        secs = np.sort(rng.integers(0, int(MONTH.total_seconds()), size=count)).tolist()
        lengths = rng.integers(8 + 30, 8 + 120, size=count)
        total = int(lengths.sum())
        toks = np.searchsorted(cdf, rng.random(total))
        topic = np.repeat(rng.choice(active, size=count), lengths)
        from_topic = rng.random(total) < 0.25
        toks[from_topic] = topic_words[topic[from_topic], rng.integers(0, 12, from_topic.sum())]
        ends = np.cumsum(lengths).tolist()
        toks_list = toks.tolist()
        for j in range(count):
            lo = ends[j] - int(lengths[j])
            yield Document(
                id=f"s{emitted + j:07d}",
                timestamp=START + m * MONTH + timedelta(seconds=secs[j]),
                title=" ".join(map(words.__getitem__, toks_list[lo : lo + 8])),
                text=" ".join(map(words.__getitem__, toks_list[lo + 8 : ends[j]])),
                source="synthetic",
            )
        emitted += count


def queries_for(docs: list[Document], count: int, seed: int) -> list[list[str]]:
    """2-4 distinct title terms of random documents (a query has at least one term)."""
    rng = random.Random(seed)
    out: list[list[str]] = []
    while len(out) < count:
        terms = list(dict.fromkeys(tokenize(rng.choice(docs).title)))
        if terms:
            out.append(rng.sample(terms, min(len(terms), rng.randint(2, 4))))
    return out


# -- systems -----------------------------------------------------------------------------------


class System:
    name = ""

    def search(self, terms: list[str], cutoff: datetime, n: int) -> list[str]:
        raise NotImplementedError


class Pastcast(System):
    name = "pastcast"

    def __init__(self, docs: list[Document], folder: Path) -> None:
        self.index = EmbeddedIndex.build(docs, folder)

    def search(self, terms: list[str], cutoff: datetime, n: int) -> list[str]:
        return [h.id for h in self.index.search(" ".join(terms), as_of=cutoff, k=K)]


class Tantivy(System):
    name = "tantivy"

    def __init__(self, docs: Iterable[Document], folder: Path) -> None:
        import tantivy

        self.t = tantivy
        analyzer = (
            tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.regex(r"\w+"))
            .filter(tantivy.Filter.lowercase())
            .filter(tantivy.Filter.custom_stopword(sorted(STOPWORDS)))
            .build()
        )
        sb = tantivy.SchemaBuilder()
        sb.add_text_field("id", stored=True, tokenizer_name="raw")
        sb.add_text_field("body", tokenizer_name="pastcast", index_option="freq")
        sb.add_integer_field("ts", indexed=True, fast=True)
        self.schema = sb.build()
        folder.mkdir(parents=True, exist_ok=True)  # an index there is opened, ``docs`` added
        index = tantivy.Index(self.schema, path=str(folder))
        index.register_tokenizer("pastcast", analyzer)
        writer = index.writer(heap_size=512_000_000)
        for d in docs:
            writer.add_document(
                tantivy.Document(id=d.id, body=f"{d.title}\n{d.text}", ts=to_micros(d.timestamp))
            )
        writer.commit()
        writer.wait_merging_threads()
        index.reload()
        self.searcher = index.searcher()

    def search(self, terms: list[str], cutoff: datetime, n: int) -> list[str]:
        t, schema = self.t, self.schema
        text = t.Query.boolean_query(
            [(t.Occur.Should, t.Query.term_query(schema, "body", w)) for w in terms]
        )
        before = t.Query.range_query(
            schema, "ts", t.FieldType.Integer, None, to_micros(cutoff), include_upper=False
        )
        query = t.Query.boolean_query([(t.Occur.Must, text), (t.Occur.Must, before)])
        hits = self.searcher.search(query, K).hits
        return [self.searcher.doc(address)["id"][0] for _, address in hits]


class Bm25s(System):
    def __init__(self, docs: list[Document], ids: list[str], *, mask: bool) -> None:
        import bm25s

        self.name = "bm25s-mask" if mask else "bm25s-post"
        self.mask, self.ids = mask, np.array(ids)
        tokens = [tokenize(f"{d.title}\n{d.text}") for d in docs]
        self.model = bm25s.BM25(k1=K1, b=B, method="lucene")
        self.model.index(tokens, show_progress=False)
        self.vocab = self.model.vocab_dict
        self.stamps = np.array([to_micros(d.timestamp) for d in docs], dtype=np.int64)

    def search(self, terms: list[str], cutoff: datetime, n: int) -> list[str]:
        known = [w for w in terms if w in self.vocab]
        if not known:
            return []
        visible = self.stamps < to_micros(cutoff)
        if self.mask:
            return self._top(known, K, visible.astype(np.float32))[0]
        depth = K
        while True:  # post-filter: deepen until K visible documents or the whole corpus
            ids, rows = self._top(known, depth, None)
            keep = [i for i, r in zip(ids, rows, strict=True) if visible[r]]
            if len(keep) >= K or depth >= len(self.ids):
                return keep[:K]
            depth = min(len(self.ids), depth * 4)

    def _top(self, terms: list[str], k: int, mask: Any) -> tuple[list[str], list[int]]:
        docs, scores = self.model.retrieve(
            [terms], k=k, show_progress=False, weight_mask=mask, n_threads=0
        )
        rows = [int(r) for r, s in zip(docs[0], scores[0], strict=True) if s > 0]
        return self.ids[rows].tolist(), rows


@dataclass
class Csr:
    """Postings of the whole corpus, documents in (timestamp, id) order."""

    vocab: dict[str, int]
    offsets: np.ndarray
    rows: np.ndarray
    tf: np.ndarray
    doc_len: np.ndarray
    len_prefix: np.ndarray
    stamps: np.ndarray
    ids: np.ndarray
    id_rank: np.ndarray


def build_csr(docs: list[Document]) -> Csr:
    docs = sorted(docs, key=lambda d: (d.timestamp, d.id))
    vocab: defaultdict[bytes, int] = defaultdict()
    vocab.default_factory = vocab.__len__
    tids = array("q")
    lens = np.zeros(len(docs), dtype=np.int64)
    for i, d in enumerate(docs):
        tokens = tokenize_utf8(f"{d.title}\n{d.text}")
        lens[i] = len(tokens)
        tids.extend(map(vocab.__getitem__, tokens))
    n = len(docs)
    rows = np.repeat(np.arange(n, dtype=np.int64), lens)
    key, tf = np.unique(np.frombuffer(tids, dtype=np.int64) * n + rows, return_counts=True)
    term = key // n
    offsets = np.zeros(len(vocab) + 1, dtype=np.int64)
    np.cumsum(np.bincount(term, minlength=len(vocab)), out=offsets[1:])
    ids = np.array([d.id for d in docs])
    id_rank = np.empty(n, dtype=np.int64)
    id_rank[np.argsort(ids, kind="stable")] = np.arange(n)
    return Csr(
        {t.decode(): i for t, i in vocab.items()},
        offsets,
        key - term * n,
        tf.astype(np.float64),
        lens,
        np.concatenate([[0], np.cumsum(lens)]),
        np.array([to_micros(d.timestamp) for d in docs], dtype=np.int64),
        ids,
        id_rank,
    )


class Numpy(System):
    """BM25 over the CSR; ``exact``: statistics of the visible documents only (the reference)."""

    def __init__(self, csr: Csr, *, exact: bool) -> None:
        self.c, self.exact = csr, exact
        self.name = "exact" if exact else "numpy"

    def search(self, terms: list[str], cutoff: datetime, n: int) -> list[str]:
        c = self.c
        n_stats = n if self.exact else len(c.ids)
        if n_stats == 0:
            return []
        avgdl = int(c.len_prefix[n_stats]) / n_stats
        rows_all, parts = [], []
        for w in terms:
            tid = c.vocab.get(w)
            if tid is None:
                continue
            lo, hi = int(c.offsets[tid]), int(c.offsets[tid + 1])
            rows = c.rows[lo:hi]
            visible = int(np.searchsorted(rows, n, side="left"))  # rows ascend within a term
            df = visible if self.exact else hi - lo
            if visible == 0:
                continue
            idf = math.log(1.0 + (n_stats - df + 0.5) / (df + 0.5))
            rows, tf = rows[:visible], c.tf[lo : lo + visible].copy()
            # the same IEEE operations as pastcast's scorer, so the reference ties identically
            norm = c.doc_len[rows] / avgdl
            norm *= B
            norm += 1.0 - B
            norm *= K1
            norm += tf
            tf *= K1 + 1.0
            tf *= idf
            tf /= norm
            rows_all.append(rows)
            parts.append(tf)
        if not rows_all:
            return []
        # contributions summed per document in query-term order
        cand = np.unique(np.concatenate(rows_all))
        scores = np.zeros(len(cand))
        for rows, contrib in zip(rows_all, parts, strict=True):
            scores[np.searchsorted(cand, rows)] += contrib
        order = np.lexsort((c.id_rank[cand], -scores))[:K]
        return c.ids[cand[order]].tolist()


# -- the run -----------------------------------------------------------------------------------


def timed_build(make: Callable[[], System]) -> tuple[System, float]:
    t0 = time.perf_counter()
    system = make()
    return system, time.perf_counter() - t0


def size_mb(folder: Path) -> float:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 1e6


def pct(xs: list[float], q: int) -> float:
    return statistics.quantiles(xs, n=100)[q - 1] if len(xs) > 1 else xs[0]


def run_corpus(label: str, docs: list[Document], args: argparse.Namespace) -> None:
    print(f"== {label}: {len(docs):,} documents ({load()})")
    work = Path(tempfile.mkdtemp(prefix="pastcast-peers-", dir=args.workdir))
    try:
        systems: list[System] = []
        rows = []
        for name, make, folder in [
            ("pastcast", lambda: Pastcast(docs, work / "pastcast"), work / "pastcast"),
            ("tantivy", lambda: Tantivy(docs, work / "tantivy"), work / "tantivy"),
        ]:
            system, seconds = timed_build(make)
            systems.append(system)
            rows.append((name, seconds, f"{size_mb(folder):.0f} MB on disk"))
        csr, seconds = timed_build(lambda: build_csr(docs))  # type: ignore[arg-type,return-value]
        rows.append(("numpy (CSR)", seconds, "in memory"))
        systems += [Numpy(csr, exact=False)]  # type: ignore[arg-type]
        exact = Numpy(csr, exact=True)  # type: ignore[arg-type]
        if not args.skip_bm25s:
            ids = [d.id for d in docs]
            mask, seconds = timed_build(lambda: Bm25s(docs, ids, mask=True))
            rows.append(("bm25s", seconds, "in memory"))
            post = Bm25s(docs, ids, mask=False)
            post.model, post.vocab = mask.model, mask.vocab  # type: ignore[attr-defined]
            systems += [mask, post]
        base = rows[1][1]
        for name, seconds, where in rows:
            print(f"  build {name:12} {seconds:7.2f} s  ({seconds / base:4.2f}x tantivy)  {where}")
        queries = queries_for(docs, args.queries, seed=1)
        stamps = sorted(to_micros(d.timestamp) for d in docs)
        index = systems[0].index  # type: ignore[attr-defined]
        header = "".join(f" {s.name:>17}" for s in systems)
        print(f"  {'cutoff':>8} {'visible':>8} | p50 / p95 ms, agree:{header}")
        for frac, where in ((0.1, "early"), (0.5, "middle"), (0.9, "late")):
            cutoff = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(
                microseconds=stamps[int(frac * len(stamps))]
            )
            n = index.count_before(cutoff)
            times: dict[str, list[float]] = {s.name: [] for s in systems}
            recall: dict[str, list[float]] = {s.name: [] for s in systems}
            same = 0
            rng = random.Random(2)
            for terms in queries:
                want = exact.search(terms, cutoff, n)
                for system in rng.sample(systems, len(systems)):
                    best, got = math.inf, []
                    for _ in range(args.repeats):
                        t0 = time.perf_counter()
                        got = system.search(terms, cutoff, n)
                        best = min(best, time.perf_counter() - t0)
                    times[system.name].append(best * 1000)
                    recall[system.name].append(
                        len(set(got) & set(want)) / len(want) if want else float(not got)
                    )
                    if system.name == "pastcast":
                        same += got == want
            cells = "".join(
                f" {statistics.median(times[s.name]):5.3f}/{pct(times[s.name], 95):5.2f}"
                f" {statistics.fmean(recall[s.name]):4.2f}"
                for s in systems
            )
            print(f"  {where:>8} {n:8d} |{' ' * 20}{cells}  ({load()})")
            print(f"{'':20}| pastcast equal to the exact reference: {same}/{len(queries)}")
        if args.check_rebuilt:
            check_rebuilt(docs, exact, queries[: args.check_rebuilt], stamps)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def check_rebuilt(docs: list[Document], exact: Numpy, queries: list[list[str]], stamps: list[int]):
    """The reference equals an index built from the visible documents alone (middle cutoff)."""
    cutoff = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(microseconds=stamps[len(stamps) // 2])
    past = EmbeddedIndex.in_memory([d for d in docs if d.timestamp < cutoff])
    bad = sum(
        [h.id for h in past.search(" ".join(q), as_of=cutoff, k=K)]
        != exact.search(q, cutoff, len(past))
        for q in queries
    )
    print(f"  reference vs an index of the past alone: {len(queries) - bad}/{len(queries)} equal")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wcep", type=Path, help="the WCEP archive folder")
    parser.add_argument("--synthetic", type=int, default=0, help="synthetic documents (0: none)")
    parser.add_argument("--months", type=int, default=24)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per query (best kept)")
    parser.add_argument(
        "--check-rebuilt", type=int, default=50, help="queries checked against a rebuilt index"
    )
    parser.add_argument("--skip-bm25s", action="store_true")
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()))
    args = parser.parse_args()
    print(f"{os.cpu_count()} cores, {load()} at start")
    if args.wcep:
        run_corpus("WCEP", list(read_wcep(args.wcep)), args)
    if args.synthetic:
        t0 = time.perf_counter()
        docs = list(topic_stream(args.synthetic, args.months))
        print(f"(synthetic corpus generated in {time.perf_counter() - t0:.1f} s)")
        run_corpus(f"synthetic, {args.months} months", docs, args)
    print(f"{load()} at the end")


if __name__ == "__main__":
    main()
