"""The ``sharded`` backend: an index directory's month shards on a Dask cluster, opened by a
``dask://`` URL (registered by reference in ``pastcast.corpus``)."""

from __future__ import annotations

from pastcast.corpus import OpenedCorpus, one_line
from pastcast.corpus.sharded._sharded import ShardedCorpus
from pastcast.errors import FieldError

__all__ = ["open_sharded"]


def open_sharded(spec: str, *, retrieval: str = "bm25", shards: int | None = None) -> OpenedCorpus:
    """An index directory's month shards on the workers of a Dask cluster
    (``dask://HOST:PORT?index=PATH[&shards=N]``; extra ``scale``): BM25 equal to the index's."""
    if retrieval != "bm25":
        raise FieldError("", f"retrieval {retrieval!r}: a sharded corpus serves bm25 only")
    try:
        return ShardedCorpus.connect(spec, shards=shards)
    except ImportError as exc:
        raise FieldError(
            "",
            f"a sharded corpus needs the 'scale' extra (pip install 'pastcast[scale]'); "
            f"missing: {exc.name}",
        ) from None
    except (OSError, ValueError) as exc:
        raise FieldError("", one_line(exc)) from None
