"""The papers' embedders: Qwen3-Embedding-8B (Forecast-Dojo A.1-A.2: 4096-d, L2-normalised,
exact inner product, also the judge's dense leg) and Qwen3-Embedding-0.6B (Hindcast 3.2: 1024-d,
cosine in pgvector), served by any OpenAI-compatible ``/v1/embeddings`` server (vLLM, TEI,
llama.cpp's ``--embedding``).

``qwen3-embedding-8b`` (the server's address from ``PASTCAST_EMBEDDING_URL``) or
``qwen3-embedding-8b:URL[?option=value&...]``; the same for ``qwen3-embedding-0.6b``. Options:
``model`` (the name the server serves it under; the Hugging Face id by default), ``task`` (the
query instruction's task) and the remote embedder's own (``batch_size``, ``concurrency``, ...).
The name is the model's alone, so a corpus embedded through one server is searched through
another, or through the same one at a new address.

Documents are embedded as they are; a query is embedded with the model's instruction,
``Instruct: {task}\\nQuery:{query}``, as the model card prescribes for retrieval. Vectors are
L2-normalised, so the inner product every dense backend ranks by is the cosine; a server whose
vectors are not of the model's dimension is refused, naming it.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import parse_qsl, urlencode

from pastcast.corpus.dense._embedders import F32, Embedder
from pastcast.corpus.dense._remote import RemoteEmbedder, _remote
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
    head, sep, query = spec.partition("?")
    url = head or os.environ.get(EMBEDDING_URL_ENV, "")
    if not url:
        raise ValueError(
            f"no server: set {EMBEDDING_URL_ENV}=http://HOST:PORT/v1 to one serving "
            f"{model.served} (vLLM, TEI or llama.cpp), or give {name}:http://HOST:PORT/v1"
        )
    options = dict(parse_qsl(query, strict_parsing=True)) if sep else {}
    task = options.pop("task", QWEN3_TASK)
    served = options.pop("model", model.served)
    rest = f"{served}@{url}" + ("?" + urlencode(options) if options else "")
    remote = _remote("openai-compatible", rest)
    assert isinstance(remote, RemoteEmbedder)
    return Qwen3Embedder(model, remote, task)


def qwen3_8b(spec: str) -> Embedder:
    return qwen3("qwen3-embedding-8b", spec)


def qwen3_0_6b(spec: str) -> Embedder:
    return qwen3("qwen3-embedding-0.6b", spec)
