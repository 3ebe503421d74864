"""Tools bound to one step's cutoff. The cutoff is fixed when the toolbox is built, so every
search, read and price look-up goes through the backend's own cutoff check."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime
from typing import Any

from pastcast.corpus import CorpusBackend, DocumentNotVisible, ThreadedBackend
from pastcast.env._config import EnvConfig
from pastcast.models import ToolSpec
from pastcast.records import DailyBelief, Document, ToolCall

__all__ = ["BudgetExceeded", "ToolError", "Toolbox"]


class BudgetExceeded(RuntimeError):
    """The step's tool or model budget is spent; the episode ends."""

    def __init__(self, kind: str, limit: int) -> None:
        super().__init__(f"{kind} budget of {limit} exhausted")
        self.kind = kind
        self.limit = limit


class ToolError(ValueError):
    """A tool call the environment refused (bad arguments, document not visible or not shown)."""


_SEARCH = ToolSpec(
    name="search",
    description="Search the news archive. Only documents published before today are searched.",
    parameters={
        "type": "object",
        "properties": {
            "query": {"type": "string"},
            "top_k": {"type": "integer", "minimum": 1, "maximum": 20},
        },
        "required": ["query"],
    },
)
_READ = ToolSpec(
    name="read",
    description="Read the full text of a document returned by an earlier search.",
    parameters={
        "type": "object",
        "properties": {"doc_id": {"type": "string"}},
        "required": ["doc_id"],
    },
)
_MARKET = ToolSpec(
    name="market_history",
    description="Daily market probabilities of this question for days that ended before today.",
    parameters={"type": "object", "properties": {}},
)
_PYTHON = ToolSpec(
    name="python",
    description="Run Python code for computation (no network, no files). Returns stdout/stderr.",
    parameters={
        "type": "object",
        "properties": {"code": {"type": "string"}},
        "required": ["code"],
    },
)
_THREAD = ToolSpec(
    name="thread",
    description="List the discussion thread of a document shown earlier (the post and its "
    "comments written before today, oldest first).",
    parameters={
        "type": "object",
        "properties": {
            "doc_id": {"type": "string"},
            "limit": {"type": "integer", "minimum": 1, "maximum": 50},
        },
        "required": ["doc_id"],
    },
)
_AUTHOR = ToolSpec(
    name="author_posts",
    description="List an author's most recent posts and comments written before today.",
    parameters={
        "type": "object",
        "properties": {
            "author": {"type": "string"},
            "limit": {"type": "integer", "minimum": 1, "maximum": 20},
        },
        "required": ["author"],
    },
)
THREAD_LIMIT = 50
AUTHOR_LIMIT = 20


