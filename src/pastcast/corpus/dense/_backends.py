"""The ``dense`` and ``hybrid`` backends of an index directory (registered by reference in
``pastcast.corpus``), hybrid retrieval (BM25 and dense rankings, both as of the cutoff, fused by
reciprocal rank) and embedders by name: ``resolve_embedder``, and the model of the vectors an
index keeps (``recorded_embedder``)."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any

from pastcast import safejson
from pastcast.corpus._filter import SearchFilter
from pastcast.corpus._open import open_index
from pastcast.corpus._protocol import IndexLookups, SearchHit
from pastcast.corpus.dense._dense import DenseIndex
from pastcast.corpus.dense._embedders import DEFAULT_EMBEDDER, Embedder, embedders
from pastcast.corpus.embedded import EmbeddedIndex
from pastcast.errors import FieldError
from pastcast.records import CorpusIdentity
from pastcast.retrying import ProviderFailure, redact


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
    plain = embedder in embedders and embedders.get(embedder).meta.get("takes_spec")
    if plain and not embedders.get(embedder).meta.get("spec_optional"):
        raise FieldError("", f"embedder {embedder!r}: give it as {embedder}:MODEL...")
    shown = redact(embedder)  # a server's URL may hold a password
    try:
        if by_spec:
            return embedders.build(kind, rest)
        if plain:  # a spec it may go without (the address from the environment)
            return embedders.build(embedder, "")
        return embedders.build(embedder)
    except FieldError as exc:
        raise FieldError("", redact(str(exc))) from None
    except ValueError as exc:  # a malformed KIND:SPEC, a key variable not set
        raise FieldError("", f"embedder {shown!r}: {redact(str(exc))}") from None
    except ImportError as exc:
        raise FieldError(
            "",
            f"embedder {shown!r} needs the 'dense' extra (pip install 'pastcast[dense]'); "
            f"missing: {exc.name}",
        ) from None


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
    """Dense search over an index directory, exact unless ``nprobe`` asks for approximate.

    Options: docs/corpus.md ("Dense and hybrid retrieval"); without ``embedder``, the model of
    the vectors kept in the index (``recorded_embedder``)."""
    index = open_index(spec)
    if importlib.util.find_spec("faiss") is None:
        raise FieldError(
            "",
            "retrieval 'dense' needs the 'dense' extra (pip install 'pastcast[dense]'); "
            "missing: faiss",
        )
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
    except (FieldError, ProviderFailure) as exc:
        raise FieldError("", str(exc)) from None


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


RRF_K = 60


def rrf_fuse(
    first: Sequence[int], second: Sequence[int], k: int, tie_rank: Callable[[int], int]
) -> list[tuple[int, float]]:
    """Reciprocal-rank fusion of two rankings of ordinals: the top ``k`` (ordinal, fused score),
    ties ordered by ``tie_rank`` (the id's rank)."""
    fused: dict[int, float] = {}
    for ranking in (first, second):
        for rank, o in enumerate(ranking, start=1):
            fused[o] = fused.get(o, 0.0) + 1.0 / (RRF_K + rank)
    return sorted(fused.items(), key=lambda p: (-p[1], tie_rank(p[0])))[:k]


class HybridIndex(IndexLookups):
    """BM25 and dense rankings fused by reciprocal rank. With ``concurrent`` the dense leg runs
    in a worker thread (faiss and numpy release the GIL): the latency of the slower leg, not the
    sum."""

    index: EmbeddedIndex

    def __init__(self, dense: DenseIndex, *, depth: int = 100, concurrent: bool = True) -> None:
        self.dense = dense
        self.index = dense.index
        self.depth = depth
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="dense") if concurrent else None

    def search(
        self, query: str, *, as_of: datetime, k: int = 10, filters: SearchFilter | None = None
    ) -> list[SearchHit]:
        """Both legs rank only the documents that pass ``filters``, then are fused."""
        n = self.index.count_before(as_of)
        depth = max(self.depth, k)
        allowed = self.index.filter_mask(filters, n)
        terms = self.index.query_terms(query)
        dense_leg = partial(self.dense.ranked, query, n, depth, allowed=allowed)
        running = self._pool.submit(dense_leg) if self._pool is not None else None
        ords, _ = self.index.score(terms, n, depth, allowed=allowed)
        dense_ranked = running.result() if running is not None else dense_leg()
        id_rank = self.index.id_rank
        best = rrf_fuse(ords.tolist(), [o for o, _ in dense_ranked], k, lambda o: int(id_rank[o]))
        return self.index.hits(best, query, as_of, filters)

    def identity(self) -> CorpusIdentity:
        dense = self.dense.identity()
        options = {**dense.options, "rrf_k": RRF_K, "depth": self.depth}
        return dense.model_copy(
            update={"backend": "hybrid", "retrieval": "hybrid", "options": options}
        )

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False)
            self._pool = None
        self.dense.close()
