"""The papers' embedders, Qwen3-Embedding-8B and -0.6B, served by any OpenAI-compatible
``/v1/embeddings`` server: names, options and the query instruction in docs/corpus.md
("Embeddings from anywhere")."""

from __future__ import annotations

import os
from collections.abc import Sequence
from functools import partial

from pastcast.corpus.dense._embedders import F32, Embedder
from pastcast.corpus.dense._remote import RemoteEmbedder, remote_embedder, split_options
from pastcast.errors import FieldError

EMBEDDING_URL_ENV = "PASTCAST_EMBEDDING_URL"
"""Where a paper's embedder is served when its name gives no address."""

QWEN3_TASK = "Given a web search query, retrieve relevant passages that answer the query"
"""The model card's retrieval task, the default of the query instruction."""


QWEN3_MODELS = {  # the registered name: the name servers load it by (its Hugging Face id), dim
    "qwen3-embedding-8b": ("Qwen/Qwen3-Embedding-8B", 4096),
    "qwen3-embedding-0.6b": ("Qwen/Qwen3-Embedding-0.6B", 1024),
}


class Qwen3Embedder:
    """A Qwen3 embedding model behind a server: documents as they are, queries with the
    instruction, every vector checked for the model's dimension."""

    def __init__(self, name: str, remote: RemoteEmbedder, task: str = QWEN3_TASK) -> None:
        if not task.strip():
            raise ValueError(f"{name}: the query instruction's task is empty")
        self.name, self.remote, self.task = name, remote, task
        self.served, self.dimension = QWEN3_MODELS[name]

    def __repr__(self) -> str:
        return f"Qwen3Embedder({self.name!r})"

    def encode(self, texts: Sequence[str]) -> F32:
        vectors = self.remote.encode(texts)
        if len(texts) and vectors.shape[1] != self.dimension:
            raise FieldError(
                "",
                f"{self.remote.where}: {vectors.shape[1]}-d vectors where {self.served} "
                f"gives {self.dimension}: is the server serving another model?",
            )
        return vectors

    def encode_queries(self, queries: Sequence[str]) -> F32:
        return self.encode([f"Instruct: {self.task}\nQuery:{q}" for q in queries])

    def close(self) -> None:
        self.remote.close()


def qwen3(name: str, spec: str) -> Embedder:
    """The Qwen3 embedder ``name`` at ``spec`` (``URL[?option=value&...]``, or empty)."""
    default_served = QWEN3_MODELS[name][0]
    head, options = split_options(spec)
    url = head or os.environ.get(EMBEDDING_URL_ENV, "")
    if not url:
        raise ValueError(
            f"no server: set {EMBEDDING_URL_ENV}=http://HOST:PORT/v1 to one serving "
            f"{default_served} (vLLM, TEI or llama.cpp), or give {name}:http://HOST:PORT/v1"
        )
    task = options.pop("task", QWEN3_TASK)
    served = options.pop("model", default_served)
    return Qwen3Embedder(name, remote_embedder("openai-compatible", served, url, options), task)


qwen3_8b = partial(qwen3, "qwen3-embedding-8b")
qwen3_0_6b = partial(qwen3, "qwen3-embedding-0.6b")
