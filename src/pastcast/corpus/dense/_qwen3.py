"""The papers' embedders, served by any OpenAI-compatible ``/v1/embeddings`` server:
Qwen3-Embedding-8B (Forecast-Dojo A.1-A.2, 4096-d) and Qwen3-Embedding-0.6B (Hindcast 3.2,
1024-d). ``qwen3-embedding-8b`` (the address from ``PASTCAST_EMBEDDING_URL``) or
``qwen3-embedding-8b:URL[?option=value&...]``; options ``model``, ``task`` and the remote
embedder's. Documents are embedded as they are, a query with the model card's instruction
``Instruct: {task}\nQuery:{query}``; a server whose vectors are not of the model's dimension is
refused naming it. See docs/corpus.md ("Embeddings from anywhere")."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

from pastcast.corpus.dense._embedders import F32, Embedder
from pastcast.corpus.dense._remote import RemoteEmbedder, remote_embedder, split_options
from pastcast.errors import FieldError

__all__ = ["EMBEDDING_URL_ENV", "QWEN3_MODELS", "QWEN3_TASK", "Qwen3Embedder", "Qwen3Model"]

EMBEDDING_URL_ENV = "PASTCAST_EMBEDDING_URL"
"""Where a paper's embedder is served when its name gives no address."""

QWEN3_TASK = "Given a web search query, retrieve relevant passages that answer the query"
"""The model card's retrieval task, the default of the query instruction."""


@dataclass(frozen=True)
class Qwen3Model:
    name: str
    """pastcast's name of the model (the registered embedder)."""
    served: str
    """The name servers load it by (its Hugging Face id)."""
    dimension: int


QWEN3_MODELS = {
    m.name: m
    for m in (
        Qwen3Model("qwen3-embedding-8b", "Qwen/Qwen3-Embedding-8B", 4096),
        Qwen3Model("qwen3-embedding-0.6b", "Qwen/Qwen3-Embedding-0.6B", 1024),
    )
}


class Qwen3Embedder:
    """A Qwen3 embedding model behind a server: documents as they are, queries with the
    instruction, every vector checked for the model's dimension."""

    def __init__(self, model: Qwen3Model, remote: RemoteEmbedder, task: str = QWEN3_TASK) -> None:
        if not task.strip():
            raise ValueError(f"{model.name}: the query instruction's task is empty")
        self.name = model.name
        self.model = model
        self.task = task
        self.remote = remote

    def __repr__(self) -> str:
        return f"Qwen3Embedder({self.name!r})"

    def query_text(self, query: str) -> str:
        return f"Instruct: {self.task}\nQuery:{query}"

    def encode(self, texts: Sequence[str]) -> F32:
        vectors = self.remote.encode(texts)
        if len(texts) and vectors.shape[1] != self.model.dimension:
            raise FieldError(
                "",
                f"{self.remote.where}: {vectors.shape[1]}-d vectors where {self.model.served} "
                f"gives {self.model.dimension}: is the server serving another model?",
            )
        return vectors

    def encode_queries(self, queries: Sequence[str]) -> F32:
        return self.encode([self.query_text(q) for q in queries])

    def close(self) -> None:
        self.remote.close()


def qwen3(name: str, spec: str) -> Embedder:
    """The registered Qwen3 embedder ``name`` at ``spec`` (``URL[?option=value&...]``, or
    empty: the address from ``PASTCAST_EMBEDDING_URL``)."""
    model = QWEN3_MODELS[name]
    head, options = split_options(spec)
    url = head or os.environ.get(EMBEDDING_URL_ENV, "")
    if not url:
        raise ValueError(
            f"no server: set {EMBEDDING_URL_ENV}=http://HOST:PORT/v1 to one serving "
            f"{model.served} (vLLM, TEI or llama.cpp), or give {name}:http://HOST:PORT/v1"
        )
    task = options.pop("task", QWEN3_TASK)
    served = options.pop("model", model.served)
    return Qwen3Embedder(model, remote_embedder("openai-compatible", served, url, options), task)


def qwen3_8b(spec: str) -> Embedder:
    return qwen3("qwen3-embedding-8b", spec)


def qwen3_0_6b(spec: str) -> Embedder:
    return qwen3("qwen3-embedding-0.6b", spec)
