"""``PostgresBackend``: the corpus in PostgreSQL (+ pgvector), exact "as of" any cutoff.

Every statement carries the strict cutoff ``ts < as_of`` in its WHERE clause (search, read,
count, statistics), so the server only touches the month partitions before the cutoff and no
later row can enter a result or a statistic. The per-month statistics tables are read only for
months that end at or before the start of the cutoff's month.

BM25 is the embedded index's, to the bit: the server returns ``N``, the total length and each
query term's ``df`` over ``ts < as_of``; ``avgdl`` and the idf (``math.log``) are computed here and
sent back as parameters (a float's ``repr`` round-trips exactly); each posting's contribution is
computed in SQL with the same IEEE double operations in the same order as numpy, and a
document's score is the sum of its term contributions added in query-term order (one value per
term and document, so no aggregate decides the order of a floating-point sum). Ranking is
score descending then ordinal, and the ordinal is the id's rank, as in the embedded index.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from pastcast.corpus._identity import DIGEST_SCHEME, MonthDigests
from pastcast.corpus._protocol import DocumentNotVisible, SearchHit, not_visible_message
from pastcast.corpus._text import TOKENIZER, snippet, tokenize
from pastcast.corpus.embedded import K1, B
from pastcast.cutoff import as_utc
from pastcast.records import CorpusIdentity, Document

if TYPE_CHECKING:  # psycopg comes with the optional 'postgres' extra and is imported lazily
    import psycopg

__all__ = ["PostgresBackend", "redact_url", "split_schema"]

_DOC_FIELDS = "id, ts, title, text, source, url, thread_id, author, parent_id"
_SCHEMA = re.compile(r"[a-z_][a-z0-9_]{0,62}")

# Every statement the backend runs; ``{s}`` stands for the schema. Each carries ``ts < %(as_of)s``.
COUNT_SQL = "SELECT count(*) FROM {s}.documents WHERE ts < %(as_of)s"
READ_SQL = f"SELECT {_DOC_FIELDS} FROM {{s}}.documents WHERE id = %(id)s AND ts < %(as_of)s"
LENGTHS_SQL = "SELECT count(*), coalesce(sum(len), 0) FROM {s}.documents WHERE ts < %(as_of)s"
DF_SQL = (
    "SELECT term, count(*) FROM {s}.postings "
    "WHERE term = ANY(%(terms)s) AND ts < %(as_of)s GROUP BY term"
)
# The same statistics from the per-month tables: whole months before the cutoff's month, plus
# a count within that month up to the cutoff (rows summed here).
MONTH_LENGTHS_SQL = (
    "SELECT coalesce(sum(n), 0)::bigint, coalesce(sum(total_len), 0)::bigint "
    "FROM {s}.month_totals WHERE month < %(month)s "
    "UNION ALL SELECT count(*), coalesce(sum(len), 0) FROM {s}.documents "
    "WHERE ts >= %(month)s AND ts < %(as_of)s"
)
MONTH_DF_SQL = (
    "SELECT term, sum(df)::bigint FROM {s}.month_df "
    "WHERE term = ANY(%(terms)s) AND month < %(month)s GROUP BY term "
    "UNION ALL SELECT term, count(*) FROM {s}.postings "
    "WHERE term = ANY(%(terms)s) AND ts >= %(month)s AND ts < %(as_of)s GROUP BY term"
)
HITS_SQL = (
    f"SELECT ord, {_DOC_FIELDS} FROM {{s}}.documents WHERE ord = ANY(%(ords)s) AND ts < %(as_of)s"
)
ALL_SQL = f"SELECT {_DOC_FIELDS} FROM {{s}}.documents ORDER BY ts, id"  # hashing old corpora
# A key's documents in (timestamp, id) order, like the embedded index's ordinals.
THREAD_SQL = (
    f"SELECT {_DOC_FIELDS} FROM {{s}}.documents WHERE thread_id = %(key)s AND ts < %(as_of)s "
    "ORDER BY ts, id LIMIT %(limit)s"
)
AUTHOR_SQL = (
    f"SELECT * FROM (SELECT {_DOC_FIELDS} FROM {{s}}.documents WHERE author = %(key)s "
    "AND ts < %(as_of)s ORDER BY ts DESC, id DESC LIMIT %(limit)s) AS last ORDER BY ts, id"
)
HAS_THREADS_SQL = "SELECT EXISTS (SELECT 1 FROM {s}.documents WHERE thread_id <> '')"
VECTOR_SQL = (
    "SELECT ord, -(embedding <#> %(q)s)::float8 AS score FROM {s}.documents "
    "WHERE ts < %(as_of)s ORDER BY score DESC, ord LIMIT %(k)s"
)

# The contribution of one posting of query term {i}, written exactly as numpy evaluates
# idf * (tf * (K1 + 1.0)) / (tf + K1 * (1.0 - B + B * (len / avgdl))).
_TERM_SQL = (
    "SELECT ord, {i} AS ti, (%(idf{i})s::float8 * (tf::float8 * %(k1p1)s::float8)) / "
    "(tf::float8 + %(k1)s::float8 * (%(one_minus_b)s::float8 + %(b)s::float8 * "
    "(len::float8 / %(avgdl)s::float8))) AS c "
    "FROM {s}.postings WHERE term = %(t{i})s AND ts < %(as_of)s"
)


def score_sql(n_terms: int) -> str:
    """The BM25 statement for ``n_terms`` query terms (parameters ``t{i}``, ``idf{i}``, ...)."""
    parts, score = [], "0::float8"
    for i in range(n_terms):
        parts.append(_TERM_SQL.replace("{i}", str(i)))
        # One value per (document, term), added in query-term order as numpy does.
        score = f"({score} + coalesce(max(c) FILTER (WHERE ti = {i}), 0::float8))"
    return (
        f"SELECT ord, {score} AS score FROM ({' UNION ALL '.join(parts)}) AS p "
        "GROUP BY ord ORDER BY score DESC, ord LIMIT %(k)s"
    )


def check_schema(schema: str) -> str:
    """``schema`` if it is a plain lowercase SQL identifier (it is spliced into statements)."""
    if not _SCHEMA.fullmatch(schema):
        raise ValueError(f"schema {schema!r}: use lowercase letters, digits and underscores")
    return schema


def _document(row: Sequence[Any]) -> Document:
    keys = ("id", "timestamp", "title", "text", "source", "url", "thread_id", "author")
    return Document(**dict(zip(keys, row[:8], strict=True)), parent_id=row[8])


def redact_url(url: str) -> str:
    """The database URL without its password (in the user part or as a ``password`` parameter),
    for messages and run logs."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparsable database URL>"
    netloc = parts.netloc
    if "@" in netloc:
        user, _, host = netloc.rpartition("@")
        netloc = f"{user.partition(':')[0]}@{host}"
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != "password"]
    return urlunsplit((parts.scheme, netloc, parts.path, urlencode(query), parts.fragment))


