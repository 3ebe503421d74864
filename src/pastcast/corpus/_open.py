"""One way to open a corpus: ``open_backend(spec, retrieval, **options)`` and the ``backend``
registry behind it.

A spec is an index directory, a database URL or a sharded corpus (``dask://``). For a
directory, ``retrieval`` names the registered backend that searches it (``bm25``, ``dense`` or
``hybrid``); a URL goes to the backend registered for its scheme (``postgres`` for
``postgres://`` and ``postgresql://``, ``sharded`` for ``dask://``), which takes ``retrieval``
as an argument. Options are checked against the factory's signature before
anything is opened, so a misspelt option is a one-line error naming the accepted ones.

Third-party backends register under the entry-point group ``pastcast.backends`` (see
``pastcast.registry``): a factory ``(spec, **options)`` returning an ``OpenedCorpus``, with
``schemes=(...)`` in its metadata if it is opened by URL. The conformance tests run every
registered backend through the leakage probes, so a new one needs a fixture there.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

from pastcast import safejson
from pastcast.corpus._protocol import OpenedCorpus
from pastcast.corpus.dense import (
    DEFAULT_EMBEDDER,
    DenseIndex,
    Embedder,
    EmbeddingError,
    HybridIndex,
    embedders,
)
from pastcast.corpus.embedded import BLOCK_DOCS, EmbeddedIndex
from pastcast.corpus.postgres import (
    PostgresBackend,
    PostgresDense,
    PostgresHybrid,
    one_line,
    redact_url,
    split_schema,
)
from pastcast.corpus.sharded import SCHEME as SHARDED_SCHEME
from pastcast.corpus.sharded import ShardedCorpus
from pastcast.registry import Registry, RegistryError
from pastcast.retrying import ProviderFailure, redact

__all__ = [
    "DATABASE_SCHEMES",
    "RETRIEVALS",
    "CorpusOpenError",
    "backends",
    "is_database_url",
    "open_backend",
    "resolve_embedder",
    "retrieval_modes",
]

DATABASE_SCHEMES = ("postgres://", "postgresql://")
RETRIEVALS = ("bm25", "dense", "hybrid")
"""The retrieval modes of the built-in backends (for a directory: the backend's name)."""

backends: Registry[OpenedCorpus] = Registry("backend", "pastcast.backends")


class CorpusOpenError(ValueError):
    """A corpus spec or option that cannot be opened; the message is one line, without any
    password."""


def is_database_url(spec: str | Path) -> bool:
    return str(spec).startswith(DATABASE_SCHEMES)


def retrieval_modes() -> tuple[str, ...]:
    """The registered backends that search an index directory, by name."""
    return tuple(e.name for e in backends.entries() if not e.meta.get("schemes"))


def open_backend(spec: str | Path, retrieval: str = "bm25", **options: Any) -> OpenedCorpus:
    """Open the corpus at ``spec`` (index directory or database URL) for ``retrieval``.

    ``options`` go to the backend's factory (``embedder``, ``nprobe``, ``schema``, ...); raises
    ``CorpusOpenError`` with a one-line message for anything that cannot be opened.
    """
    text = str(spec)
    by_url = [e for e in backends.entries() if text.startswith(tuple(e.meta.get("schemes", ())))]
    args: dict[str, Any] = {"spec": text, **options}
    if by_url:
        name = by_url[0].name
        args["retrieval"] = retrieval
    elif retrieval in retrieval_modes():
        name = retrieval
    else:
        raise CorpusOpenError(
            f"retrieval {retrieval!r}: unknown (choose from {', '.join(retrieval_modes())})"
        )
    try:
        backend = backends.build(name, **args)
    except RegistryError as exc:
        raise CorpusOpenError(str(exc)) from None
    if not isinstance(backend, OpenedCorpus):
        raise CorpusOpenError(
            f"backend {name!r} returned a {type(backend).__name__}, which lacks the "
            "OpenedCorpus methods (search, read, count_before, identity, close)"
        )
    return backend


def resolve_embedder(embedder: str | Embedder) -> Embedder:
    """A registered embedder by name (built now), or the given one."""
    if not isinstance(embedder, str):
        return embedder
    kind, sep, rest = embedder.partition(":")
    by_spec = (
        embedder not in embedders
        and sep
        and kind in embedders
        and embedders.get(kind).meta.get("takes_spec")
    )
    if embedder in embedders and embedders.get(embedder).meta.get("takes_spec"):
        raise CorpusOpenError(f"embedder {embedder!r}: give it as {embedder}:MODEL...")
    shown = redact(embedder)  # a server's URL may hold a password
    try:
        if by_spec:
            return embedders.build(kind, rest)
        return embedders.build(embedder)
    except RegistryError as exc:
        raise CorpusOpenError(redact(str(exc))) from None
    except ValueError as exc:  # a malformed KIND:SPEC, a key variable not set
        raise CorpusOpenError(f"embedder {shown!r}: {redact(str(exc))}") from None
    except ImportError as exc:
        raise CorpusOpenError(
            f"embedder {shown!r} needs the 'dense' extra (pip install 'pastcast[dense]'); "
            f"missing: {exc.name}"
        ) from None


def _index(spec: str, block_docs: int = BLOCK_DOCS) -> EmbeddedIndex:
    if not (Path(spec) / "manifest.json").is_file():
        raise CorpusOpenError(
            f"{spec}: not an index directory (no manifest.json; build one with "
            "'pastcast corpus build'), nor a database URL (postgresql://...)"
        )
    try:
        return EmbeddedIndex.open(spec, block_docs=block_docs)
    except (OSError, ValueError) as exc:
        message = str(exc)
        raise CorpusOpenError(message if spec in message else f"{spec}: {message}") from None
    except (KeyError, TypeError, IndexError) as exc:  # a manifest or array that was damaged
        raise CorpusOpenError(f"{spec}: a damaged index ({type(exc).__name__}: {exc})") from None


def _needs_faiss(retrieval: str) -> None:
    if importlib.util.find_spec("faiss") is None:
        raise CorpusOpenError(
            f"retrieval {retrieval!r} needs the 'dense' extra (pip install 'pastcast[dense]'); "
            "missing: faiss"
        )


@backends.register("bm25")
def open_bm25(spec: str, *, block_docs: int = BLOCK_DOCS) -> EmbeddedIndex:
    """BM25 over an index directory, with statistics as of the cutoff."""
    return _index(spec, block_docs)


@backends.register("dense")
def open_dense(
    spec: str,
    *,
    embedder: str | Embedder | None = None,
    nprobe: int | None = None,
    ivf_min: int = 1000,
    quantized_min: int | None = 10_000,
    vectors: str | None = None,
    vectors_ids: str | None = None,
    progress: bool = False,
) -> DenseIndex:
    """Exact dense search over an index directory (embeddings computed once, kept there, or
    ``vectors`` computed elsewhere: a ``.npy`` with its ids file, or Parquet by document id);
    ``nprobe``: approximate (frozen per-month IVF, this many lists probed) in months of at
    least ``ivf_min`` documents before the month of the last admitted document, which is always
    searched exactly. Without ``embedder``, the model of the vectors kept in the index when
    they are of one model only (the corpus's recorded query model), else the default."""
    index = _index(spec)
    _needs_faiss("dense")
    model = resolve_embedder(embedder if embedder is not None else recorded_embedder(spec))
    approximate: dict[str, Any] = {} if nprobe is None else {"ivf_min": ivf_min, "nprobe": nprobe}
    try:
        return DenseIndex(
            index,
            model,
            quantized_min=quantized_min,
            vectors=vectors,
            vectors_ids=vectors_ids,
            progress=progress,
            **approximate,
        )
    except (EmbeddingError, ProviderFailure) as exc:
        raise CorpusOpenError(str(exc)) from None


def recorded_embedder(spec: str | Path) -> str:
    """The model of the document vectors kept in an index directory (``dense-MODEL.json``)
    when there is exactly one, else the default embedder."""
    models = set()
    for meta in Path(spec).glob("dense-*.json"):
        try:
            model = safejson.loads(meta.read_bytes()).get("model")
        except (OSError, ValueError, AttributeError):
            continue
        if isinstance(model, str):
            models.add(model)
    return models.pop() if len(models) == 1 else DEFAULT_EMBEDDER


@backends.register("hybrid")
def open_hybrid(
    spec: str,
    *,
    embedder: str | Embedder | None = None,
    nprobe: int | None = None,
    ivf_min: int = 1000,
    quantized_min: int | None = 10_000,
    depth: int = 100,
    vectors: str | None = None,
    vectors_ids: str | None = None,
    progress: bool = False,
) -> HybridIndex:
    """BM25 and dense search over an index directory, fused by reciprocal rank."""
    dense = open_dense(
        spec,
        embedder=embedder,
        nprobe=nprobe,
        ivf_min=ivf_min,
        quantized_min=quantized_min,
        vectors=vectors,
        vectors_ids=vectors_ids,
        progress=progress,
    )
    return HybridIndex(dense, depth=depth)


@backends.register("postgres", schemes=DATABASE_SCHEMES)
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
        raise CorpusOpenError(
            f"retrieval {retrieval!r}: unknown for a database (choose from {', '.join(RETRIEVALS)})"
        )
    try:
        url, in_url = split_schema(spec)
    except ValueError as exc:
        raise CorpusOpenError(f"{redact_url(spec)}: not a database URL ({exc})") from None
    if schema is not None and in_url is not None and schema != in_url:
        raise CorpusOpenError(
            f"{redact_url(spec)}: schema {in_url!r} in the URL, {schema!r} given as an option"
        )
    try:
        pg = PostgresBackend.connect(url, schema=in_url or schema or "pastcast")
    except ImportError as exc:
        raise CorpusOpenError(
            f"a database corpus needs the 'postgres' extra (pip install 'pastcast[postgres]'); "
            f"missing: {exc.name}"
        ) from None
    except (ConnectionError, FileNotFoundError, ValueError) as exc:
        raise CorpusOpenError(str(exc)) from None  # the backend's messages have no password
    except Exception as exc:  # psycopg's own (a malformed URL, ...), without the password
        if not type(exc).__module__.startswith("psycopg"):
            raise
        raise CorpusOpenError(f"{redact_url(spec)}: {one_line(exc)}") from None
    if retrieval == "bm25":
        return pg
    return _ranked_postgres(pg, retrieval, embedder, depth)


@backends.register("sharded", schemes=(SHARDED_SCHEME,))
def open_sharded(spec: str, *, retrieval: str = "bm25", shards: int | None = None) -> OpenedCorpus:
    """An index directory's month shards on the workers of a Dask cluster
    (``dask://HOST:PORT?index=PATH[&shards=N]``; extra ``scale``): BM25 equal to the index's."""
    if retrieval != "bm25":
        raise CorpusOpenError(f"retrieval {retrieval!r}: a sharded corpus serves bm25 only")
    try:
        return ShardedCorpus.connect(spec, shards=shards)
    except ImportError as exc:
        raise CorpusOpenError(
            f"a sharded corpus needs the 'scale' extra (pip install 'pastcast[scale]'); "
            f"missing: {exc.name}"
        ) from None
    except (OSError, ValueError) as exc:
        raise CorpusOpenError(one_line(exc)) from None


def _ranked_postgres(
    pg: PostgresBackend, retrieval: str, embedder: str | Embedder | None, depth: int
) -> OpenedCorpus:
    stored = pg.meta.get("embedder")
    try:
        if not pg.meta.get("dims"):
            raise CorpusOpenError(
                f"{pg.url}: schema {pg.schema!r} holds no embeddings, so it serves bm25 only "
                "(load it with 'pastcast corpus build ... --backend postgres --embedder NAME')"
            )
        if embedder is None and stored is None:
            raise CorpusOpenError(
                f"{pg.url}: schema {pg.schema!r} does not name the model of its embeddings; "
                "give the embedder"
            )
        name = embedder if isinstance(embedder, str) else getattr(embedder, "name", None)
        if stored is not None and name is not None and name != stored:
            raise CorpusOpenError(
                f"{pg.url}: schema {pg.schema!r} was embedded with {stored!r}, not {name!r}"
            )
        model = resolve_embedder(embedder if embedder is not None else str(stored))
        dense = PostgresDense(pg, model)
    except BaseException:
        pg.close()
        raise
    return dense if retrieval == "dense" else PostgresHybrid(dense, depth=depth)
