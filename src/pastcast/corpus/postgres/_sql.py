"""Every SQL statement the PostgreSQL backend sends; ``{s}`` stands for the schema.

Each statement that reads documents or postings carries ``ts < %(as_of)s`` in its WHERE clause,
so the planner prunes the month partitions after the cutoff's month and no later row can enter
a result or a statistic (``ALL_SQL``, which hashes a whole corpus once, is the exception: it
never answers an agent).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from pastcast.records import Document

__all__ = [
    "ALL_SQL",
    "AUTHOR_SQL",
    "COUNT_SQL",
    "DF_SQL",
    "DOC_FIELDS",
    "HAS_THREADS_SQL",
    "HITS_SQL",
    "LENGTHS_SQL",
    "MONTH_DF_SQL",
    "MONTH_LENGTHS_SQL",
    "READ_SQL",
    "THREAD_SQL",
    "VECTOR_SQL",
    "check_schema",
    "document_of",
    "score_sql",
]

DOC_FIELDS = "id, ts, title, text, source, url, thread_id, author, parent_id"
_SCHEMA = re.compile(r"[a-z_][a-z0-9_]{0,62}")

COUNT_SQL = "SELECT count(*) FROM {s}.documents WHERE ts < %(as_of)s"
READ_SQL = f"SELECT {DOC_FIELDS} FROM {{s}}.documents WHERE id = %(id)s AND ts < %(as_of)s"
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
    f"SELECT ord, {DOC_FIELDS} FROM {{s}}.documents WHERE ord = ANY(%(ords)s) AND ts < %(as_of)s"
)
ALL_SQL = f"SELECT {DOC_FIELDS} FROM {{s}}.documents ORDER BY ts, id"  # hashing old corpora
# A key's documents in (timestamp, id) order, like the embedded index's ordinals.
THREAD_SQL = (
    f"SELECT {DOC_FIELDS} FROM {{s}}.documents WHERE thread_id = %(key)s AND ts < %(as_of)s "
    "ORDER BY ts, id LIMIT %(limit)s"
)
AUTHOR_SQL = (
    f"SELECT * FROM (SELECT {DOC_FIELDS} FROM {{s}}.documents WHERE author = %(key)s "
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


def document_of(row: Sequence[Any]) -> Document:
    keys = ("id", "timestamp", "title", "text", "source", "url", "thread_id", "author")
    return Document(**dict(zip(keys, row[:8], strict=True)), parent_id=row[8])
