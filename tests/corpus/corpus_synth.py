"""Small synthetic corpora for the corpus tests (importable: this folder is on sys.path)."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

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