class Toolbox:
    """The agent's tools for one forecast step.

    Holds the corpus backend and the cutoff privately; exposes only tool methods. Every call is
    logged as a ``ToolCall`` (with the document ids it exposed) and counted against the budget.
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
        if isinstance(backend, ThreadedBackend) and backend.has_threads():
            self._threads = backend

    @property
    def cutoff(self) -> datetime:
        return self._cutoff

    def specs(self) -> tuple[ToolSpec, ...]:
        """The tools available at this step."""
        specs: list[ToolSpec] = []
        if self._backend is not None:
            specs += [_SEARCH, _READ]
        if self._threads is not None:
            specs += [_THREAD, _AUTHOR]
        if self._market is not None:
            specs.append(_MARKET)
        if self._python is not None:
            specs.append(_PYTHON)
        return tuple(specs)

    def _charge(self) -> None:
        if len(self.calls) >= self._config.max_tool_calls:
            raise BudgetExceeded("tool", self._config.max_tool_calls)

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
                arguments=args,
                result=result,
                ok=error is None,
                error=error,
                doc_ids=doc_ids,
                elapsed_s=time.perf_counter() - started,
            )
        )

    def call(self, name: str, arguments: dict[str, Any]) -> Any:
        """Dispatch a tool call by name (for model-driven agents). Refusals raise ``ToolError``."""
        if name == "search" and self._backend is not None:
            query = arguments.get("query")
            top_k = arguments.get("top_k", 10)
            return self.search(query if isinstance(query, str) else "", top_k=_as_int(top_k))
        if name == "read" and self._backend is not None:
            return self.read(str(arguments.get("doc_id", "")))
        if name == "thread" and self._threads is not None:
            limit = _as_int(arguments.get("limit"), THREAD_LIMIT)
            return self.thread(str(arguments.get("doc_id", "")), limit=limit)
        if name == "author_posts" and self._threads is not None:
            limit = _as_int(arguments.get("limit"), AUTHOR_LIMIT)
            return self.author_posts(str(arguments.get("author", "")), limit=limit)
        if name == "market_history" and self._market is not None:
            return self.market_history()
        if name == "python" and self._python is not None:
            return self.python(str(arguments.get("code", "")))
        self._charge()
        started = time.perf_counter()
        msg = f"unknown or unavailable tool {name!r}"
        self._log(name, dict(arguments), None, started, error=msg)
        raise ToolError(msg)

    def search(self, query: str, top_k: int = 10) -> list[dict[str, Any]]:
        self._charge()
        started = time.perf_counter()
        args: dict[str, Any] = {"query": query, "top_k": top_k}
        if self._backend is None or not query.strip():
            msg = "search needs a non-empty query" if self._backend else "no corpus at this step"
            self._log("search", args, None, started, error=msg)
            raise ToolError(msg)
        k = max(1, min(top_k, self._config.max_search_k))
        hits = self._backend.search(query, as_of=self._cutoff, k=k)
        result = [
            {
                "id": h.id,
                "title": h.title,
                "date": h.timestamp.strftime("%Y-%m-%d %H:%M"),
                "score": round(h.score, 4),
                "snippet": h.snippet[: self._config.snippet_chars],
            }
            for h in hits
        ]
        ids = tuple(h.id for h in hits)
        self._shown.update(ids)
        self._log("search", args, result, started, doc_ids=ids)
        return result

    def read(self, doc_id: str) -> dict[str, Any]:
        self._charge()
        started = time.perf_counter()
        args = {"doc_id": doc_id}
        if self._backend is None:
            self._log("read", args, None, started, error="no corpus at this step")
            raise ToolError("no corpus at this step")
        if doc_id not in self._shown:
            msg = f"document {doc_id!r} was not returned by a search in this step"
            self._log("read", args, None, started, error=msg)
            raise ToolError(msg)
        try:
            doc = self._backend.read(doc_id, as_of=self._cutoff)
        except DocumentNotVisible as exc:
            self._log("read", args, None, started, error=str(exc))
            raise ToolError(str(exc)) from None
        result = {
            "id": doc.id,
            "title": doc.title,
            "date": doc.timestamp.strftime("%Y-%m-%d %H:%M"),
            "source": doc.source,
            "text": doc.text[: self._config.read_max_chars],
        }
        self._log("read", args, result, started, doc_ids=(doc.id,))
        return result

    def thread(self, doc_id: str, limit: int = THREAD_LIMIT) -> list[dict[str, Any]]:
        """The thread of a document shown in this step, as of the step's cutoff."""
        self._charge()
        started = time.perf_counter()
        args: dict[str, Any] = {"doc_id": doc_id, "limit": limit}
        if self._threads is None:
            msg = "threads are not available at this step"
        elif doc_id not in self._shown:
            msg = f"document {doc_id!r} was not returned by a tool in this step"
        else:
            try:
                post = self._threads.post(doc_id, as_of=self._cutoff)
                if post.thread_id is None:
                    raise ToolError(f"document {doc_id!r} is not part of a thread")
                docs = self._threads.thread(
                    post.thread_id, as_of=self._cutoff, limit=max(1, min(limit, THREAD_LIMIT))
                )
            except (DocumentNotVisible, ToolError) as exc:
                msg = str(exc)
            else:
                return self._listing("thread", args, docs, started)
        self._log("thread", args, None, started, error=msg)
        raise ToolError(msg)

    def author_posts(self, author: str, limit: int = AUTHOR_LIMIT) -> list[dict[str, Any]]:
        """The author's most recent documents before the step's cutoff."""
        self._charge()
        started = time.perf_counter()
        args: dict[str, Any] = {"author": author, "limit": limit}
        if self._threads is None or not author.strip():
            msg = "author_posts needs an author" if self._threads else "threads are not available"
            self._log("author_posts", args, None, started, error=msg)
            raise ToolError(msg)
        k = max(1, min(limit, AUTHOR_LIMIT))
        docs = self._threads.author_posts(author, as_of=self._cutoff, limit=k)
        return self._listing("author_posts", args, docs, started)

    def _listing(
        self, name: str, args: dict[str, Any], docs: list[Document], started: float
    ) -> list[dict[str, Any]]:
        """Log a list of documents; their ids become readable in this step."""
        result = [
            {
                "id": d.id,
                "title": d.title,
                "date": d.timestamp.strftime("%Y-%m-%d %H:%M"),
                "author": d.author,
                "parent_id": d.parent_id,
                "text": d.text[: self._config.snippet_chars],
            }
            for d in docs
        ]
        ids = tuple(d.id for d in docs)
        self._shown.update(ids)
        self._log(name, args, result, started, doc_ids=ids)
        return result

    def market_history(self) -> list[dict[str, Any]]:
        self._charge()
        started = time.perf_counter()
        if self._market is None:
            self._log("market_history", {}, None, started, error="market access is off")
            raise ToolError("market access is off in this setting")
        result = [{"day": b.day.isoformat(), "probs": dict(b.probs)} for b in self._market]
        self._log("market_history", {}, result, started)
        return result

    def python(self, code: str) -> dict[str, Any]:
        self._charge()
        started = time.perf_counter()
        if self._python is None:
            self._log("python", {"code": code}, None, started, error="python tool is off")
            raise ToolError("the python tool is not available in this setting")
        result = self._python(code)
        self._log("python", {"code": code}, result, started)
        return result


def _as_int(value: Any, default: int = 10) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return default
