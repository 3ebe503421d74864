"""Small synthetic corpora for the corpus tests (importable: this folder is on sys.path)."""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import numpy as np

from pastcast.corpus import tokenize
from pastcast.corpus.dense import embedders
from pastcast.records import Document

WORDS = [f"w{i}" for i in range(40)] + ["election", "ceasefire", "tariff", "merger", "storm"]
START = datetime(2024, 1, 30, tzinfo=UTC)


def make_docs(n: int, seed: int = 0, *, span_days: int = 60) -> list[Document]:
    """``n`` documents over ``span_days`` days, many on exact midnights and shared instants."""
    rng = random.Random(seed)
    docs = []
    for i in range(n):
        if rng.random() < 0.3:
            ts = START + timedelta(days=rng.randrange(span_days))  # exactly midnight
        else:
            ts = START + timedelta(seconds=rng.randrange(span_days * 86400))
        title = " ".join(rng.choices(WORDS, k=rng.randint(1, 4)))
        text = " ".join(rng.choices(WORDS, k=rng.randint(3, 40)))
        docs.append(Document(id=f"doc-{i:05d}", timestamp=ts, title=title, text=text))
    rng.shuffle(docs)
    return docs


class HashEmbedder:
    """A deterministic bag-of-words embedder: fast, no model, still a real vector space."""

    name = "hash-64"

    def __init__(self) -> None:
        self.calls = 0

    def encode(self, texts: Sequence[str]) -> np.ndarray:  # type: ignore[type-arg]
        self.calls += 1
        out = np.zeros((len(texts), 64), dtype=np.float32)
        for row, text in enumerate(texts):
            for tok in tokenize(text):
                out[row, hashlib.blake2b(tok.encode(), digest_size=1).digest()[0] % 64] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1.0, norms)


# Registered so that specs and the command line can name it: ``--embedder hash-64``.
embedders.add(HashEmbedder.name, HashEmbedder, replace=True)


SOURCES = ["reddit/r/politics", "reddit/r/worldnews", "reddit/r/CryptoCurrency", "wcep", ""]


def with_threads(docs: Sequence[Document], seed: int = 0) -> list[Document]:
    """``docs`` with most of them in a few threads and by a few authors (posts and comments),
    with sources, and reply links within each thread: the earliest document of a thread is its
    post, the others reply to an earlier one, a few to a later one or to an unknown id (bad data
    the walks must survive)."""
    rng = random.Random(seed)
    out = []
    for doc in docs:
        update: dict[str, str] = {}
        if rng.random() < 0.7:
            update["thread_id"] = f"thread-{rng.randrange(12)}"
        if rng.random() < 0.8:
            update["author"] = f"author-{rng.randrange(9)}"
        out.append(doc.model_copy(update=update))
    links = random.Random(seed + 1)  # a second stream: the threads and authors above unchanged
    by_thread: dict[str, list[int]] = {}
    for i, doc in enumerate(out):
        if doc.thread_id:
            by_thread.setdefault(doc.thread_id, []).append(i)
    parents: dict[int, str] = {}
    for members in by_thread.values():
        members.sort(key=lambda i: (out[i].timestamp, out[i].id))
        for pos, i in enumerate(members[1:], start=1):
            draw = links.random()
            if draw < 0.05:
                parents[i] = "doc-unknown-parent"
            elif draw < 0.12 and pos + 1 < len(members):
                parents[i] = out[members[links.randrange(pos + 1, len(members))]].id
            else:  # mostly near the end of the thread so far: deep reply chains
                parents[i] = out[members[max(0, pos - 1 - int(links.expovariate(0.5)))]].id
    return [
        doc.model_copy(update={"source": links.choice(SOURCES), "parent_id": parents.get(i)})
        for i, doc in enumerate(out)
    ]
