"""The month kernel (``build_from_rows``: a month's words numbered a month at a time) against the
tokenizer applied document by document: each ordinal's postings are exactly its own terms, so a
token counted for a neighbour (a later document's word seen at an earlier cutoff) cannot pass."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from pastcast.corpus import STOPWORDS, tokenize
from pastcast.corpus._identity import document_line
from pastcast.corpus.embedded._arrays import (
    build_arrays,
    build_from_rows,
    ordered_rows,
    rows_of_lines,
)
from pastcast.records import Document

# words, stopwords, case, accents, a ligature, sharp s, full-width letters, digits, punctuation
# and runs of spaces (the splits that give empty words), lines and tabs
PIECES = ["gaza", "Gaza", "ceasefire", "élan", "ﬁre", "Straße", "ＡＢＣ", "x_y", "42", "İstanbul"]
PIECES += [*sorted(STOPWORDS)[:6], " ", "  ", ", ", ".", "\n", "\t", "–", ""]
TEXT = st.lists(st.sampled_from(PIECES), max_size=12).map("".join)
T0 = datetime(2024, 3, 1, tzinfo=UTC)


def _docs(texts: list[tuple[str, str, int]]) -> list[Document]:
    # few distinct instants: ties broken by id, as the ordinals are
    return [
        Document(id=f"d{i:03d}", timestamp=T0 + timedelta(seconds=s), title=t, text=x)
        for i, (t, x, s) in enumerate(texts)
    ]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(TEXT, TEXT, st.integers(0, 3)), min_size=1, max_size=25))
def test_each_ordinal_holds_exactly_its_own_terms(texts: list[tuple[str, str, int]]) -> None:
    docs = _docs(texts)
    built = build_arrays(reversed(docs))  # any order in: ordinals by (timestamp, id)
    ordered = sorted(docs, key=lambda d: (d.timestamp, d.id))
    assert list(built.ids) == [d.id for d in ordered]
    terms = list(built.vocab)
    found: list[Counter[str]] = [Counter() for _ in ordered]
    offsets = np.asarray(built.term_offsets)
    for tid, term in enumerate(terms):
        lo, hi = int(offsets[tid]), int(offsets[tid + 1])
        assert hi > lo  # every term of the vocabulary has postings
        for ordinal, tf in zip(built.post_ord[lo:hi], built.post_tf[lo:hi], strict=True):
            found[int(ordinal)][term] += int(tf)
    for ordinal, d in enumerate(ordered):
        want = Counter(tokenize(f"{d.title}\n{d.text}"))
        assert found[ordinal] == want
        assert int(built.doc_len[ordinal]) == sum(want.values())
    # term ids in first-seen order over the ordinals
    seen = list(dict.fromkeys(t for d in ordered for t in tokenize(f"{d.title}\n{d.text}")))
    assert terms == seen


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(TEXT, TEXT, st.integers(0, 3)), min_size=1, max_size=15))
def test_rows_read_from_lines_build_what_documents_build(
    texts: list[tuple[str, str, int]],
) -> None:
    docs = _docs(texts)
    from_lines = build_from_rows(ordered_rows(rows_of_lines([document_line(d) for d in docs])))
    from_docs = build_arrays(docs)
    for name in ("timestamps", "doc_len", "term_offsets", "post_ord", "post_tf", "hit_offsets"):
        assert np.array_equal(getattr(from_lines, name), getattr(from_docs, name)), name
    assert bytes(from_lines.store) == bytes(from_docs.store)
    assert from_lines.manifest == from_docs.manifest
