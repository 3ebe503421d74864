"""The PostgreSQL layout of a corpus (docs/postgres.md, "Layout") and its bulk load, into a
scratch schema renamed into place in one short transaction, so that a reader never sees a
half-built corpus (``meta`` marks a complete one)."""

from __future__ import annotations

import itertools
import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, LiteralString

import psycopg
from psycopg import sql

from pastcast.corpus._identity import DIGEST_SCHEME, content_digest
from pastcast.corpus._text import tokenize
from pastcast.corpus.embedded import K1, B
from pastcast.corpus.postgres._sql import impact_expression
from pastcast.cutoff import as_utc
from pastcast.progress import ProgressReporter
from pastcast.records import Document

FORMAT = "pastcast-pg-bm25"
FORMAT_VERSION = 2
"""2: the per-month statistics, the impact index and the corpus digest are always there (a
version 1 schema is refused: load it again)."""
BATCH = 2000

_DOC_COLUMNS = (
    "ord, id, ts, title, text, source, url, thread_id, author, parent_id, len"  # + embedding
)


def month_starts(first: datetime, last: datetime) -> list[datetime]:
    """UTC month starts from ``first``'s month to the month after ``last``'s (partition bounds)."""
    y, m = first.astimezone(UTC).year, first.astimezone(UTC).month
    out = []
    end = last.astimezone(UTC)
    while True:
        start = datetime(y, m, 1, tzinfo=UTC)
        out.append(start)
        if start > end:
            return out
        y, m = (y + 1, 1) if m == 12 else (y, m + 1)


def read_meta(conn: psycopg.Connection[Any], schema: str) -> dict[str, Any] | None:
    """The corpus summary stored in ``schema``, or None when the schema holds no corpus."""
    exists = conn.execute(
        "SELECT to_regclass(%s) IS NOT NULL", (f"{sql.Identifier(schema).as_string(conn)}.meta",)
    ).fetchone()
    if not exists or not exists[0]:
        return None
    row = conn.execute(
        sql.SQL("SELECT value FROM {}.meta WHERE key = 'corpus'").format(sql.Identifier(schema))
    ).fetchone()
    return dict(row[0]) if row else None


_TABLES: tuple[LiteralString, ...] = (
    "CREATE SCHEMA {s}",
    "CREATE TABLE {s}.meta (key text PRIMARY KEY, value jsonb)",
    'CREATE TABLE {s}.documents (ord bigint NOT NULL, id text COLLATE "C" NOT NULL, '
    "ts timestamptz NOT NULL, title text NOT NULL, text text NOT NULL, source text NOT NULL, "
    "url text, thread_id text, author text, parent_id text, len integer NOT NULL{vector}) "
    "PARTITION BY RANGE (ts)",
    'CREATE TABLE {s}.postings (term text COLLATE "C" NOT NULL, ts timestamptz NOT NULL, '
    "ord bigint NOT NULL, tf integer NOT NULL, len integer NOT NULL) PARTITION BY RANGE (ts)",
)
_INDEXES: tuple[LiteralString, ...] = (
    "CREATE INDEX ON {s}.documents (id)",
    "CREATE INDEX ON {s}.documents (ts) INCLUDE (len)",
    # thread and author look-ups: one key's documents in time order
    "CREATE INDEX ON {s}.documents (thread_id, ts, id)",
    "CREATE INDEX ON {s}.documents (author, ts, id)",
    # the replies to a document (descendants), walked level by level
    "CREATE INDEX ON {s}.documents (parent_id, ts, id)",
    "CREATE INDEX ON {s}.postings (term, ts) INCLUDE (ord, tf, len)",
    # Per-month statistics (see the module docstring); months are UTC calendar months.
    "CREATE TABLE {s}.month_totals (month timestamptz PRIMARY KEY, n bigint NOT NULL, "
    "total_len bigint NOT NULL)",
    "INSERT INTO {s}.month_totals SELECT date_trunc('month', ts, 'UTC'), count(*), sum(len) "
    "FROM {s}.documents GROUP BY 1",
    'CREATE TABLE {s}.month_df (term text COLLATE "C" NOT NULL, month timestamptz NOT NULL, '
    "df bigint NOT NULL, PRIMARY KEY (term, month))",
    "INSERT INTO {s}.month_df SELECT term, date_trunc('month', ts, 'UTC'), count(*) "
    "FROM {s}.postings GROUP BY 1, 2",
)
# One HNSW graph per month partition, for the approximate mode (see _postgres).
_VECTOR_INDEX: LiteralString = "CREATE INDEX ON {s}.documents USING hnsw (embedding vector_ip_ops)"


def _create_tables(
    conn: psycopg.Connection[Any], schema: str, months: Sequence[datetime], dims: int | None
) -> None:
    s = sql.Identifier(schema)
    vector = sql.SQL(", embedding vector({})").format(sql.Literal(dims)) if dims else sql.SQL("")
    for statement in _TABLES:
        conn.execute(sql.SQL(statement).format(s=s, vector=vector))
    for lo, hi in itertools.pairwise(months):
        for table in ("documents", "postings"):
            part = sql.Identifier(f"{table}_{lo:%Y_%m}")
            conn.execute(
                sql.SQL(
                    "CREATE TABLE {s}.{p} PARTITION OF {s}.{t} FOR VALUES FROM ({lo}) TO ({hi})"
                ).format(
                    s=s, p=part, t=sql.Identifier(table), lo=sql.Literal(lo), hi=sql.Literal(hi)
                )
            )


