"""The ``dense`` and ``hybrid`` backends of an index directory (registered by reference in
``pastcast.corpus``) and embedders by name: ``resolve_embedder``, and the model of the vectors an
index keeps (``recorded_embedder``)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

from pastcast import safejson
from pastcast.corpus._directory import open_index
from pastcast.corpus.dense._dense import DenseIndex
from pastcast.corpus.dense._embedders import DEFAULT_EMBEDDER, Embedder, embedders
from pastcast.corpus.dense._hybrid import HybridIndex
from pastcast.errors import FieldError
from pastcast.retrying import ProviderFailure, redact

__all__ = ["open_dense", "open_hybrid", "recorded_embedder", "resolve_embedder"]


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
    """Exact dense search over an index directory (embeddings computed once, kept there, or
    ``vectors`` computed elsewhere: a ``.npy`` with its ids file, or Parquet by document id);
    ``nprobe``: approximate (faiss IVF trained only on documents before the cutoff, this many
    lists probed, the candidates re-scored exactly) once the first month reaching ``ivf_min``
    documents is wholly admitted; exact before. Without ``embedder``, the model of the vectors
    kept in the index when they are of one model only (the corpus's recorded query model), else
    the default."""
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
