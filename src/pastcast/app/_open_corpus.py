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
    if isinstance(given.get("embedder"), str):
        _check_served(given["embedder"])
    return given


def _check_served(name: str) -> None:
    """An embedder served elsewhere (a paper's Qwen3, an OpenAI-compatible one) is built, which
    sends nothing, so that a missing address is refused before any index is built or embedded;
    a local model is only loaded when the corpus opens."""
    from pastcast.corpus.dense import embedders, resolve_embedder

    kind = name if name in embedders else name.partition(":")[0]
    if kind in embedders and embedders.get(kind).meta.get("takes_spec"):
        with within("embedder"):
            built = resolve_embedder(name)
        close = getattr(built, "close", None)
        if callable(close):
            close()


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
