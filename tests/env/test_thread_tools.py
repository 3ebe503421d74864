"""The thread tools: offered only for threaded corpora, bound to the step's cutoff, logged with
the ids they exposed (which then become readable)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from _tiny import ListBackend, tiny_documents
from pastcast.corpus.embedded import EmbeddedIndex
from pastcast.env import EnvConfig, Toolbox, ToolError
from pastcast.records import Document

T0 = datetime(2024, 5, 1, tzinfo=UTC)


def doc(i: str, minutes: int, thread: str | None, author: str | None, text: str) -> Document:
    return Document(
        id=i,
        timestamp=T0 + timedelta(minutes=minutes),
        title=f"about {i}",
        text=text,
        thread_id=thread,
        author=author,
        parent_id=None if thread in (None, i) else thread,
    )


DOCS = [
    doc("s1", 0, "s1", "alice", "Rocket launch scheduled for Friday"),
    doc("c1", 5, "s1", "bob", "Weather looks good for the launch"),
    doc("c2", 50, "s1", "bob", "Launch succeeded, rocket in orbit"),  # after the cutoff
    doc("s2", 20, "s2", "bob", "Another thread on rocket engines"),
    doc("s3", 90, "s3", "bob", "Post-launch analysis of the rocket"),  # after the cutoff
]
CUTOFF = T0 + timedelta(minutes=50)  # exactly c2's timestamp: c2 is not visible


def toolbox(docs: list[Document] = DOCS) -> Toolbox:
    return Toolbox(EmbeddedIndex.in_memory(docs), CUTOFF, EnvConfig())


def test_tools_offered_only_for_threaded_corpora() -> None:
    assert [s.name for s in toolbox().specs()] == [
        "search",
        "read",
        "thread",
        "author_posts",
        "ancestors",
        "descendants",
    ]
    flat = [d.model_copy(update={"thread_id": None}) for d in DOCS]
    assert [s.name for s in toolbox(flat).specs()] == ["search", "read"]
    listed = Toolbox(ListBackend(tiny_documents()), CUTOFF, EnvConfig())  # type: ignore[arg-type]
    assert [s.name for s in listed.specs()] == ["search", "read"]
    with pytest.raises(ToolError, match="unknown or unavailable"):
        listed.call("thread", {"doc_id": "d1"})


def test_thread_hides_comments_at_or_after_the_cutoff() -> None:
    tools = toolbox()
    hits = tools.search("rocket launch", top_k=10)
    assert "c2" not in {h.id for h in hits} and "s1" in {h.id for h in hits}
    listing = tools.call("thread", {"doc_id": "s1"})
    assert [r["id"] for r in listing] == ["s1", "c1"]
    assert listing[1]["author"] == "bob" and listing[1]["parent_id"] == "s1"
    last = tools.calls[-1]
    assert last.name == "thread" and last.ok and last.doc_ids == ("s1", "c1")


def test_author_posts_hide_later_posts_and_become_readable() -> None:
    tools = toolbox()
    with pytest.raises(ToolError, match="not returned by a search"):
        tools.read("s2")
    listing = tools.call("author_posts", {"author": "bob", "limit": 5})
    assert [r["id"] for r in listing] == ["c1", "s2"]
    assert tools.calls[-1].doc_ids == ("c1", "s2")
    assert tools.read("s2").id == "s2"
    assert [r["id"] for r in tools.call("thread", {"doc_id": "s2"})] == ["s2"]
    assert tools.author_posts("nobody") == []


def test_thread_refuses_unshown_future_and_unknown_ids_alike() -> None:
    tools = toolbox()
    with pytest.raises(ToolError, match="not returned by a tool"):
        tools.thread("s1")  # visible, but not shown in this step
    tools._shown.update({"c2", "zz"})  # as if a faulty tool had shown them
    with pytest.raises(ToolError) as future:
        tools.thread("c2")
    with pytest.raises(ToolError) as unknown:
        tools.thread("zz")
    assert str(future.value).replace("c2", "X") == str(unknown.value).replace("zz", "X")
    with pytest.raises(ToolError, match="needs an author"):
        tools.author_posts("  ")
    failed = [c for c in tools.calls if not c.ok]
    assert len(failed) == 4 and all(c.doc_ids == () for c in failed)


def test_thread_of_a_document_without_thread() -> None:
    docs = [*DOCS, doc("n1", 1, None, "dora", "A plain news item on the rocket")]
    tools = toolbox(docs)
    tools.search("plain news item", top_k=3)
    with pytest.raises(ToolError, match="not part of a thread"):
        tools.thread("n1")
