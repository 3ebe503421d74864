"""Tools bound to one step's cutoff. The cutoff is fixed when the toolbox is built, so every
search, read and price look-up goes through the backend's own cutoff check. Each tool is one
typed ``@tool`` method (``_toolkit``); ``TOOLS`` lists their definitions."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from datetime import date, datetime
from typing import Annotated, Any, TypedDict, Unpack

from pydantic import Field, ValidationError
from pydantic_core import to_jsonable_python

from pastcast.corpus import (
    CorpusBackend,
    DocType,
    DocumentNotVisible,
    SearchFilter,
    ThreadedBackend,
)
from pastcast.cutoff import cutoff_for_day
from pastcast.env._config import EnvConfig
from pastcast.env._toolkit import (
    BudgetExceeded,
    DocumentText,
    ListedPost,
    MarketDay,
    PythonResult,
    Requirement,
    SearchResult,
    ToolDef,
    ToolError,
    tool,
    tool_defs,
)
from pastcast.models import ToolSpec
from pastcast.records import DailyBelief, Document, ToolCall
from pastcast.validation import problems

THREAD_LIMIT = 50
AUTHOR_LIMIT = 20
_DATE = "%Y-%m-%d %H:%M"
MONTH_PATTERN = r"^[0-9]{4}-(0[1-9]|1[0-2])$"  # no \d: llama.cpp's grammar converter rejects it
FILTER_SCAN = 1000
"""How many documents a filtered listing reads from the backend before keeping the matching
ones (a listing's ``limit`` counts matching documents)."""


class Filters(TypedDict, total=False):
    """The filter block's arguments, shared by the search and the by-id tools: each takes them
    as ``**given`` (``author_posts`` has an ``author`` of its own, so not this one)."""

    doc_type: Annotated[
        DocType | None, Field(description="only posts and articles (submission), or only comments")
    ]
    source: Annotated[
        str | None, Field(description="only this source, e.g. a subreddit name, as read shows it")
    ]
    author: Annotated[str | None, Field(description="only this author's documents")]
    month: Annotated[
        str | None, Field(pattern=MONTH_PATTERN, description="only this month, YYYY-MM")
    ]
    since: Annotated[date | None, Field(description="only documents from this day on, YYYY-MM-DD")]


def filter_block(tool: str, filters: Mapping[str, Any]) -> SearchFilter:
    """A tool's filter arguments as the filter block; a bad one is a tool error naming it."""
    since = filters.get("since")
    try:
        return SearchFilter.model_validate(
            {**filters, "since": None if since is None else cutoff_for_day(since)}
        )
    except ValidationError as exc:
        raise ToolError(f"{tool}: " + "; ".join(problems(exc))) from None


class Toolbox:
    """The agent's tools for one forecast step.

    Holds the corpus backend and the cutoff privately; exposes only tool methods. Every call is
    logged as a ``ToolCall`` (with the document ids it exposed) and counted against the budget.
    The by-id tools take only documents shown in this step; their optional filters (as in
    search) keep only the matching documents (docs/tools.md).
    """

    def __init__(
        self,
        backend: CorpusBackend | None,
        cutoff: datetime,
        config: EnvConfig,
        market: tuple[DailyBelief, ...] | None = None,
        python_runner: Callable[[str], dict[str, Any]] | None = None,
    ) -> None:
        self._backend = backend
        self._cutoff = cutoff
        self._config = config
        self._market = market if config.market_access else None
        self._python = python_runner if config.python_tool else None
        self._shown: set[str] = set()
        self.calls: list[ToolCall] = []
        self._threads: ThreadedBackend | None = None
        if backend is not None and isinstance(backend, ThreadedBackend) and backend.has_threads():
            self._threads = backend

    @property
    def cutoff(self) -> datetime:
        return self._cutoff

    def tools(self) -> tuple[ToolDef, ...]:
        """The definitions of the tools available at this step."""
        offered: dict[Requirement, object] = {
            "corpus": self._backend,
            "threads": self._threads,
            "market": self._market,
            "python": self._python,
        }
        return tuple(t for t in TOOLS if offered[t.requires] is not None)

    def specs(self) -> tuple[ToolSpec, ...]:
        """The tools available at this step, as offered to a model."""
        return tuple(t.spec for t in self.tools())

    def _log(
        self,
        name: str,
        args: dict[str, Any],
        result: Any,
        started: float,
        doc_ids: tuple[str, ...] = (),
        error: str | None = None,
    ) -> None:
        self.calls.append(
            ToolCall(
                name=name,
                arguments=to_jsonable_python(args),
                result=to_jsonable_python(result),
                ok=error is None,
                error=error,
                doc_ids=doc_ids,
                elapsed_s=time.perf_counter() - started,
            )
        )

    def _run_tool(self, name: str, args: dict[str, Any], body: Callable[[], Any]) -> Any:
        """Every tool call, once: charge the budget, time it, log it with the ids of the
        documents its result shows (they become readable in this step), or log its refusal."""
        if len(self.calls) >= self._config.max_tool_calls:
            raise BudgetExceeded("tool", self._config.max_tool_calls)
        started = time.perf_counter()
        try:
            try:
                result = body()
            except DocumentNotVisible as exc:  # the backend's refusal, as the tool's
                raise ToolError(str(exc)) from None
        except ToolError as exc:
            self._log(name, args, None, started, error=str(exc))
            raise
        items = result if isinstance(result, list) else [result]
        ids = tuple(i.id for i in items if isinstance(i, SearchResult | DocumentText | ListedPost))
        self._shown.update(ids)
        self._log(name, args, result, started, doc_ids=ids)
        return result

    def call(self, name: str, arguments: Mapping[str, Any]) -> Any:
        """Dispatch a tool call by name (for model-driven agents): the arguments are validated
        against the tool's signature, and the result comes back in its JSON form. A refusal,
        including invalid arguments, raises ``ToolError`` (counted against the budget)."""
        found = next((t for t in self.tools() if t.name == name), None)
        try:
            if found is None:
                raise ToolError(f"unknown or unavailable tool {name!r}")
            args = found.validate(arguments)
        except ToolError as exc:
            refusal = exc

            def refuse() -> None:
                raise refusal

            self._run_tool(name, dict(arguments), refuse)
            raise  # not reached: the refusal is raised by the line above
        method: Callable[..., Any] = getattr(self, name)
        return to_jsonable_python(method(**args))

    @tool("corpus")
    def search(
        self,
        query: Annotated[str, Field(description="search terms")],
        top_k: Annotated[int, Field(ge=1, le=20, description="number of results")] = 10,
        **given: Unpack[Filters],
    ) -> list[SearchResult]:
        """Search the news archive. Only documents published before today are searched.

        At most ``max_search_k`` results, whatever ``top_k`` asks. The optional filters (the
        filter block, docs/tools.md) narrow what is ranked; the cutoff holds whatever they say."""
        backend = self._backend
        if backend is None:
            raise ToolError("no corpus at this step")
        if not query.strip():
            raise ToolError("search needs a non-empty query")
        filters = filter_block("search", given)
        k = max(1, min(top_k, self._config.max_search_k))
        narrowed = None if filters.is_empty() else filters  # None: the backends' fast path
        hits = backend.search(query, as_of=self._cutoff, k=k, filters=narrowed)
        return [
            SearchResult(
                id=h.id,
                title=h.title,
                date=h.timestamp.strftime(_DATE),
                score=round(h.score, 4),
                snippet=h.snippet[: self._config.snippet_chars],
            )
            for h in hits
        ]

    @tool("corpus")
    def read(
        self,
        doc_id: Annotated[str, Field(description="id of a document from search results")],
        **given: Unpack[Filters],
    ) -> DocumentText:
        """Read the full text of a document returned by an earlier search."""
        filters = filter_block("read", given)
        if self._backend is None:
            raise ToolError("no corpus at this step")
        if doc_id not in self._shown:
            raise ToolError(f"document {doc_id!r} was not returned by a search in this step")
        doc = self._backend.read(doc_id, as_of=self._cutoff)
        if not filters.matches(doc):
            shown = filters.model_dump(exclude_none=True).items()
            described = ", ".join(
                f"{k}={v.date().isoformat() if k == 'since' else v}" for k, v in shown
            )
            raise ToolError(f"document {doc_id!r} does not match the filter ({described})")
        return DocumentText(
            id=doc.id,
            title=doc.title,
            date=doc.timestamp.strftime(_DATE),
            source=doc.source,
            author=doc.author,
            text=doc.text[: self._config.read_max_chars],
        )

    def _thread_tools(self, doc_id: str) -> ThreadedBackend:
        """The threaded backend, for a document shown in this step."""
        if self._threads is None:
            raise ToolError("threads are not available at this step")
        if doc_id not in self._shown:
            raise ToolError(f"document {doc_id!r} was not returned by a tool in this step")
        return self._threads

    @tool("threads")
    def thread(
        self,
        doc_id: Annotated[str, Field(description="id of a post or comment you were shown")],
        limit: Annotated[
            int, Field(ge=1, le=THREAD_LIMIT, description="most posts to list")
        ] = THREAD_LIMIT,
        **given: Unpack[Filters],
    ) -> list[ListedPost]:
        """List the discussion thread of a document shown earlier (the post and its comments
        written before today, oldest first)."""
        filters = filter_block("thread", given)
        threads = self._thread_tools(doc_id)
        k = max(1, min(limit, THREAD_LIMIT))
        post = threads.post(doc_id, as_of=self._cutoff)
        if post.thread_id is None:
            raise ToolError(f"document {doc_id!r} is not part of a thread")
        docs = threads.thread(post.thread_id, as_of=self._cutoff, limit=_scan(k, filters))
        return self._listing(docs, filters, k)

    @tool("threads")
    def author_posts(  # type: ignore[misc]  # its own ``author`` stands for the filter's
        self,
        author: Annotated[str, Field(description="author name")],
        limit: Annotated[
            int, Field(ge=1, le=AUTHOR_LIMIT, description="most posts to list")
        ] = AUTHOR_LIMIT,
        **given: Unpack[Filters],
    ) -> list[ListedPost]:
        """List an author's most recent posts and comments written before today."""
        filters = filter_block("author_posts", given)
        if self._threads is None:
            raise ToolError("threads are not available")
        if not author.strip():
            raise ToolError("author_posts needs an author")
        k = max(1, min(limit, AUTHOR_LIMIT))
        docs = self._threads.author_posts(author, as_of=self._cutoff, limit=_scan(k, filters))
        return self._listing(docs, filters, k)

    @tool("threads")
    def ancestors(
        self,
        doc_id: Annotated[str, Field(description="id of a comment you were shown")],
        **given: Unpack[Filters],
    ) -> list[ListedPost]:
        """List what a comment replies to, from the thread's post down to its direct parent
        (written before today)."""
        filters = filter_block("ancestors", given)
        threads = self._thread_tools(doc_id)
        return self._listing(threads.ancestors(doc_id, as_of=self._cutoff), filters)

    @tool("threads")
    def descendants(
        self,
        doc_id: Annotated[str, Field(description="id of a post or comment you were shown")],
        limit: Annotated[
            int, Field(ge=1, le=THREAD_LIMIT, description="most replies to list")
        ] = THREAD_LIMIT,
        **given: Unpack[Filters],
    ) -> list[ListedPost]:
        """List the replies to a post or comment, the replies to those and so on (written
        before today, oldest first)."""
        filters = filter_block("descendants", given)
        threads = self._thread_tools(doc_id)
        k = max(1, min(limit, THREAD_LIMIT))
        docs = threads.descendants(doc_id, as_of=self._cutoff, limit=_scan(k, filters))
        return self._listing(docs, filters, k)

    def _listing(
        self, docs: list[Document], filters: SearchFilter, limit: int | None = None
    ) -> list[ListedPost]:
        """The listed documents matching ``filters`` (the filter block's one rule,
        ``SearchFilter.matches``), at most ``limit`` of them."""
        if not filters.is_empty():
            docs = [d for d in docs if filters.matches(d)]
        return [
            ListedPost(
                id=d.id,
                title=d.title,
                date=d.timestamp.strftime(_DATE),
                author=d.author,
                parent_id=d.parent_id,
                text=d.text[: self._config.snippet_chars],
            )
            for d in docs[:limit]
        ]

    @tool("market")
    def market_history(self) -> list[MarketDay]:
        """Daily market probabilities of this question for days that ended before today."""
        if self._market is None:
            raise ToolError("market access is off in this setting")
        return [MarketDay(day=b.day, probs=dict(b.probs)) for b in self._market]

    @tool("python")
    def python(
        self, code: Annotated[str, Field(description="Python code; print what you need")]
    ) -> PythonResult:
        """Run Python code for computation (no network, no files). Returns stdout/stderr."""
        if self._python is None:
            raise ToolError("the python tool is not available in this setting")
        return PythonResult.model_validate(self._python(code))


def _scan(limit: int, filters: SearchFilter) -> int:
    """How many documents a listing asks the backend for: ``limit``, or more when filtered."""
    return limit if filters.is_empty() else max(limit, FILTER_SCAN)


TOOLS: tuple[ToolDef, ...] = tool_defs(Toolbox)
"""Every tool the environment defines, in the order models are offered them."""
