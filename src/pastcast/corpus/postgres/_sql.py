"""Every SQL statement the PostgreSQL backend sends (``{s}`` stands for the schema); each that
reads documents or postings carries ``ts < %(as_of)s``, so no later row can enter a result or a
statistic (docs/postgres.md, "How the cutoff is enforced")."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from pastcast.corpus._filter import SearchFilter, ascii_lower
from pastcast.records import Document

DOC_FIELDS = "id, ts, title, text, source, url, thread_id, author, parent_id"
_SCHEMA = re.compile(r"[a-z_][a-z0-9_]{0,62}")

COUNT_SQL = "SELECT count(*) FROM {s}.documents WHERE ts < %(as_of)s"
READ_SQL = f"SELECT {DOC_FIELDS} FROM {{s}}.documents WHERE id = %(id)s AND ts < %(as_of)s"
# N, total length and df from the per-month tables: whole months before the cutoff's month,
# plus a count within that month up to the cutoff (rows summed by the caller).
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
# The replies to a document, their replies and so on, through visible documents only (a
# reply is reached from a visible parent); UNION drops repeats, so a cycle in bad data ends.
DESCENDANTS_SQL = (
    "WITH RECURSIVE down(id) AS ("
    "SELECT id FROM {s}.documents WHERE parent_id = %(key)s AND ts < %(as_of)s "
    "UNION SELECT d.id FROM {s}.documents d JOIN down ON d.parent_id = down.id "
    "WHERE d.ts < %(as_of)s) "
    f"SELECT {DOC_FIELDS} FROM {{s}}.documents WHERE id IN (SELECT id FROM down) "
    "AND id <> %(key)s AND ts < %(as_of)s ORDER BY ts, id LIMIT %(limit)s"
)
ANCESTOR_SQL = READ_SQL  # one parent at a time: the chain is short, and a cycle must end it
_VECTOR_SQL = (
    "SELECT ord, -(embedding <#> %(q)s)::float8 AS score FROM {s}.documents "
    "WHERE ts < %(as_of)s{f} ORDER BY score DESC, ord LIMIT %(k)s"
)
_UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_ASCII_LOWER_SOURCE = f"translate(source, '{_UPPER}', '{_UPPER.lower()}')"


def filter_sql(filters: SearchFilter | None) -> tuple[str, dict[str, Any]]:
    """`` AND ...`` conditions on the documents' columns for ``filters`` (the rules of
    ``SearchFilter.matches``), and their parameters; ``("", {})`` for no filter."""
    if filters is None or filters.is_empty():
        return "", {}
    conds: list[str] = []
    params: dict[str, Any] = {}
    lower, upper = filters.time_range()
    if lower is not None:
        conds.append("ts >= %(f_lower)s")
        params["f_lower"] = lower
    if upper is not None:
        conds.append("ts < %(f_upper)s")
        params["f_upper"] = upper
    if filters.doc_type is not None:
        op = "<>" if filters.doc_type == "comment" else "="
        conds.append(f"coalesce(parent_id, '') {op} ''")
    if filters.author is not None:
        conds.append("author = %(f_author)s")
        params["f_author"] = filters.author
    if filters.source is not None:
        want = ascii_lower(filters.source)
        conds.append(
            f"({_ASCII_LOWER_SOURCE} = %(f_source)s OR "
            f"right({_ASCII_LOWER_SOURCE}, %(f_tail_len)s) = %(f_tail)s)"
        )
        params |= {"f_source": want, "f_tail": "/" + want, "f_tail_len": len(want) + 1}
    return "".join(f" AND {c}" for c in conds), params


def vector_sql(conditions: str = "") -> str:
    """The exact vector ranking, restricted by ``conditions`` (from ``filter_sql``)."""
    return _VECTOR_SQL.replace("{f}", conditions)


# The contribution of one posting of query term {i}, written exactly as numpy evaluates
# idf * (tf * (K1 + 1.0)) / (tf + K1 * (1.0 - B + B * (len / avgdl))).
_TERM_SQL = (
    "SELECT ord, {i} AS ti, (%(idf{i})s::float8 * (tf::float8 * %(k1p1)s::float8)) / "
    "(tf::float8 + %(k1)s::float8 * (%(one_minus_b)s::float8 + %(b)s::float8 * "
    "(len::float8 / %(avgdl)s::float8))) AS c "
    "FROM {s}.postings WHERE term = %(t{i})s AND ts < %(as_of)s"
)
# A filter keeps the postings of the documents that pass it (postings hold no document fields).
_FILTERED = " AND ord IN (SELECT ord FROM {s}.documents WHERE ts < %(as_of)s{f})"


def score_sql(n_terms: int, conditions: str = "") -> str:
    """The BM25 statement for ``n_terms`` query terms (parameters ``t{i}``, ``idf{i}``, ...),
    ranking only documents that meet ``conditions`` (from ``filter_sql``)."""
    parts, score = [], "0::float8"
    only = _FILTERED.replace("{f}", conditions) if conditions else ""
    for i in range(n_terms):
        parts.append(_TERM_SQL.replace("{i}", str(i)) + only)
        # One value per (document, term), added in query-term order as numpy does.
        score = f"({score} + coalesce(max(c) FILTER (WHERE ti = {i}), 0::float8))"
    return (
        f"SELECT ord, {score} AS score FROM ({' UNION ALL '.join(parts)}) AS p "
        "GROUP BY ord ORDER BY score DESC, ord LIMIT %(k)s"
    )


# -- early termination (see ``_topk``) ---------------------------------------------------------
#
# A posting's impact ``tf / (tf + a + c * len)`` is fixed at build time (``c = K1 * B / avgdl``
# for a reference avgdl): for any cutoff, a posting's BM25 contribution is at most
# ``idf * (K1 + 1) * max(1, avgdl / ref) * impact`` (``_topk``), so postings read in impact
# order, highest first, bound every posting not yet read. The expression index serves that
# order; a statement uses it only when it spells the expression exactly as the index does, so
# the constants are spliced in as the same literals (numbers from the corpus's ``meta`` table,
# never user input).


def impact_expression(a: float, c: float) -> str:
    """The impact of a posting, exactly as its expression index is written."""
    return (
        f"(tf::float8 / ((tf::float8 + {float(a)!r}::float8) + {float(c)!r}::float8 * len::float8))"
    )


def impact_top_sql(impact: str, n_terms: int) -> str:
    """Each query term's ``%(limit)s`` visible postings of highest impact (``ti, ord, ts,
    impact``), by the expression index (parameters ``t{i}``)."""
    parts = [
        f"(SELECT {i} AS ti, ord, ts, {impact} AS s FROM {{s}}.postings "
        f"WHERE term = %(t{i})s AND ts < %(as_of)s ORDER BY {impact} DESC LIMIT %(limit)s)"
        for i in range(n_terms)
    ]
    return " UNION ALL ".join(parts)


def impact_range_sql(impact: str, terms: Sequence[int]) -> str:
    """The visible postings of the given query terms with impact at least ``x{i}`` (``ord,
    ts``): a range of the expression index each."""
    parts = [
        f"SELECT ord, ts FROM {{s}}.postings WHERE term = %(t{i})s "
        f"AND {impact} >= %(x{i})s::float8 AND ts < %(as_of)s"
        for i in terms
    ]
    return " UNION ALL ".join(parts)


# The query terms' postings of given documents (ordinal and timestamp): one probe of the
# ``(term, ts)`` index per document and term, into that document's month only (the join on the
# partition key prunes the others at run time).
CANDIDATE_SQL = (
    "SELECT c.ord, p.term, p.tf, p.len FROM unnest(%(ords)s::bigint[], "
    "%(stamps)s::timestamptz[]) AS c(ord, ts) JOIN {s}.postings p ON p.ts = c.ts "
    "AND p.ord = c.ord WHERE p.term = ANY(%(terms)s) AND p.ts < %(as_of)s"
)


def check_schema(schema: str) -> str:
    """``schema`` if it is a plain lowercase SQL identifier (it is spliced into statements)."""
    if not _SCHEMA.fullmatch(schema):
        raise ValueError(f"schema {schema!r}: use lowercase letters, digits and underscores")
    return schema


def document_of(row: Sequence[Any]) -> Document:
    keys = ("id", "timestamp", "title", "text", "source", "url", "thread_id", "author")
    return Document(**dict(zip(keys, row[:8], strict=True)), parent_id=row[8])
