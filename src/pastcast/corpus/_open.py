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

from pathlib import Path
from typing import Any

from pastcast.corpus._protocol import OpenedCorpus
from pastcast.errors import FieldError
from pastcast.registry import Registry

__all__ = [
    "DATABASE_SCHEMES",
    "RETRIEVALS",
    "SHARDED_SCHEME",
    "backends",
    "is_database_url",
    "open_backend",
    "retrieval_modes",
]

DATABASE_SCHEMES = ("postgres://", "postgresql://")
RETRIEVALS = ("bm25", "dense", "hybrid")
"""The retrieval modes of the built-in backends (for a directory: the backend's name)."""

SHARDED_SCHEME = "dask://"
"""The scheme of a corpus sharded over a Dask cluster (``dask://HOST:PORT?index=PATH``)."""

backends: Registry[OpenedCorpus] = Registry("backend", "pastcast.backends")
# The built-in backends, by reference: opening one imports its own sub-package only.
backends.add("bm25", "pastcast.corpus._directory:open_index")
backends.add("dense", "pastcast.corpus.dense._backends:open_dense")
backends.add("hybrid", "pastcast.corpus.dense._backends:open_hybrid")
backends.add("postgres", "pastcast.corpus.postgres._open:open_postgres", schemes=DATABASE_SCHEMES)
backends.add("sharded", "pastcast.corpus.sharded._open:open_sharded", schemes=(SHARDED_SCHEME,))


def is_database_url(spec: str | Path) -> bool:
    return str(spec).startswith(DATABASE_SCHEMES)


def retrieval_modes() -> tuple[str, ...]:
    """The registered backends that search an index directory, by name."""
    return tuple(e.name for e in backends.entries() if not e.meta.get("schemes"))


def open_backend(spec: str | Path, retrieval: str = "bm25", **options: Any) -> OpenedCorpus:
    """Open the corpus at ``spec`` (index directory or database URL) for ``retrieval``.

    ``options`` go to the backend's factory (``embedder``, ``nprobe``, ``schema``, ...); raises
    ``FieldError`` with a one-line message for anything that cannot be opened.
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
