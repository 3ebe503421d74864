"""Opening a corpus by spec for a replay or a command: ``open_corpus``, the application's face of
``pastcast.corpus.open_backend`` (which imports only the backend it opens)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pastcast.corpus import OpenedCorpus, is_database_url, open_backend, retrieval_modes
from pastcast.errors import FieldError, within

__all__ = ["check_search_options", "open_corpus"]


def check_search_options(retrieval: str, **options: Any) -> dict[str, Any]:
    """The ``options`` of ``open_corpus`` that are given (not None), once ``retrieval`` is
    known and no dense-only option goes with bm25: checked before anything is built for them
    (``FieldError`` naming the field)."""
    if retrieval not in retrieval_modes():
        raise FieldError(
            "retrieval", f"expected one of {', '.join(retrieval_modes())}, got {retrieval!r}"
        )
    given = {k: v for k, v in options.items() if v is not None}
    for dense_only in ("embedder", "nprobe", "vectors"):
        if dense_only in given and retrieval == "bm25":
            raise FieldError(dense_only, "is only for retrieval dense or hybrid")
    return given


def open_corpus(
    spec: str | Path, retrieval: str = "bm25", *, field: str = "corpus", **options: Any
) -> OpenedCorpus:
    """The corpus at ``spec`` (an index directory or a database URL) for ``retrieval``;
    ``options`` (``embedder``, ``nprobe``, ``schema``) that are None are left out, and
    ``schema`` is dropped for a directory. ``FieldError`` naming ``retrieval`` or ``field``."""
    given = check_search_options(retrieval, **options)
    if not is_database_url(spec):
        given.pop("schema", None)  # a directory has no schema
    with within(field):
        return open_backend(spec, retrieval, **given)
