"""The agent's side of a tool server: an ``Episode`` whose tools and model calls are requests, so
an agent written against ``Episode`` runs unchanged. ``call_tool`` is MCP's ``tools/call``, the
typed tool methods are ``pastcast/tool`` (results validated into the same types), ``chat`` is
``pastcast/chat``; budgets, refusals and model failures come back as the exceptions an
in-process episode raises.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any, get_type_hints

from pydantic import TypeAdapter

from pastcast.env import (
    TOOLS,
    BudgetExceeded,
    EnvConfig,
    Episode,
    PublicHistory,
    QuestionView,
    Toolbox,
    ToolDef,
    ToolError,
)
from pastcast.models import ChatRequest, ChatResponse, Model, ModelError
from pastcast.records import Forecast, Notebook
from pastcast.toolserver._jsonrpc import Code, Connection, RpcError
from pastcast.toolserver._server import MAX_CHARS_META


def _local(exc: RpcError) -> Exception:
    """The exception an in-process episode would have raised."""
    if exc.code == Code.BUDGET_EXHAUSTED and isinstance(exc.data, dict):
        return BudgetExceeded(str(exc.data.get("kind")), int(exc.data.get("limit", 0)))
    if exc.code == Code.TOOL_REFUSED:
        return ToolError(exc.message)
    if exc.code == Code.MODEL_FAILED:
        return ModelError(exc.message)
    return RuntimeError(f"tool server: {exc.message} (code {exc.code})")


def _request(conn: Connection, method: str, params: dict[str, Any]) -> Any:
    try:
        return conn.request(method, params)
    except RpcError as exc:
        raise _local(exc) from None


class RemoteToolbox(Toolbox):
    """The served tools with ``Toolbox``'s interface; it holds no backend and no data."""

    def __init__(
        self, conn: Connection, names: tuple[str, ...], cutoff: datetime, config: EnvConfig
    ) -> None:
        super().__init__(None, cutoff, config)
        self._conn = conn
        self._served = tuple(t for t in TOOLS if t.name in names)

    def tools(self) -> tuple[ToolDef, ...]:
        return self._served

    def call(self, name: str, arguments: Mapping[str, Any]) -> Any:
        params = {"name": name, "arguments": dict(arguments)}
        return _request(self._conn, "pastcast/tool", params)["result"]

    def _run_tool(self, name: str, args: dict[str, Any], body: Callable[[], Any]) -> Any:
        """A typed tool method's call (``tools.search(...)``), run by the server's toolbox (the
        local ``body`` would need a backend) and its result validated into the method's type."""
        return _RESULTS[name].validate_python(self.call(name, args))


_RESULTS = {t.name: TypeAdapter(get_type_hints(getattr(Toolbox, t.name))["return"]) for t in TOOLS}


class RemoteEpisode(Episode):
    """An episode served by a tool server over ``conn``."""

    def __init__(self, conn: Connection) -> None:
        info = _request(conn, "pastcast/episode", {})
        question = QuestionView.model_validate(info["question"])
        config = EnvConfig.model_validate(info["config"])
        tools = RemoteToolbox(conn, tuple(info["tools"]), question.cutoff, config)
        history = PublicHistory.model_validate(info["history"])
        notebook = info["notebook_in"]
        notebook_in = None if notebook is None else Notebook.model_validate(notebook)
        super().__init__(question, tools, config, history, notebook_in, info["rollout"])
        self._conn = conn
        self.model_name: str | None = info.get("model")
        """The model the server calls for ``chat`` (None: this agent has none)."""

    def chat(self, model: Model, request: ChatRequest) -> ChatResponse:
        params = {"model": model.name, "request": request.model_dump(mode="json")}
        response = ChatResponse.model_validate(_request(self._conn, "pastcast/chat", params))
        self._add_usage(response.usage, model_calls=1)
        return response

    def call_tool(
        self, name: str, arguments: dict[str, Any], *, max_chars: int | None = None
    ) -> str:
        params: dict[str, Any] = {"name": name, "arguments": dict(arguments)}
        if max_chars is not None:
            params["_meta"] = {MAX_CHARS_META: max_chars}
        result = _request(self._conn, "tools/call", params)
        return "".join(c.get("text", "") for c in result["content"] if c.get("type") == "text")

    def submit(self, forecast: Forecast) -> None:
        """Send the answer (with the notebook the agent left), which ends the episode."""
        nb = self.notebook_out
        params = {
            "forecast": forecast.model_dump(mode="json"),
            "notebook_out": None if nb is None else nb.model_dump(mode="json"),
            "notebook_carried": self.notebook_carried,
            "notebook_problems": [p.model_dump(mode="json") for p in self.notebook_problems],
        }
        _request(self._conn, "pastcast/forecast", params)
