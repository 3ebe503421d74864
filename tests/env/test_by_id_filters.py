"""The filter block on the by-id tools (read, thread, author_posts, ancestors, descendants), as
Hindcast's Table 2 tools share it with the search: it narrows what they return, never the
cutoff, and never which ids they accept."""

from __future__ import annotations

from typing import Any

import pytest
from test_filter_and_walk_tools import CUTOFF, DOCS, ids, toolbox

from _tiny import ListBackend
from pastcast.env import TOOLS, EnvConfig, Toolbox, ToolError

FILTER_FIELDS = {"doc_type", "source", "month", "since"}


def test_every_by_id_tool_offers_the_filter_block() -> None:
    schemas = {t.name: t.spec.parameters["properties"] for t in TOOLS}
    for name in ("read", "thread", "ancestors", "descendants"):
        assert FILTER_FIELDS | {"author"} <= set(schemas[name]), name
    assert set(schemas["author_posts"]) >= FILTER_FIELDS  # its author is the filter's


def test_a_read_that_does_not_match_is_a_tool_error() -> None:
    tools = toolbox()
    tools.search("weather")
    assert tools.call("read", {"doc_id": "c1", "doc_type": "comment"})["author"] == "bob"
    with pytest.raises(ToolError, match="does not match the filter"):
        tools.call("read", {"doc_id": "c1", "doc_type": "submission"})
    with pytest.raises(ToolError, match="does not match the filter"):
        tools.call("read", {"doc_id": "c1", "author": "alice"})
    with pytest.raises(ToolError, match="does not match the filter"):
        tools.call("read", {"doc_id": "c1", "month": "2024-04"})
    assert tools.call("read", {"doc_id": "c1", "source": "politics", "since": "2024-05-01"})
    last = tools.calls[-2]
    assert not last.ok and last.doc_ids == ()


def test_listings_return_only_matching_documents() -> None:
    tools = toolbox()
    tools.search("launch scheduled")
    # the fixture's documents share one thread id, n1 included
    assert ids(tools.call("thread", {"doc_id": "p1"})) == ["p1", "c1", "c2", "n1", "c5"]
    comments = ids(tools.call("thread", {"doc_id": "p1", "doc_type": "comment"}))
    assert comments == ["c1", "c2", "c5"]
    assert ids(tools.call("thread", {"doc_id": "p1", "source": "news/wire"})) == ["n1"]
    assert ids(tools.call("thread", {"doc_id": "p1", "author": "carol"})) == ["c2"]
    # the limit counts matching documents, not the first ones listed
    assert ids(tools.call("thread", {"doc_id": "p1", "doc_type": "comment", "limit": 1})) == ["c1"]
    assert ids(tools.call("descendants", {"doc_id": "p1", "author": "carol", "limit": 1})) == ["c2"]
    assert ids(tools.call("ancestors", {"doc_id": "c2", "doc_type": "submission"})) == ["p1"]
    assert ids(tools.call("author_posts", {"author": "bob", "doc_type": "submission"})) == []
    assert ids(tools.call("author_posts", {"author": "bob", "source": "politics"})) == ["c1"]
    assert tools.call("descendants", {"doc_id": "p1", "month": "2024-04"}) == []


def test_a_bad_filter_on_a_by_id_tool_is_a_logged_tool_error() -> None:
    tools = toolbox()
    tools.search("weather")
    with pytest.raises(ToolError, match="source: empty"):
        tools.call("read", {"doc_id": "c1", "source": " / "})
    assert not tools.calls[-1].ok


def _refusal(tools: Toolbox, name: str, args: dict[str, Any]) -> str:
    with pytest.raises(ToolError) as caught:
        tools.call(name, args)
    return str(caught.value)


@pytest.mark.parametrize(
    "flt",
    [
        {"doc_type": "comment"},
        {"source": "politics"},
        {"since": "2024-05-01"},
        {"month": "2024-05"},
    ],
)
def test_a_filter_never_widens_the_cutoff_or_the_shown_ids(flt: dict[str, str]) -> None:
    calls = [("read", "doc_id"), ("thread", "doc_id"), ("ancestors", "doc_id")]
    calls.append(("descendants", "doc_id"))
    for name, key in calls:
        # unshown (c4 is also after the cutoff): the same refusal, filter or not
        plain, filtered = toolbox(), toolbox()
        assert _refusal(plain, name, {key: "c4"}) == _refusal(filtered, name, {key: "c4"} | flt)
        # shown by some slip, still after the cutoff: the backend refuses it alike
        plain, filtered = toolbox(), toolbox()
        plain._shown.add("c4")
        filtered._shown.add("c4")
        assert _refusal(plain, name, {key: "c4"}) == _refusal(filtered, name, {key: "c4"} | flt)
    # an author's later posts stay out whatever the filter
    tools = toolbox()
    assert "c3" not in ids(tools.call("author_posts", {"author": "bob"} | flt))


def test_the_filter_works_on_a_backend_that_cannot_filter_searches() -> None:
    backend = ListBackend([d.model_copy(update={"thread_id": None}) for d in DOCS])
    tools = Toolbox(backend, CUTOFF, EnvConfig())  # type: ignore[arg-type]
    tools.search("weather")
    shown = tools.calls[-1].doc_ids
    assert "c1" in shown
    with pytest.raises(ToolError, match="does not match the filter"):
        tools.call("read", {"doc_id": "c1", "doc_type": "submission"})
    assert tools.call("read", {"doc_id": "c1", "doc_type": "comment"})["id"] == "c1"
