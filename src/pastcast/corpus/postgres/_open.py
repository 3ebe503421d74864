"""The ``postgres`` backend: a corpus in a PostgreSQL database opened by URL (registered by
reference in ``pastcast.corpus`` for the ``postgres://`` and ``postgresql://`` schemes)."""

from __future__ import annotations

from pastcast.corpus import OpenedCorpus
from pastcast.corpus._open import RETRIEVALS
from pastcast.corpus._url import one_line, redact_url, split_schema
from pastcast.corpus.dense import Embedder, resolve_embedder
from pastcast.corpus.postgres._backend import PostgresBackend
from pastcast.corpus.postgres._ranked import PostgresDense, PostgresHybrid
from pastcast.errors import FieldError

__all__ = ["open_postgres"]


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
    if retrieval == "bm25":
        return pg
    return _ranked_postgres(pg, retrieval, embedder, depth)


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