def _create_impact_index(conn: psycopg.Connection[Any], schema: str) -> dict[str, float] | None:
    """The impact index of ``schema``'s postings and its constants (None for an empty corpus);
    any reference avgdl gives valid bounds, the corpus's own keeps them tight late in it."""
    row = conn.execute(
        sql.SQL("SELECT sum(n), sum(total_len) FROM {}.month_totals").format(sql.Identifier(schema))
    ).fetchone()
    if not row or not row[0] or not row[1]:
        return None
    ref = int(row[1]) / int(row[0])
    a, c = K1 * (1.0 - B), K1 * B / ref
    conn.execute(
        sql.SQL("CREATE INDEX ON {}.postings (term, ({}) DESC) INCLUDE (ord, ts, tf, len)").format(
            sql.Identifier(schema), sql.SQL(impact_expression(a, c))
        )
    )
    return {"a": a, "c": c, "avgdl": ref}


def load_corpus(
    conn: psycopg.Connection[Any],
    documents: Iterable[Document],
    schema: str,
    *,
    overwrite: bool,
    embeddings: Mapping[str, Sequence[float]] | None,
    progress: bool,
    embedder: str | None = None,
) -> dict[str, Any]:
    """Load ``documents`` into ``schema`` (see the module docstring); returns the summary."""
    docs: dict[str, Document] = {}
    for doc in documents:
        if doc.id in docs:
            raise ValueError(f"duplicate document id {doc.id!r}")
        for field, value in doc:
            if isinstance(value, str) and "\x00" in value:
                raise ValueError(
                    f"document {doc.id!r}: field {field!r} contains a NUL character, "
                    "which PostgreSQL text cannot store"
                )
        docs[doc.id] = doc
    ids = sorted(docs)  # code-point order: the ordinal is the tie-break rank
    dims = None
    if embeddings is not None:
        missing = [i for i in ids if i not in embeddings]
        if missing:
            raise ValueError(f"embeddings: no vector for document {missing[0]!r}")
        dims = len(embeddings[ids[0]]) if ids else None
        bad = [i for i in ids if len(embeddings[i]) != dims]
        if bad:
            raise ValueError(f"embeddings: document {bad[0]!r} has {len(embeddings[bad[0]])} dims")
    existing = read_meta(conn, schema)
    if existing is not None and not overwrite:
        raise FileExistsError(f"schema {schema!r} already holds a corpus (pass overwrite)")
    if (
        existing is None
        and conn.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", (schema,)).fetchone()
    ):
        raise FileExistsError(f"schema {schema!r} exists and holds no corpus; not replacing it")
    stamps = [as_utc(d.timestamp) for d in docs.values()]
    months = month_starts(min(stamps), max(stamps)) if stamps else []
    scratch = f"{schema}__building"
    with conn.transaction():
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(scratch)))
        _create_tables(conn, scratch, months, dims)
    s = sql.Identifier(scratch)
    cols = sql.SQL(_DOC_COLUMNS + (", embedding" if dims else ""))
    postings = 0
    with ProgressReporter("docs", enabled=progress) as bar:
        task = bar.add_task("loading documents", total=len(ids))
        for lo in range(0, len(ids), BATCH):
            with conn.transaction(), conn.cursor() as cur:
                batch = ids[lo : lo + BATCH]
                with cur.copy(sql.SQL("COPY {}.documents ({}) FROM STDIN").format(s, cols)) as cp:
                    rows = []
                    for ordinal, doc_id in enumerate(batch, start=lo):
                        doc = docs[doc_id]
                        terms = Counter(tokenize(f"{doc.title}\n{doc.text}"))
                        length = sum(terms.values())
                        row: list[Any] = [ordinal, doc.id, doc.timestamp, doc.title, doc.text]
                        row += [doc.source, doc.url, doc.thread_id, doc.author, doc.parent_id]
                        row.append(length)
                        if dims and embeddings is not None:
                            vector = ",".join(repr(float(v)) for v in embeddings[doc_id])
                            row.append(f"[{vector}]")
                        cp.write_row(row)
                        rows += [(t, doc.timestamp, ordinal, tf, length) for t, tf in terms.items()]
                with cur.copy(
                    sql.SQL("COPY {}.postings (term, ts, ord, tf, len) FROM STDIN").format(s)
                ) as cp:
                    for r in rows:
                        cp.write_row(r)
                postings += len(rows)
            bar.update(task, completed=lo + len(batch))
        bar.add_task("building indexes", total=None)
        with conn.transaction():
            for statement in _INDEXES + ((_VECTOR_INDEX,) if dims else ()):
                conn.execute(sql.SQL(statement).format(s=s))
            impact = _create_impact_index(conn, scratch)
    summary = {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "doc_count": len(ids),
        "postings": postings,
        "dims": dims,
        "embedder": embedder,  # the model that embedded the documents, when known
        "months": max(len(months) - 1, 0),
        "impact": impact,  # the impact index's constants (None for an empty corpus)
        # the corpus digest of pastcast.corpus._identity: equal to the embedded index's
        "content_sha256": content_digest(docs.values()),
        "content_digest": DIGEST_SCHEME,  # names the rule of the digest above
        "first_timestamp": min(stamps).isoformat() if stamps else None,
        "last_timestamp": max(stamps).isoformat() if stamps else None,
    }
    with conn.transaction():
        conn.execute(
            sql.SQL("INSERT INTO {}.meta VALUES ('corpus', %s)").format(s), (json.dumps(summary),)
        )
        if existing is not None:
            conn.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(schema)))
        conn.execute(sql.SQL("ALTER SCHEMA {} RENAME TO {}").format(s, sql.Identifier(schema)))
    return summary
