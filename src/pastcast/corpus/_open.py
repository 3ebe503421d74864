"""One way to open a corpus: ``open_backend(spec, retrieval, **options)`` and the ``backend``
registry behind it (docs/corpus.md, "Opening a corpus"); and the URLs of backends opened by URL,
without their password and without pastcast's own ``schema`` parameter."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit, urlunsplit

from pastcast.corpus._protocol import OpenedCorpus
from pastcast.errors import FieldError
from pastcast.registry import Registry
from pastcast.retrying import redact_url  # every client's: a URL without its password

if TYPE_CHECKING:
    from pastcast.corpus.embedded import EmbeddedIndex

DATABASE_SCHEMES = ("postgres://", "postgresql://")
RETRIEVALS = ("bm25", "dense", "hybrid")
"""The retrieval modes of the built-in backends (for a directory: the backend's name)."""

SHARDED_SCHEME = "dask://"
"""The scheme of a corpus sharded over a Dask cluster (``dask://HOST:PORT?index=PATH``)."""

backends: Registry[OpenedCorpus] = Registry("backend", "pastcast.backends")
# The built-in backends, by reference: opening one imports its own sub-package only.
backends.add(
    "bm25",
    "pastcast.corpus._open:open_index",
    description="BM25 over an index directory, with statistics as of the cutoff",
)
backends.add("dense", "pastcast.corpus.dense._backends:open_dense")
backends.add("hybrid", "pastcast.corpus.dense._backends:open_hybrid")
backends.add("postgres", "pastcast.corpus.postgres._open:open_postgres", schemes=DATABASE_SCHEMES)
backends.add("sharded", "pastcast.corpus.sharded._sharded:open_sharded", schemes=(SHARDED_SCHEME,))


def is_database_url(spec: str | Path) -> bool:
    return str(spec).startswith(DATABASE_SCHEMES)


def retrieval_modes() -> tuple[str, ...]:
    """The registered backends that search an index directory, by name."""
    return tuple(e.name for e in backends.entries() if not e.meta.get("schemes"))


def open_backend(spec: str | Path, retrieval: str = "bm25", **options: Any) -> OpenedCorpus:
    """Open the corpus at ``spec`` (index directory or URL) for ``retrieval``, ``options`` checked
    against the backend's factory; ``FieldError`` in one line for anything that cannot be opened.
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
        raise FieldError(
            "", f"retrieval {retrieval!r}: unknown (choose from {', '.join(retrieval_modes())})"
        )
    try:
        backend = backends.build(name, **args)
    except FieldError as exc:
        raise FieldError("", str(exc)) from None
    if not isinstance(backend, OpenedCorpus):
        raise FieldError(
            "",
            f"backend {name!r} returned a {type(backend).__name__}, which lacks the "
            "OpenedCorpus methods (search, read, count_before, identity, close)",
        )
    return backend


def open_index(spec: str) -> EmbeddedIndex:
    """The embedded index in the directory ``spec`` (the ``bm25`` backend; the dense backends
    open it under their vectors); ``FieldError`` in one line when there is none or it is damaged.
    """
    from pastcast.corpus.embedded import EmbeddedIndex  # opening a corpus imports its backend

    if not (Path(spec) / "manifest.json").is_file():
        raise FieldError(
            "",
            f"{spec}: not an index directory (no manifest.json; build one with "
            "'pastcast corpus build'), nor a database URL (postgresql://...)",
        )
    try:
        return EmbeddedIndex.open(spec)
    except (OSError, ValueError) as exc:
        message = str(exc)
        raise FieldError("", message if spec in message else f"{spec}: {message}") from None
    except (KeyError, TypeError, IndexError) as exc:  # a manifest or array that was damaged
        raise FieldError("", f"{spec}: a damaged index ({type(exc).__name__}: {exc})") from None


def split_schema(url: str) -> tuple[str, str | None]:
    """``url`` without a ``schema=NAME`` parameter, and NAME (None without one): the schema is
    pastcast's, not the server's, so a single URL can name a corpus inside a database."""
    parts = urlsplit(url)
    pieces = [p for p in parts.query.split("&") if p]
    schemas = [unquote(p.partition("=")[2]) for p in pieces if _key(p) == "schema"]
    if len(schemas) > 1:
        raise ValueError(f"{redact_url(url)}: the schema parameter is given twice")
    # the other parameters are passed on as written (libpq decodes them itself)
    rest = "&".join(p for p in pieces if _key(p) != "schema")
    return urlunsplit((*parts[:3], rest, parts.fragment)), (schemas[0] if schemas else None)


def one_line(exc: BaseException) -> str:
    """A server's message on one line (libpq adds indented hints on lines of their own)."""
    return "; ".join(line.strip() for line in str(exc).splitlines() if line.strip())


def _key(param: str) -> str:
    return unquote(param.partition("=")[0])
