"""The ``postgres`` backend: a corpus in a PostgreSQL database opened by URL (registered by
reference in ``pastcast.corpus`` for the ``postgres://`` and ``postgresql://`` schemes), with
dense and hybrid retrieval over a corpus stored with embeddings: the query embedded here, ranked
by the server's exact inner product, fused with its BM25 as ``HybridIndex`` does."""

from __future__ import annotations

from datetime import datetime

from pastcast.corpus import OpenedCorpus
from pastcast.corpus._filter import SearchFilter
from pastcast.corpus._open import RETRIEVALS, one_line, split_schema
from pastcast.corpus._protocol import IndexLookups, SearchHit
from pastcast.corpus._text import tokenize
from pastcast.corpus.dense import RRF_K, Embedder, cached_queries, resolve_embedder, rrf_fuse
from pastcast.corpus.postgres._backend import PostgresBackend
from pastcast.errors import FieldError
from pastcast.records import CorpusIdentity
from pastcast.retrying import redact_url


def open_postgres(
    spec: str,
    *,
    retrieval: str = "bm25",
    schema: str | None = None,
    embedder: str | Embedder | None = None,
    depth: int = 100,
) -> OpenedCorpus:
    """A corpus in a PostgreSQL database (``postgresql://USER@HOST:PORT/DB[?schema=NAME]``):
    BM25, or dense/hybrid when it was loaded with embeddings."""
    if retrieval not in RETRIEVALS:
        raise FieldError(
            "",
            f"retrieval {retrieval!r}: unknown for a database "
            f"(choose from {', '.join(RETRIEVALS)})",
        )
    try:
        url, in_url = split_schema(spec)
    except ValueError as exc:
        raise FieldError("", f"{redact_url(spec)}: not a database URL ({exc})") from None
    if schema is not None and in_url is not None and schema != in_url:
        raise FieldError(
            "", f"{redact_url(spec)}: schema {in_url!r} in the URL, {schema!r} given as an option"
        )
    try:
        pg = PostgresBackend.connect(url, schema=in_url or schema or "pastcast")
    except ImportError as exc:
        raise FieldError(
            "",
            f"a database corpus needs the 'postgres' extra (pip install 'pastcast[postgres]'); "
            f"missing: {exc.name}",
        ) from None
    except (ConnectionError, FileNotFoundError, ValueError) as exc:
        raise FieldError("", str(exc)) from None  # the backend's messages have no password
    except Exception as exc:  # psycopg's own (a malformed URL, ...), without the password
        if not type(exc).__module__.startswith("psycopg"):
            raise
        raise FieldError("", f"{redact_url(spec)}: {one_line(exc)}") from None
    return pg if retrieval == "bm25" else _ranked_postgres(pg, retrieval, embedder, depth)


def _ranked_postgres(
    pg: PostgresBackend, retrieval: str, embedder: str | Embedder | None, depth: int
) -> OpenedCorpus:
    stored = pg.meta.get("embedder")
    try:
        if not pg.meta.get("dims"):
            raise FieldError(
                "",
                f"{pg.url}: schema {pg.schema!r} holds no embeddings, so it serves bm25 only "
                "(load it with 'pastcast corpus build ... --backend postgres --embedder NAME')",
            )
        if embedder is None and stored is None:
            raise FieldError(
                "",
                f"{pg.url}: schema {pg.schema!r} does not name the model of its embeddings; "
                "give the embedder",
            )
        # the model's name, not the spec's: a served model is named without its address
        model = resolve_embedder(embedder if embedder is not None else str(stored))
        if stored is not None and model.name != stored:
            raise FieldError(
                "",
                f"{pg.url}: schema {pg.schema!r} was embedded with {stored!r}, not {model.name!r}",
            )
        dense = PostgresDense(pg, model)
    except BaseException:
        pg.close()
        raise
    return dense if retrieval == "dense" else PostgresHybrid(dense, depth=depth)


class _Lookups(IndexLookups):
    pg: PostgresBackend

    def close(self) -> None:
        self.pg.close()


class PostgresDense(_Lookups):
    """Exact dense search in the database: top ``k`` by inner product, ties by id."""

    def __init__(self, pg: PostgresBackend, embedder: Embedder, *, query_cache: int = 1024):
        self.pg = self.index = pg
        self.embedder = embedder
        self._queries = cached_queries(embedder, query_cache)

    def ranked(
        self, query: str, as_of: datetime, k: int, filters: SearchFilter | None = None
    ) -> list[tuple[int, float]]:
        """Top-``k`` (ordinal, inner product) of the text query, embedded here."""
        if k <= 0 or not query.strip():
            return []
        vector = self._queries(query)[0].tolist()
        return self.pg.vector_ranked(vector, as_of, k, filters=filters)

    def search(
        self, query: str, *, as_of: datetime, k: int = 10, filters: SearchFilter | None = None
    ) -> list[SearchHit]:
        terms = list(dict.fromkeys(tokenize(query)))
        return self.pg.hits(self.ranked(query, as_of, k, filters), terms, as_of, filters)

    def identity(self) -> CorpusIdentity:
        base = self.pg.identity()
        options = {**base.options, "embedder": self.embedder.name, "exact": True}
        return base.model_copy(update={"retrieval": "dense", "options": options})


class PostgresHybrid(_Lookups):
    def __init__(self, dense: PostgresDense, *, depth: int = 100) -> None:
        self.dense = dense
        self.pg = self.index = dense.pg
        self.depth = depth

    def search(
        self, query: str, *, as_of: datetime, k: int = 10, filters: SearchFilter | None = None
    ) -> list[SearchHit]:
        depth = max(self.depth, k)
        terms = list(dict.fromkeys(tokenize(query)))
        bm25 = [o for o, _ in self.pg.score(terms, as_of, depth, filters)]
        dense = [o for o, _ in self.dense.ranked(query, as_of, depth, filters)]
        # the ordinal is the id's rank in the database, so ties fall to the lower ordinal
        return self.pg.hits(rrf_fuse(bm25, dense, k, int), terms, as_of, filters)

    def identity(self) -> CorpusIdentity:
        dense = self.dense.identity()
        options = {**dense.options, "rrf_k": RRF_K, "depth": self.depth}
        return dense.model_copy(update={"retrieval": "hybrid", "options": options})
