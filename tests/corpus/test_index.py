from __future__ import annotations

import json
import math
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from corpus_synth import START, WORDS, make_docs
from hypothesis import given, settings
from hypothesis import strategies as st

from pastcast.corpus import CorpusBackend, DocumentNotVisible, check_as_of_equivalence, tokenize
from pastcast.corpus.embedded import EmbeddedIndex
from pastcast.records import Document


def reference_bm25(
    docs: list[Document], query: str, as_of: datetime, k: int
) -> list[tuple[str, float]]:
    """Textbook BM25 over the visible documents only, written independently of the index."""
    visible = [d for d in docs if d.timestamp < as_of]
    if not visible:
        return []
    toks = {d.id: tokenize(f"{d.title}\n{d.text}") for d in visible}
    avgdl = sum(len(t) for t in toks.values()) / len(visible)
    n = len(visible)
    scores: dict[str, float] = {}
    for term in dict.fromkeys(tokenize(query)):
        df = sum(1 for t in toks.values() if term in t)
        if df == 0:
            continue
        idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
        for doc_id, t in toks.items():
            tf = Counter(t)[term]
            if tf:
                norm = 1.2 * (1 - 0.75 + 0.75 * len(t) / avgdl)
                scores[doc_id] = scores.get(doc_id, 0.0) + idf * tf * 2.2 / (tf + norm)
    ranked = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))
    return ranked[:k]


def test_tokenizer_rules() -> None:
    assert tokenize("The Élection in São-Paulo, 2024!") == ["élection", "são", "paulo", "2024"]
    assert tokenize("ＡＢＣ") == ["abc"]  # NFKC folds full-width letters
    assert tokenize("the and of") == []


def test_scores_match_a_reference_implementation(docs: list[Document]) -> None:
    index = EmbeddedIndex.in_memory(docs)
    assert isinstance(index, CorpusBackend)
    for as_of in (START + timedelta(days=3), START + timedelta(days=31, hours=5)):
        for query in ("election ceasefire", "w1 w2 w3 storm", "tariff"):
            got = [(h.id, h.score) for h in index.search(query, as_of=as_of, k=15)]
            want = reference_bm25(docs, query, as_of, 15)
            assert [i for i, _ in got] == [i for i, _ in want]
            assert [s for _, s in got] == pytest.approx([s for _, s in want], rel=1e-12)


def test_ties_are_broken_by_id() -> None:
    ts = datetime(2024, 5, 1, tzinfo=UTC)
    docs = [Document(id=i, timestamp=ts, title="", text="same words") for i in ("b", "c", "a")]
    later = Document(id="0", timestamp=ts + timedelta(hours=1), title="", text="same words")
    hits = EmbeddedIndex.in_memory([*docs, later]).search("same", as_of=ts + timedelta(days=1))
    assert [h.id for h in hits] == ["0", "a", "b", "c"]
    assert len({h.score for h in hits}) == 1


@settings(max_examples=30, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    offset_s=st.integers(-86400, 62 * 86400),
    query=st.lists(st.sampled_from([*WORDS, "absent"]), min_size=1, max_size=5),
    k=st.integers(1, 30),
)
def test_as_of_equals_index_of_the_past_only(
    seed: int, offset_s: int, query: list[str], k: int
) -> None:
    docs = make_docs(80, seed)
    cutoff = START + timedelta(seconds=offset_s)
    full = EmbeddedIndex.in_memory(docs)
    past = EmbeddedIndex.in_memory([d for d in docs if d.timestamp < cutoff])
    q = " ".join(query)
    a = full.search(q, as_of=cutoff, k=k)
    b = past.search(q, as_of=cutoff, k=k)
    assert a == b  # ids, order, exact scores, snippets
    assert all(h.timestamp < cutoff for h in a)
    assert (
        full.count_before(cutoff)
        == past.count_before(cutoff)
        == len([d for d in docs if d.timestamp < cutoff])
    )


def test_as_of_equivalence_check(docs: list[Document]) -> None:
    report = check_as_of_equivalence(EmbeddedIndex.in_memory, docs, n_cutoffs=15, seed=3)
    assert report.comparisons == 15 * report.queries > 0
    assert report.violations == 0 and report.nonempty > 0, report.first_violations


def test_read_hides_future_and_unknown_ids_alike(docs: list[Document]) -> None:
    index = EmbeddedIndex.in_memory(docs)
    doc = docs[0]
    assert index.read(doc.id, as_of=doc.timestamp + timedelta(microseconds=1)) == doc
    with pytest.raises(DocumentNotVisible) as future:
        index.read(doc.id, as_of=doc.timestamp)
    with pytest.raises(DocumentNotVisible) as unknown:
        index.read("nope", as_of=doc.timestamp)
    assert str(future.value).replace(repr(doc.id), "X") == str(unknown.value).replace("'nope'", "X")


def test_snippet_centres_on_the_first_match() -> None:
    text = "filler " * 100 + "Ceasefire agreed " + "more " * 100
    doc = Document(id="x", timestamp=START, title="t", text=text)
    [hit] = EmbeddedIndex.in_memory([doc]).search("ceasefire", as_of=START + timedelta(days=1))
    assert "Ceasefire agreed" in hit.snippet
    assert len(hit.snippet) <= 202


def test_build_open_round_trip(tmp_path: Path, docs: list[Document]) -> None:
    out = tmp_path / "index"
    built = EmbeddedIndex.build(docs, out)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["doc_count"] == len(docs) and manifest["version"] == 3
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no tmp left over
    reopened = EmbeddedIndex.open(out)
    mem = EmbeddedIndex.in_memory(docs)
    cutoff = START + timedelta(days=20)
    for q in ("election", "w5 merger"):
        assert (
            reopened.search(q, as_of=cutoff)
            == mem.search(q, as_of=cutoff)
            == built.search(q, as_of=cutoff)
        )
    assert reopened.read(docs[3].id, as_of=datetime(2030, 1, 1, tzinfo=UTC)) == docs[3]
    with pytest.raises(FileExistsError):
        EmbeddedIndex.build(docs, out)
    # Same content, same hash; replacing keeps a valid index.
    again = EmbeddedIndex.build(reversed(docs), out, overwrite=True)
    assert again.manifest["content_sha256"] == manifest["content_sha256"]


def test_build_rejects_duplicate_ids(tmp_path: Path) -> None:
    doc = Document(id="a", timestamp=START, title="", text="x")
    with pytest.raises(ValueError, match="duplicate document id 'a'"):
        EmbeddedIndex.build([doc, doc], tmp_path / "i")
    assert not (tmp_path / "i").exists()


def test_empty_index_and_before_everything(tmp_path: Path, docs: list[Document]) -> None:
    empty = EmbeddedIndex.build([], tmp_path / "e")
    assert empty.search("election", as_of=START) == []
    assert empty.count_before(START) == 0
    index = EmbeddedIndex.in_memory(docs)
    assert index.search("election", as_of=START) == []
    assert index.search("", as_of=START + timedelta(days=90)) == []
