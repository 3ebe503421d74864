"""Every registered embedder side by side: documents embedded per second on this machine, and
recall@10 / nDCG@10 on a labelled retrieval set built from the WCEP archive (BM25 as a reference).

    python benchmarks/embedding.py --wcep ../shared/data/wcep [--year 2023] [--limit N] \
        [--full] [--json out.json]

The labelled set (honest by construction, no model involved in the labels): WCEP lists each
news sentence under a topic heading (``Gaza war``, ``2023 Hawaii wildfires``, ...). The corpus is
one year of sentences with their headings removed (the heading is the document's title in the
archive, so it is dropped from what is embedded and indexed); a query is a heading that has 3 to
10 sentences in that year and is not a category name; its relevant documents are exactly those
sentences. recall@10 is the share of a query's sentences in its top 10 (each query can reach
1.0), nDCG@10 the binary-gain discounted gain over the ideal. The judgements are incomplete: a
sentence filed under a neighbouring heading (``Israel-Hamas war`` for ``Gaza Strip blockade``)
counts as irrelevant, so absolute values are low; every model faces the same set.

Speed: the year's documents are embedded once per model (title and text, as the index embeds
them, timed after the model is loaded; the load, and for the static model its one-time
distillation, are timed apart), and the full archive's time is extrapolated from that rate.
``--full`` embeds the whole archive instead. Torch runs on the machine's cores (two here); the
load average is printed, since the machine may be shared. A ``hybrid`` row per model fuses its
ranking with BM25's by reciprocal rank (top 100 of each), as ``--retrieval hybrid`` does.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from pastcast.corpus.dense import embedders, embedding_text, rrf_fuse
from pastcast.corpus.embedded import EmbeddedIndex
from pastcast.corpus.sources import read_wcep
from pastcast.records import Document

K = 10
DEPTH = 100  # each leg's depth in the fused rows, as HybridIndex's default


def labelled_set(
    docs: list[Document], year: int, limit: int | None = None
) -> tuple[list[Document], list[tuple[str, set[int]]]]:
    """The year's sentences (its first ``limit``, in time order) without their headings, and
    (heading, relevant positions) queries."""
    corpus = sorted((d for d in docs if d.timestamp.year == year), key=lambda d: d.timestamp)
    corpus = corpus[:limit]
    by_heading: dict[str, list[int]] = defaultdict(list)
    for i, d in enumerate(corpus):
        by_heading[d.title].append(i)
    categories = {d.source.split(":", 1)[-1] for d in corpus} | {"Uncategorized", ""}
    queries = [
        (heading, set(members))
        for heading, members in sorted(by_heading.items())
        if 3 <= len(members) <= 10 and heading not in categories
    ]
    stripped = [d.model_copy(update={"title": ""}) for d in corpus]
    return stripped, queries


def metrics(rankings: list[list[int]], queries: list[tuple[str, set[int]]]) -> dict[str, float]:
    recall = ndcg = 0.0
    for ranked, (_, relevant) in zip(rankings, queries, strict=True):
        gains = [1.0 if r in relevant else 0.0 for r in ranked[:K]]
        recall += sum(gains) / len(relevant)
        dcg = sum(g / np.log2(i + 2) for i, g in enumerate(gains))
        ideal = sum(1 / np.log2(i + 2) for i in range(min(K, len(relevant))))
        ndcg += dcg / ideal
    return {"recall@10": recall / len(queries), "ndcg@10": ndcg / len(queries)}


def bm25_rankings(corpus: list[Document], queries: list[tuple[str, set[int]]]) -> list[list[int]]:
    """BM25's top ``DEPTH`` per query (positions in ``corpus``)."""
    index = EmbeddedIndex.in_memory(corpus)
    position = {d.id: i for i, d in enumerate(corpus)}
    later = datetime(9999, 1, 1, tzinfo=UTC)
    return [[position[h.id] for h in index.search(q, as_of=later, k=DEPTH)] for q, _ in queries]


def fused(first: list[list[int]], second: list[list[int]]) -> list[list[int]]:
    """Reciprocal-rank fusion of two rankings per query, as ``HybridIndex`` fuses them."""
    out = []
    for a, b in zip(first, second, strict=True):
        best = rrf_fuse(a[:DEPTH], b[:DEPTH], K, lambda o: o)
        out.append([o for o, _ in best])
    return out


def embedder_rows(
    name: str,
    corpus: list[Document],
    queries: list[tuple[str, set[int]]],
    archive: int,
    bm25: list[list[int]],
) -> list[dict[str, Any]]:
    t0 = time.perf_counter()
    model = embedders.build(name)
    load_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    vectors = model.encode([embedding_text(d) for d in corpus])
    embed_s = time.perf_counter() - t0
    rate = len(corpus) / embed_s
    q = model.encode([heading for heading, _ in queries])
    scores = q @ vectors.T
    rankings = [[int(o) for o in np.argsort(-row, kind="stable")[:DEPTH]] for row in scores]
    own = {
        "model": name,
        "load_s": round(load_s, 1),
        "docs_per_s": round(rate, 1),
        "archive_minutes": round(archive / rate / 60, 2),
        **metrics([r[:K] for r in rankings], queries),
    }
    return [own, {"model": f"hybrid: bm25 + {name}", **metrics(fused(bm25, rankings), queries)}]


def full_archive(name: str, docs: list[Document]) -> float:
    model = embedders.build(name)
    t0 = time.perf_counter()
    for lo in range(0, len(docs), 256):
        model.encode([embedding_text(d) for d in docs[lo : lo + 256]])
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wcep", type=Path, default=Path("../shared/data/wcep"))
    parser.add_argument("--year", type=int, default=2023)
    parser.add_argument(
        "--limit", type=int, help="the year's first N sentences only (a quicker, smaller set)"
    )
    parser.add_argument("--models", nargs="*", help="embedders (default: every registered one)")
    parser.add_argument("--full", action="store_true", help="also embed the whole archive")
    parser.add_argument("--json", type=Path, help="write the rows here too")
    args = parser.parse_args()
    print(f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.2f} at start")
    docs = list(read_wcep(args.wcep))
    corpus, queries = labelled_set(docs, args.year, args.limit)
    print(
        f"archive {len(docs)} documents; labelled set: {len(corpus)} documents of {args.year}, "
        f"{len(queries)} headings as queries ({sum(len(r) for _, r in queries)} judgements)"
    )
    bm25 = bm25_rankings(corpus, queries)
    rows = [{"model": "bm25 (reference)", **metrics([r[:K] for r in bm25], queries)}]
    for name in args.models or embedders.names():
        own, hybrid = embedder_rows(name, corpus, queries, len(docs), bm25)
        if args.full:
            own["archive_minutes_measured"] = round(full_archive(name, docs) / 60, 2)
        rows += [own, hybrid]
        print(f"  {name}: done (load {os.getloadavg()[0]:.2f})")
    header = ("model", "load_s", "docs_per_s", "archive_minutes", "recall@10", "ndcg@10")
    print("\n| " + " | ".join(header) + " |\n|" + "---|" * len(header))
    for row in rows:
        cells = [row.get(h, "") for h in header]
        print(
            "| "
            + " | ".join(f"{c:.3f}" if isinstance(c, float) and c < 1 else str(c) for c in cells)
            + " |"
        )
    print(f"\nload {os.getloadavg()[0]:.2f} at the end")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
