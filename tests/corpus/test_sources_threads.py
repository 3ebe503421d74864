"""Thread and author look-ups of the embedded index never return a document at or after the
cutoff, and say the same thing for unknown and future ids."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pastcast.corpus import DocumentNotVisible, ThreadedBackend
from pastcast.corpus.embedded import EmbeddedIndex
from pastcast.records import Document

T0 = datetime(2024, 1, 31, 12, tzinfo=UTC)


def post(i: str, minutes: int, thread: str, author: str, parent: str | None = None) -> Document:
    return Document(
        id=i,
        timestamp=T0 + timedelta(minutes=minutes),
        title=f"title {i}",
        text=f"text of {i} about the ceasefire",
        thread_id=thread,
        author=author,
        parent_id=parent,
    )


# A thread spanning a month boundary (two partitions), with a later comment and a reply.
DOCS = [
    post("s1", 0, "s1", "alice"),
    post("c1", 10, "s1", "bob", "s1"),
    post("c2", 20, "s1", "carol", "c1"),
    post("c3", 24 * 60, "s1", "bob", "s1"),  # next day, next month
    post("s2", 30, "s2", "bob"),
    post("late", 5 * 24 * 60, "s3", "bob"),  # a thread that starts later
]


@pytest.fixture(params=["memory", "disk", "disk-rebuilt-maps"])
def index(request: pytest.FixtureRequest, tmp_path: Path) -> EmbeddedIndex:
    if request.param == "memory":
        return EmbeddedIndex.in_memory(DOCS)
    built = EmbeddedIndex.build(DOCS, tmp_path / "idx")
    assert (tmp_path / "idx" / "threads" / "manifest.json").is_file()
    if request.param == "disk-rebuilt-maps":  # an index saved without maps computes them
        import shutil

        shutil.rmtree(tmp_path / "idx" / "threads")
    return EmbeddedIndex.open(built.path or tmp_path / "idx")


def at(minutes: int) -> datetime:
    return T0 + timedelta(minutes=minutes)


def test_is_a_threaded_backend(index: EmbeddedIndex) -> None:
    assert isinstance(index, ThreadedBackend)
    assert index.has_threads()
    assert not EmbeddedIndex.in_memory([Document(id="x", timestamp=T0, text="t")]).has_threads()


def test_thread_hides_future_comments(index: EmbeddedIndex) -> None:
    assert [d.id for d in index.thread("s1", as_of=at(15))] == ["s1", "c1"]
    assert [d.id for d in index.thread("s1", as_of=at(24 * 60 + 1))] == ["s1", "c1", "c2", "c3"]
    assert [d.id for d in index.thread("s1", as_of=at(24 * 60 + 1), limit=2)] == ["s1", "c1"]


def test_cutoff_exactly_at_a_comment(index: EmbeddedIndex) -> None:
    assert [d.id for d in index.thread("s1", as_of=at(20))] == ["s1", "c1"]
    assert [d.id for d in index.thread("s1", as_of=at(20) + timedelta(microseconds=1))][-1] == "c2"
    with pytest.raises(DocumentNotVisible):
        index.post("c2", as_of=at(20))
    assert index.post("c2", as_of=at(21)).id == "c2"


def test_author_posts_hide_later_posts(index: EmbeddedIndex) -> None:
    assert [d.id for d in index.author_posts("bob", as_of=at(10))] == []
    assert [d.id for d in index.author_posts("bob", as_of=at(31))] == ["c1", "s2"]
    late = at(10 * 24 * 60)
    assert [d.id for d in index.author_posts("bob", as_of=late)] == ["c1", "s2", "c3", "late"]
    assert [d.id for d in index.author_posts("bob", as_of=late, limit=2)] == ["c3", "late"]
    assert index.author_posts("nobody", as_of=late) == []
    with pytest.raises(ValueError, match="limit"):
        index.author_posts("bob", as_of=late, limit=0)


def test_unknown_and_future_threads_say_the_same(index: EmbeddedIndex) -> None:
    cutoff = at(60)
    with pytest.raises(DocumentNotVisible) as future:
        index.thread("s3", as_of=cutoff)
    with pytest.raises(DocumentNotVisible) as unknown:
        index.thread("zz", as_of=cutoff)
    assert str(future.value).replace("s3", "ID") == str(unknown.value).replace("zz", "ID")
    with pytest.raises(DocumentNotVisible) as future_post:
        index.post("late", as_of=cutoff)
    with pytest.raises(DocumentNotVisible) as unknown_post:
        index.post("nope", as_of=cutoff)
    assert str(future_post.value).replace("late", "ID") == str(unknown_post.value).replace(
        "nope", "ID"
    )


_threads = st.sampled_from(["t1", "t2", "t3"])
_authors = st.sampled_from(["a", "b", "c", "d"])


@settings(max_examples=40, deadline=None)
@given(
    rows=st.lists(st.tuples(st.integers(0, 60 * 24 * 40), _threads, _authors), max_size=30),
    cut=st.integers(-10, 60 * 24 * 41),
    limit=st.integers(1, 40),
)
def test_lookups_equal_a_filter_of_the_whole_corpus(
    rows: list[tuple[int, str, str]], cut: int, limit: int
) -> None:
    docs = [post(f"d{i}", m, t, a) for i, (m, t, a) in enumerate(rows)]
    index = EmbeddedIndex.in_memory(docs)
    cutoff = at(cut)
    visible = sorted((d for d in docs if d.timestamp < cutoff), key=lambda d: (d.timestamp, d.id))
    for thread in ["t1", "t2", "t3"]:
        expected = [d.id for d in visible if d.thread_id == thread][:limit]
        if expected:
            assert [d.id for d in index.thread(thread, as_of=cutoff, limit=limit)] == expected
        else:
            with pytest.raises(DocumentNotVisible):
                index.thread(thread, as_of=cutoff, limit=limit)
    for author in ["a", "b", "c", "d"]:
        expected = [d.id for d in visible if d.author == author][-limit:]
        got = index.author_posts(author, as_of=cutoff, limit=limit)
        assert [d.id for d in got] == expected
        assert all(d.timestamp < cutoff for d in got)
