"""``PostgresBackend``: the corpus in PostgreSQL (+ pgvector), exact "as of" any cutoff: every
statement carries ``ts < as_of`` (``_sql``), and BM25 equals the embedded index's to the bit
(docs/postgres.md, "Exact scores"); ties by ordinal, the id's rank."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from functools import partial
from typing import TYPE_CHECKING, Any

from pastcast.corpus._filter import SearchFilter
from pastcast.corpus._open import one_line
from pastcast.corpus._protocol import (
    DocumentNotVisible,
    SearchHit,
    ancestors_of,
    not_visible_message,
)
from pastcast.corpus._text import TOKENIZER, text_snippet, tokenize
from pastcast.corpus.dense import Embedder, embed_corpus, embedding_text
from pastcast.corpus.embedded import K1, B
from pastcast.corpus.postgres._sql import (
    ANCESTOR_SQL,
    AUTHOR_SQL,
    COUNT_SQL,
    DESCENDANTS_SQL,
    HAS_THREADS_SQL,
    HITS_SQL,
    MONTH_DF_SQL,
    MONTH_LENGTHS_SQL,
    READ_SQL,
    THREAD_SQL,
    check_schema,
    document_of,
    filter_sql,
    score_sql,
    vector_sql,
)
from pastcast.corpus.postgres._topk import SearchWork, early_top_k
from pastcast.cutoff import as_utc
from pastcast.records import CorpusIdentity, Document
from pastcast.retrying import redact_url

if TYPE_CHECKING:  # psycopg comes with the optional 'postgres' extra and is imported lazily
    import psycopg


class PostgresBackend:
    """A corpus in one schema of a PostgreSQL database; satisfies ``CorpusBackend``."""

    def __init__(
        self, conn: psycopg.Connection[Any], schema: str, meta: Mapping[str, Any], url: str = ""
    ):
        self._conn = conn
        self.schema = check_schema(schema)
        self.meta = dict(meta)
        self.url = redact_url(url) if url else ""  # never holds the password
        self._identity: CorpusIdentity | None = None
        self._threads: bool | None = None
        self.last_work: SearchWork | None = None  # what the last BM25 search read
        # search over the impact index (``_topk``): the same results, off because it measured
        # slower than scoring every posting on long queries of frequent words (docs/postgres.md)
        self.early_termination = False

    # -- construction -------------------------------------------------------------------------

    @classmethod
    def connect(cls, url: str, *, schema: str = "pastcast") -> PostgresBackend:
        """Open the corpus stored in ``schema`` of the database at ``url``."""
        from pastcast.corpus.postgres._schema import FORMAT, FORMAT_VERSION, read_meta

        conn = cls._open(url)
        meta = read_meta(conn, check_schema(schema))
        problem = None
        if meta is None:
            problem = f"schema {schema!r} holds no corpus"
        elif meta.get("format") != FORMAT or meta.get("version") != FORMAT_VERSION:
            problem = (
                f"schema {schema!r} holds format {meta.get('format')!r} version "
                f"{meta.get('version')!r} (expected {FORMAT!r} {FORMAT_VERSION}): load it "
                "again with 'pastcast corpus build ... --backend postgres'"
            )
        if problem or meta is None:
            conn.close()
            raise FileNotFoundError(f"{redact_url(url)}: {problem}")
        if meta.get("dims"):
            from pgvector.psycopg import register_vector

            register_vector(conn)
        return cls(conn, schema, meta, url)

    @classmethod
    def build(
        cls,
        documents: Iterable[Document],
        url: str,
        *,
        schema: str = "pastcast",
        overwrite: bool = False,
        embeddings: Mapping[str, Sequence[float]] | None = None,
        embedder: Embedder | None = None,
        progress: bool = False,
    ) -> PostgresBackend:
        """Load ``documents`` (ids unique) into ``schema`` with COPY, then open it;
        ``embeddings`` (id -> vector) or ``embedder`` (its name kept for the queries) need the
        ``vector`` extension."""
        from pastcast.corpus.postgres._schema import load_corpus

        if embedder is not None:
            if embeddings is not None:
                raise ValueError("give embeddings or an embedder, not both")
            docs = list(documents)
            texts = [embedding_text(d) for d in docs]
            vectors = embed_corpus(
                embedder, len(docs), lambda lo, hi: texts[lo:hi], None, progress=progress
            )
            embeddings = {d.id: v.tolist() for d, v in zip(docs, vectors, strict=True)}
            documents = docs
        with cls._open(url) as conn:
            load_corpus(
                conn,
                documents,
                check_schema(schema),
                overwrite=overwrite,
                embeddings=embeddings,
                embedder=None if embedder is None else embedder.name,
                progress=progress,
            )
            for table in ("documents", "postings"):  # planner statistics + visibility map
                conn.execute(f"VACUUM (ANALYZE) {schema}.{table}")
        return cls.connect(url, schema=schema)

    @staticmethod
    def _open(url: str) -> psycopg.Connection[Any]:
        import psycopg

        try:
            return psycopg.connect(url, autocommit=True, options="-c timezone=UTC")
        except psycopg.OperationalError as exc:
            raise ConnectionError(f"{redact_url(url)}: cannot connect: {one_line(exc)}") from None

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> PostgresBackend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __len__(self) -> int:
        return int(self.meta["doc_count"])

    def _rows(self, query: str, params: Mapping[str, Any]) -> list[tuple[Any, ...]]:
        return self._conn.execute(query.replace("{s}", self.schema), params).fetchall()

    def identity(self) -> CorpusIdentity:
        if self._identity is None:
            meta = self.meta
            first, last = meta.get("first_timestamp"), meta.get("last_timestamp")
            self._identity = CorpusIdentity(
                spec=self.url,
                backend="postgres",
                retrieval="bm25",
                content_sha256=str(meta["content_sha256"]),
                doc_count=int(meta["doc_count"]),
                first_timestamp=datetime.fromisoformat(first) if first else None,
                last_timestamp=datetime.fromisoformat(last) if last else None,
                options={
                    "schema": self.schema,
                    "format": f"{meta.get('format')} v{meta.get('version')}",
                    "tokenizer": TOKENIZER,
                    "k1": K1,
                    "b": B,
                },
            )
        return self._identity

    # -- CorpusBackend ------------------------------------------------------------------------

    def count_before(self, as_of: datetime) -> int:
        return int(self._rows(COUNT_SQL, {"as_of": as_utc(as_of)})[0][0])

    def read(self, doc_id: str, *, as_of: datetime) -> Document:
        # PostgreSQL text cannot hold NUL, so no stored id has one (refused in ``_read_with``)
        return self._read_with(READ_SQL, doc_id, as_of=as_of)

    def search(
        self, query: str, *, as_of: datetime, k: int = 10, filters: SearchFilter | None = None
    ) -> list[SearchHit]:
        terms = list(dict.fromkeys(tokenize(query)))
        return self.hits(self.score(terms, as_of, k, filters), terms, as_of, filters)

    # -- ThreadedBackend -------------------------------------------------------------------------

    def has_threads(self) -> bool:
        """Whether any document belongs to a thread (asked once per connection)."""
        if self._threads is None:
            self._threads = bool(self._rows(HAS_THREADS_SQL, {})[0][0])
        return self._threads

    def post(self, doc_id: str, *, as_of: datetime) -> Document:
        return self.read(doc_id, as_of=as_of)

    def thread(self, thread_id: str, *, as_of: datetime, limit: int = 50) -> list[Document]:
        docs = self._lookup(THREAD_SQL, thread_id, as_of, limit)
        if not docs:
            raise DocumentNotVisible(not_visible_message(thread_id, as_of))
        return docs

    def author_posts(self, author: str, *, as_of: datetime, limit: int = 20) -> list[Document]:
        return self._lookup(AUTHOR_SQL, author, as_of, limit)

    def ancestors(self, doc_id: str, *, as_of: datetime) -> list[Document]:
        doc = self.post(doc_id, as_of=as_of)  # one indexed read per level
        return ancestors_of(partial(self._read_with, ANCESTOR_SQL, as_of=as_of), doc)

    def descendants(self, doc_id: str, *, as_of: datetime, limit: int = 50) -> list[Document]:
        self.post(doc_id, as_of=as_of)  # then one recursive statement
        return self._lookup(DESCENDANTS_SQL, doc_id, as_of, limit)

    def _read_with(self, statement: str, doc_id: str, *, as_of: datetime) -> Document:
        if "\x00" in doc_id:
            raise DocumentNotVisible(not_visible_message(doc_id, as_of))
        rows = self._rows(statement, {"id": doc_id, "as_of": as_utc(as_of)})
        if not rows:
            raise DocumentNotVisible(not_visible_message(doc_id, as_of))
        return document_of(rows[0])

    def _lookup(self, statement: str, key: str, as_of: datetime, limit: int) -> list[Document]:
        if limit < 1:
            raise ValueError(f"limit must be at least 1, got {limit}")
        if not key or "\x00" in key:  # never stored as a key (see the embedded index's maps)
            return []
        rows = self._rows(statement, {"key": key, "as_of": as_utc(as_of), "limit": limit})
        return [document_of(r) for r in rows]

    # -- BM25 -----------------------------------------------------------------------------------

    def statistics(self, terms: Sequence[str], as_of: datetime) -> tuple[int, int, dict[str, int]]:
        """``(N, total length, df per term)`` over the documents before ``as_of``, earlier
        months from their totals (docs/postgres.md, "Statistics from month totals")."""
        cutoff = as_utc(as_of)
        month = datetime(cutoff.year, cutoff.month, 1, tzinfo=UTC)
        params = {"as_of": cutoff, "terms": list(terms), "month": month}
        rows = self._rows(MONTH_LENGTHS_SQL, params)
        n, total = sum(int(r[0]) for r in rows), sum(int(r[1]) for r in rows)
        df: dict[str, int] = {}
        if terms and n:
            for t, c in self._rows(MONTH_DF_SQL, params):
                df[t] = df.get(t, 0) + int(c)
        return n, total, df

    def score(
        self,
        terms: Sequence[str],
        as_of: datetime,
        k: int,
        filters: SearchFilter | None = None,
        *,
        exhaustive: bool = False,
    ) -> list[tuple[int, float]]:
        """Top-``k`` (ordinal, score) before ``as_of`` among the documents that pass
        ``filters`` (statistics over every visible document): early (``_topk``) with
        ``early_termination``, the impact index and no filter, unless ``exhaustive``."""
        n, total, df = self.statistics(terms, as_of)
        used = [t for t in terms if df.get(t, 0) > 0]
        if n == 0 or k <= 0 or not used:
            return []
        idfs = [math.log(1.0 + (n - df[t] + 0.5) / (df[t] + 0.5)) for t in used]
        visible = sum(df[t] for t in used)
        impact = self.meta.get("impact")
        early = self.early_termination and not exhaustive
        if impact and early and (filters is None or filters.is_empty()):
            found = early_top_k(
                self._rows, impact, used, idfs, total / n, as_utc(as_of), k, visible=visible
            )
            if found is not None:
                self.last_work = SearchWork(visible=visible, read=found[1], exhaustive=False)
                return found[0]
        conditions, params = filter_sql(filters)
        params |= {"as_of": as_utc(as_of), "k": k, "k1": K1, "b": B}
        params |= {"k1p1": K1 + 1.0, "one_minus_b": 1.0 - B, "avgdl": total / n}
        for i, term in enumerate(used):
            params[f"t{i}"] = term
            params[f"idf{i}"] = idfs[i]
        rows = self._rows(score_sql(len(used), conditions), params)
        self.last_work = SearchWork(visible=visible, read=visible, exhaustive=True)
        return [(int(o), float(s)) for o, s in rows]

    # -- dense ----------------------------------------------------------------------------------

    def search_vector(
        self,
        vector: Sequence[float],
        *,
        as_of: datetime,
        k: int = 10,
        exact: bool = True,
        filters: SearchFilter | None = None,
    ) -> list[SearchHit]:
        """Documents before ``as_of`` by inner product with ``vector`` (descending, then id):
        exact, or with ``exact=False`` through the HNSW graphs (docs/postgres.md, "Dense
        retrieval")."""
        ranked = self.vector_ranked(vector, as_of, k, exact=exact, filters=filters)
        return self.hits(ranked, [], as_of, filters)

    def vector_ranked(
        self,
        vector: Sequence[float],
        as_of: datetime,
        k: int,
        *,
        exact: bool = True,
        filters: SearchFilter | None = None,
    ) -> list[tuple[int, float]]:
        """Top-``k`` (ordinal, inner product) of ``search_vector``."""
        if not self.meta.get("dims"):
            raise ValueError(f"schema {self.schema!r} was built without embeddings")
        import numpy as np
        from pgvector import Vector

        conditions, params = filter_sql(filters)
        params |= {"q": Vector(np.asarray(vector, dtype=np.float32)), "as_of": as_utc(as_of)}
        params["k"] = k
        if exact:
            # Ordering by the negated distance (then ord) cannot use the HNSW index.
            rows = self._rows(vector_sql(conditions), params)
        else:
            q = (
                "SELECT ord, score FROM (SELECT ord, -(embedding <#> %(q)s)::float8 AS score "
                f"FROM {{s}}.documents WHERE ts < %(as_of)s{conditions} "
                "ORDER BY embedding <#> %(q)s LIMIT %(k)s) AS a ORDER BY score DESC, ord"
            )
            with self._conn.transaction():
                self._conn.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
                rows = self._rows(q, params)
        return [(int(o), float(s)) for o, s in rows]

    # -- helpers --------------------------------------------------------------------------------

    def hits(
        self,
        ranked: Sequence[tuple[int, float]],
        terms: list[str],
        as_of: datetime,
        filters: SearchFilter | None = None,
    ) -> list[SearchHit]:
        """``SearchHit``s for (ordinal, score) pairs in order, the documents fetched under the
        cutoff once more and checked against ``filters``."""
        if not ranked:
            return []
        params = {"ords": [o for o, _ in ranked], "as_of": as_utc(as_of)}
        docs = {int(r[0]): document_of(r[1:]) for r in self._rows(HITS_SQL, params)}
        if filters is not None and not all(filters.matches(d) for d in docs.values()):
            raise RuntimeError(f"schema {self.schema!r}: a search ranked against its filter")
        return [
            SearchHit(
                id=docs[o].id,
                timestamp=docs[o].timestamp,
                title=docs[o].title,
                score=score,
                snippet=text_snippet(docs[o].text, terms),
            )
            for o, score in ranked
        ]

    def explain(self, query: str, params: Mapping[str, Any]) -> str:
        """The server's plan for a statement (``{s}`` stands for the schema)."""
        return "\n".join(str(r[0]) for r in self._rows("EXPLAIN " + query, params))
