"""The search tool's filter block and the reply-walking tools (ancestors, descendants), as a
model calls them: validated arguments, the step's cutoff always in force, refusals logged."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from _tiny import ListBackend, tiny_documents
from pastcast.corpus import SearchFilter, SearchHit
from pastcast.corpus.embedded import EmbeddedIndex
from pastcast.env import EnvConfig, Toolbox, ToolError
from pastcast.records import Document

T0 = datetime(2024, 5, 1, tzinfo=UTC)


def doc(i: str, minutes: int, parent: str | None, author: str, source: str, text: str) -> Document:
    return Document(
        id=i,
        timestamp=T0 + timedelta(minutes=minutes),
        title=f"about {i}",
        text=text,
        source=source,
        thread_id="p1",
        author=author,
        parent_id=parent,
    )


# p1 <- c1 <- c2 <- c4 (c4 after the cutoff); p1 <- c3 (after the cutoff) <- c5
DOCS = [
    doc("p1", 0, None, "alice", "reddit/r/politics", "Rocket launch scheduled for Friday"),
    doc("c1", 5, "p1", "bob", "reddit/r/politics", "Rocket weather looks good"),
    doc("c2", 10, "c1", "carol", "reddit/r/politics", "Rocket fuel was loaded early"),
    doc("c3", 70, "p1", "bob", "reddit/r/politics", "Rocket launch succeeded"),
    doc("c4", 80, "c2", "dan", "reddit/r/politics", "Rocket in orbit now"),
    doc("c5", 40, "c3", "erin", "reddit/r/politics", "Rocket reply to a later comment"),
    doc("n1", 20, None, "", "news/wire", "Rocket makers report earnings"),
]
CUTOFF = T0 + timedelta(minutes=60)


def toolbox(max_tool_calls: int = 400) -> Toolbox:
    config = EnvConfig(max_tool_calls=max_tool_calls)
    return Toolbox(EmbeddedIndex.in_memory(DOCS), CUTOFF, config)


def ids(rows: list[dict[str, object]]) -> list[object]:
    return [r["id"] for r in rows]


def test_filters_narrow_the_search_and_are_logged() -> None:
    tools = toolbox()
    everything = ids(tools.call("search", {"query": "rocket", "top_k": 20}))
    assert set(everything) == {"p1", "c1", "c2", "c5", "n1"}  # c3, c4: after the cutoff
    posts = tools.call("search", {"query": "rocket", "doc_type": "submission"})
    assert set(ids(posts)) == {"p1", "n1"}
    comments = tools.call(
        "search", {"query": "rocket", "doc_type": "comment", "source": "politics"}
    )
    assert set(ids(comments)) == {"c1", "c2", "c5"}
    assert ids(tools.call("search", {"query": "rocket", "author": "carol"})) == ["c2"]
    assert ids(
        tools.call("search", {"query": "rocket", "source": "r/Politics", "author": "alice"})
    ) == ["p1"]
    assert tools.calls[-1].arguments == {
        "query": "rocket",
        "top_k": 10,
        "source": "r/Politics",
        "author": "alice",
    }
    assert ids(tools.call("search", {"query": "rocket", "month": "2024-04"})) == []
    assert set(ids(tools.call("search", {"query": "rocket", "since": "2024-05-01"}))) == set(
        everything
    )


def test_the_cutoff_holds_whatever_the_filters_say() -> None:
    tools = toolbox()
    late = tools.call(
        "search", {"query": "rocket orbit succeeded", "since": "2024-05-01", "month": "2024-05"}
    )
    assert "c3" not in ids(late) and "c4" not in ids(late)
    assert tools.call("search", {"query": "rocket", "since": "2024-05-02"}) == []


def test_a_bad_filter_is_a_logged_tool_error() -> None:
    tools = toolbox()
    with pytest.raises(ToolError, match="source: empty"):
        tools.call("search", {"query": "rocket", "source": " / "})
    last = tools.calls[-1]
    assert not last.ok and last.arguments == {"query": "rocket", "top_k": 10, "source": " / "}


class _SeenFilters(ListBackend):
    def __init__(self) -> None:
        super().__init__(tiny_documents())
        self.seen: list[SearchFilter | None] = []

    def search(
        self, query: str, *, as_of: datetime, k: int = 10, filters: SearchFilter | None = None
    ) -> list[SearchHit]:
        self.seen.append(filters)
        return super().search(query, as_of=as_of, k=k, filters=filters)


def test_the_backend_gets_the_filter_block_and_none_for_a_plain_search() -> None:
    backend = _SeenFilters()
    tools = Toolbox(backend, CUTOFF + timedelta(days=30), EnvConfig())  # type: ignore[arg-type]
    assert tools.call("search", {"query": "rocket"})
    assert tools.call("search", {"query": "rocket", "author": "alice"}) == []
    assert backend.seen == [None, SearchFilter(author="alice")]


def test_read_shows_the_author_for_author_posts() -> None:
    tools = toolbox()
    tools.search("weather")
    read = tools.call("read", {"doc_id": "c1"})
    assert read["author"] == "bob"
    assert ids(tools.call("author_posts", {"author": read["author"]})) == ["c1"]  # c3 later


def test_ancestors_walk_up_to_the_post() -> None:
    tools = toolbox()
    tools.search("fuel loaded")
    assert ids(tools.call("ancestors", {"doc_id": "c2"})) == ["p1", "c1"]
    tools.search("launch scheduled")
    assert tools.call("ancestors", {"doc_id": "p1"}) == []  # a post replies to nothing
    # c5 replies to c3, which is after the cutoff: the walk stops there, saying nothing of it
    tools.search("later comment")
    assert tools.call("ancestors", {"doc_id": "c5"}) == []


def test_descendants_walk_down_through_visible_replies() -> None:
    tools = toolbox()
    tools.search("launch scheduled")
    assert ids(tools.call("descendants", {"doc_id": "p1"})) == ["c1", "c2"]  # not c3, c4, c5
    assert ids(tools.call("descendants", {"doc_id": "p1", "limit": 1})) == ["c1"]
    # the listed replies become readable and walkable in this step
    assert ids(tools.call("descendants", {"doc_id": "c1"})) == ["c2"]
    assert tools.call("read", {"doc_id": "c2"})["author"] == "carol"


def test_walks_refuse_unshown_future_and_unknown_ids_alike() -> None:
    tools = toolbox()
    for name in ("ancestors", "descendants"):
        with pytest.raises(ToolError, match="was not returned by a tool"):
            tools.call(name, {"doc_id": "c4"})
    assert [c.ok for c in tools.calls] == [False, False]
    flat = Toolbox(
        EmbeddedIndex.in_memory([d.model_copy(update={"thread_id": None}) for d in DOCS]),
        CUTOFF,
        EnvConfig(),
    )
    with pytest.raises(ToolError, match="unknown or unavailable tool 'ancestors'"):
        flat.call("ancestors", {"doc_id": "c1"})