def split_schema(url: str) -> tuple[str, str | None]:
    """``url`` without a ``schema=NAME`` parameter, and NAME (None without one): the schema is
    pastcast's, not the server's, so a single URL can name a corpus inside a database."""
    parts = urlsplit(url)
    params = parse_qsl(parts.query, keep_blank_values=True)
    schemas = [v for k, v in params if k == "schema"]
    if len(schemas) > 1:
        raise ValueError(f"{redact_url(url)}: the schema parameter is given twice")
    rest = urlencode([(k, v) for k, v in params if k != "schema"])
    return urlunsplit((*parts[:3], rest, parts.fragment)), (schemas[0] if schemas else None)


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
                f"{meta.get('version')!r} (expected {FORMAT!r} {FORMAT_VERSION})"
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
        progress: bool = False,
    ) -> PostgresBackend:
        """Load ``documents`` (ids unique) into ``schema`` with COPY, then open it.

        ``embeddings`` (optional) maps every document id to its vector, for ``search_vector``;
        the ``vector`` extension must then exist in the database.
        """
        from pastcast.corpus.postgres._schema import load_corpus

        with cls._open(url) as conn:
            load_corpus(
                conn,
                documents,
                check_schema(schema),
                overwrite=overwrite,
                embeddings=embeddings,
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
            raise ConnectionError(f"{redact_url(url)}: cannot connect: {exc}") from None

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
        """Which documents the schema holds and how they are ranked, from its ``meta`` table (a
        corpus loaded before the digest was stored there is hashed once, row by row)."""
        if self._identity is None:
            meta = self.meta
            if meta.get("content_digest") == DIGEST_SCHEME:
                digest = str(meta["content_sha256"])
            else:
                digests = MonthDigests()
                with self._conn.cursor() as cur:
                    rows = cur.stream(ALL_SQL.replace("{s}", self.schema))
                    for doc in map(_document, rows):
                        digests.add_document(doc)
                digest = digests.hexdigest()
            first, last = meta.get("first_timestamp"), meta.get("last_timestamp")
            self._identity = CorpusIdentity(
                spec=self.url,
                backend="postgres",
                retrieval="bm25",
                content_sha256=digest,
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
        """The number of documents with ``timestamp < as_of``."""
        return int(self._rows(COUNT_SQL, {"as_of": as_utc(as_of)})[0][0])

    def read(self, doc_id: str, *, as_of: datetime) -> Document:
        if "\x00" in doc_id:  # PostgreSQL text cannot hold NUL, so no stored id has one
            raise DocumentNotVisible(not_visible_message(doc_id, as_of))
        rows = self._rows(READ_SQL, {"id": doc_id, "as_of": as_utc(as_of)})
        if not rows:
            raise DocumentNotVisible(not_visible_message(doc_id, as_of))
        return _document(rows[0])

    def search(self, query: str, *, as_of: datetime, k: int = 10) -> list[SearchHit]:
        """BM25 over the documents before ``as_of``, with statistics over those alone."""
        terms = list(dict.fromkeys(tokenize(query)))
        return self._hits(self.score(terms, as_of, k), terms, as_of)

    # -- ThreadedBackend -------------------------------------------------------------------------

    def has_threads(self) -> bool:
        """Whether any document belongs to a thread (asked once per connection)."""
        if self._threads is None:
            self._threads = bool(self._rows(HAS_THREADS_SQL, {})[0][0])
        return self._threads

    def post(self, doc_id: str, *, as_of: datetime) -> Document:
        return self.read(doc_id, as_of=as_of)

    def thread(self, thread_id: str, *, as_of: datetime, limit: int = 50) -> list[Document]:
        """The first ``limit`` documents of a thread visible at the cutoff, in time order; a
        thread with nothing visible raises the message of an unknown id."""
        docs = self._lookup(THREAD_SQL, thread_id, as_of, limit)
        if not docs:
            raise DocumentNotVisible(not_visible_message(thread_id, as_of))
        return docs

    def author_posts(self, author: str, *, as_of: datetime, limit: int = 20) -> list[Document]:
        """The author's last ``limit`` documents before the cutoff, in time order."""
        return self._lookup(AUTHOR_SQL, author, as_of, limit)

    def _lookup(self, statement: str, key: str, as_of: datetime, limit: int) -> list[Document]:
        if limit < 1:
            raise ValueError(f"limit must be at least 1, got {limit}")
        if not key or "\x00" in key:  # never stored as a key (see the embedded index's maps)
            return []
        rows = self._rows(statement, {"key": key, "as_of": as_utc(as_of), "limit": limit})
        return [_document(r) for r in rows]

    # -- BM25 -----------------------------------------------------------------------------------

    def statistics(self, terms: Sequence[str], as_of: datetime) -> tuple[int, int, dict[str, int]]:
        """``(N, total length, df per term)`` over the documents before ``as_of``.

        With the per-month tables (builds since they exist) only the cutoff's own month is
        counted row by row; earlier months come from their totals. The integers are the same.
        """
        cutoff = as_utc(as_of)
        params = {"as_of": cutoff, "terms": list(terms)}
        by_month = bool(self.meta.get("month_stats"))
        if by_month:
            params["month"] = datetime(cutoff.year, cutoff.month, 1, tzinfo=UTC)
        rows = self._rows(MONTH_LENGTHS_SQL if by_month else LENGTHS_SQL, params)
        n, total = sum(int(r[0]) for r in rows), sum(int(r[1]) for r in rows)
        df: dict[str, int] = {}
        if terms and n:
            for t, c in self._rows(MONTH_DF_SQL if by_month else DF_SQL, params):
                df[t] = df.get(t, 0) + int(c)
        return n, total, df

    def score(self, terms: Sequence[str], as_of: datetime, k: int) -> list[tuple[int, float]]:
        """Top-``k`` (ordinal, score) before ``as_of``: score descending, then id."""
        n, total, df = self.statistics(terms, as_of)
        used = [t for t in terms if df.get(t, 0) > 0]
        if n == 0 or k <= 0 or not used:
            return []
        params: dict[str, Any] = {"as_of": as_utc(as_of), "k": k, "k1": K1, "b": B}
        params |= {"k1p1": K1 + 1.0, "one_minus_b": 1.0 - B, "avgdl": total / n}
        for i, term in enumerate(used):
            params[f"t{i}"] = term
            params[f"idf{i}"] = math.log(1.0 + (n - df[term] + 0.5) / (df[term] + 0.5))
        return [(int(o), float(s)) for o, s in self._rows(score_sql(len(used)), params)]

    # -- dense ----------------------------------------------------------------------------------

    def search_vector(
        self, vector: Sequence[float], *, as_of: datetime, k: int = 10, exact: bool = True
    ) -> list[SearchHit]:
        """Documents before ``as_of`` by inner product with ``vector`` (descending, then id).

        ``exact`` (default) scans the visible partitions and sorts by the exact score, so the
        result equals that of a corpus holding only the past. ``exact=False`` walks the
        per-partition HNSW graphs (``hnsw.iterative_scan``): faster on big corpora, may miss
        documents, and still never returns one at or after the cutoff (same WHERE clause).
        """
        if not self.meta.get("dims"):
            raise ValueError(f"schema {self.schema!r} was built without embeddings")
        import numpy as np
        from pgvector import Vector

        params = {"q": Vector(np.asarray(vector, dtype=np.float32)), "as_of": as_utc(as_of), "k": k}
        if exact:
            # Ordering by the negated distance (then ord) cannot use the HNSW index.
            rows = self._rows(VECTOR_SQL, params)
        else:
            q = (
                "SELECT ord, score FROM (SELECT ord, -(embedding <#> %(q)s)::float8 AS score "
                "FROM {s}.documents WHERE ts < %(as_of)s ORDER BY embedding <#> %(q)s "
                "LIMIT %(k)s) AS a ORDER BY score DESC, ord"
            )
            with self._conn.transaction():
                self._conn.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
                rows = self._rows(q, params)
        return self._hits([(int(o), float(s)) for o, s in rows], [], as_of)

    # -- helpers --------------------------------------------------------------------------------

    def _hits(
        self, ranked: Sequence[tuple[int, float]], terms: list[str], as_of: datetime
    ) -> list[SearchHit]:
        if not ranked:
            return []
        params = {"ords": [o for o, _ in ranked], "as_of": as_utc(as_of)}
        docs = {int(r[0]): _document(r[1:]) for r in self._rows(HITS_SQL, params)}
        return [
            SearchHit(
                id=docs[o].id,
                timestamp=docs[o].timestamp,
                title=docs[o].title,
                score=score,
                snippet=snippet(docs[o], terms),
            )
            for o, score in ranked
        ]

    def explain(self, query: str, params: Mapping[str, Any]) -> str:
        """The server's plan for a statement (``{s}`` stands for the schema), for inspection."""
        return "\n".join(str(r[0]) for r in self._rows("EXPLAIN " + query, params))
