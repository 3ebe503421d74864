"""The episode tool server: one episode's tools, question and model access over JSON-RPC (the
Model Context Protocol's methods and pastcast's own; docs/isolation.md, "The episode tool server",
says what each returns).

Everything goes through the ``Episode`` the runner built, in the runner's process: its toolbox
holds the cutoff (no request can name another: a tool's arguments have no date), offers only the
step's tools and charges the budgets, and every call lands in its transcript as in-process.
"""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Callable, Sequence
from typing import IO, Any

from pydantic import ValidationError

from pastcast import __version__, safejson
from pastcast.env import BudgetExceeded, Episode, ToolError
from pastcast.models import ChatRequest, Model
from pastcast.probabilities import completed, is_probability
from pastcast.records import FailureReason, Forecast, Notebook, NotebookProblem, Record
from pastcast.toolserver._jsonrpc import (
    MAX_LINE,
    Code,
    RpcError,
    encode,
    error_response,
    long_line_answer,
)
from pastcast.validation import problems

PROTOCOL_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
"""MCP revisions this server speaks (newest first); it answers in the client's if listed."""
EPISODE_URI = "pastcast://episode"
MAX_CHARS_META = "pastcast/max_chars"
_ANSWER_HELP = (
    "Research with the tools, then answer with the request pastcast/forecast, params "
    '{"forecast": {"probs": {LABEL: probability, ...}, "rationale": "..."}}; the episode ends '
    "there."
)


def _invalid(what: str) -> RpcError:
    return RpcError(Code.INVALID_PARAMS, what)


def _text(params: dict[str, Any], key: str) -> str:
    value = params.get(key)
    if not isinstance(value, str):
        raise _invalid(f"params.{key}: expected a string")
    return value


def _object(params: dict[str, Any], key: str, default: dict[str, Any] | None = None) -> Any:
    value = params.get(key, default)
    if not isinstance(value, dict):
        raise _invalid(f"params.{key}: expected an object")
    return value


def _validation(key: str, exc: ValidationError) -> RpcError:
    return _invalid(problems(exc, root=("params", key))[0])


class EpisodeServer:
    """Answers JSON-RPC messages for one episode (one conversation at a time: calls are
    serialised, so an HTTP client with several connections sees one episode).

    After the run: ``forecast`` is the submitted answer (None if none came), ``budget`` the
    first budget the agent ran out of (None if none). ``model`` is the only model ``pastcast/
    chat`` calls.
    """

    def __init__(self, episode: Episode, model: Model | None = None) -> None:
        self.episode = episode
        self.model = model
        self.forecast: Forecast | None = None
        self.budget: BudgetExceeded | None = None
        self._lock = threading.Lock()
        self._methods: dict[str, Callable[[dict[str, Any]], Any]] = {
            "initialize": self._initialize,
            "ping": lambda _: {},
            "tools/list": self._tools_list,
            "tools/call": self._tools_call,
            "resources/list": self._resources_list,
            "resources/read": self._resources_read,
            "pastcast/episode": lambda _: self.describe(),
            "pastcast/tool": self._tool,
            "pastcast/chat": self._chat,
            "pastcast/forecast": self._forecast,
        }

    @property
    def finished(self) -> bool:
        """The forecast is in: the episode is over."""
        return self.forecast is not None

    def outcome(self) -> Forecast | None:
        """What the agent's episode ended with, as an in-process agent's ends: the submitted
        forecast, else the budget it ran out of (its ``BudgetExceeded``, raised), else None."""
        if self.forecast is None and self.budget is not None:
            raise self.budget
        return self.forecast

    # -- framing --

    def handle_line(self, line: bytes) -> bytes:
        """The answer to one line (empty for a notification). Input that is not JSON (bad
        syntax, bytes that are not UTF-8, nesting past ``safejson.MAX_DEPTH``, a number too long
        to convert) is answered with a parse error, never raised."""
        try:
            message = safejson.loads(line)
        except ValueError as exc:
            return encode(error_response(None, RpcError(Code.PARSE_ERROR, f"not JSON: {exc}")))
        answer = self.handle(message)
        return b"" if answer is None else encode(answer)

    def handle(self, message: Any) -> dict[str, Any] | None:
        """The JSON-RPC response to ``message``, or None for a notification."""
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            err = RpcError(Code.INVALID_REQUEST, "expected a JSON-RPC 2.0 request object")
            return error_response(None, err)
        method = message.get("method")
        request_id = message.get("id")
        if "id" not in message:
            return None  # notifications (initialized, cancelled, ...) need no answer
        if request_id is not None and (
            isinstance(request_id, bool) or not isinstance(request_id, str | int)
        ):
            err = RpcError(Code.INVALID_REQUEST, "id: expected a string, an integer or null")
            return error_response(None, err)
        if not isinstance(method, str):  # a response to nothing we asked, or no method
            return error_response(request_id, RpcError(Code.INVALID_REQUEST, "no method name"))
        params = message.get("params", {})
        try:
            if not isinstance(params, dict):
                raise _invalid("params: expected an object")
            result = self.call(method, params)
        except RpcError as exc:
            return error_response(request_id, exc)
        return {"jsonrpc": "2.0", "id": request_id, "result": result}

    def call(self, method: str, params: dict[str, Any]) -> Any:
        """Run one method; ``RpcError`` for any refusal (never another exception)."""
        handler = self._methods.get(method)
        if handler is None:
            raise RpcError(Code.METHOD_NOT_FOUND, f"unknown method {method!r}")
        with self._lock:
            if self.finished and method not in ("initialize", "ping", "pastcast/episode"):
                raise RpcError(Code.EPISODE_OVER, "the forecast is in: the episode is over")
            try:
                return handler(params)
            except RpcError:
                raise
            except BudgetExceeded as exc:  # the first one spent is the episode's outcome
                self.budget = self.budget or exc
                data = {"kind": exc.kind, "limit": exc.limit}
                raise RpcError(Code.BUDGET_EXHAUSTED, str(exc), data) from None
            except Exception as exc:  # a bug must answer, not stop the conversation
                raise RpcError(Code.INTERNAL_ERROR, f"{type(exc).__name__}: {exc}") from exc

    # -- MCP --

    def _initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        asked = params.get("protocolVersion")
        version = asked if asked in PROTOCOL_VERSIONS else PROTOCOL_VERSIONS[0]
        return {
            "protocolVersion": version,
            "capabilities": {"tools": {"listChanged": False}, "resources": {}},
            "serverInfo": {"name": "pastcast-episode", "version": __version__},
            "instructions": f"{self.episode.question.render()}\n\n{_ANSWER_HELP}",
        }

    def _tools_list(self, params: dict[str, Any]) -> dict[str, Any]:
        tools = [
            {"name": t.name, "description": t.description, "inputSchema": t.parameters}
            for t in self.episode.tools.tools()
        ]
        return {"tools": tools}

    def _tools_call(self, params: dict[str, Any]) -> dict[str, Any]:
        name = _text(params, "name")
        arguments = _object(params, "arguments", {})
        meta = params.get("_meta")
        cut = meta.get(MAX_CHARS_META) if isinstance(meta, dict) else None
        if cut is not None and (not isinstance(cut, int) or isinstance(cut, bool) or cut < 0):
            raise _invalid(f"params._meta.{MAX_CHARS_META}: expected a non-negative integer")
        calls = self.episode.tools.calls
        before = len(calls)
        text = self.episode.call_tool(name, arguments, max_chars=cut)
        refused = len(calls) > before and not calls[before].ok
        return {"content": [{"type": "text", "text": text}], "isError": refused}

    def _resources_list(self, params: dict[str, Any]) -> dict[str, Any]:
        return {
            "resources": [
                {
                    "uri": EPISODE_URI,
                    "name": "episode",
                    "description": "The question, public history, notebook and budgets",
                    "mimeType": "application/json",
                }
            ]
        }

    def _resources_read(self, params: dict[str, Any]) -> dict[str, Any]:
        uri = _text(params, "uri")
        if uri != EPISODE_URI:
            raise RpcError(Code.RESOURCE_NOT_FOUND, f"unknown resource {uri!r}", {"uri": uri})
        text = json.dumps(self.describe(), ensure_ascii=False)
        return {"contents": [{"uri": uri, "mimeType": "application/json", "text": text}]}

    # -- pastcast --

    def describe(self) -> dict[str, Any]:
        """What the agent may know at the start: the question view (built from the event
        alone), counts of outcomes already public, its own notebook, budgets, tools, model."""
        ep = self.episode
        notebook = None if ep.notebook_in is None else ep.notebook_in.model_dump(mode="json")
        return {
            "question": ep.question.model_dump(mode="json"),
            "prompt": ep.question.render(),
            "history": ep.history.model_dump(mode="json"),
            "notebook_in": notebook,
            "rollout": ep.rollout,
            "config": ep.config.model_dump(mode="json"),
            "tools": [t.name for t in ep.tools.tools()],
            "model": None if self.model is None else self.model.name,
        }

    def _tool(self, params: dict[str, Any]) -> dict[str, Any]:
        name = _text(params, "name")
        arguments = _object(params, "arguments", {})
        try:
            return {"result": self.episode.tools.call(name, arguments)}
        except ToolError as exc:
            raise RpcError(Code.TOOL_REFUSED, str(exc)) from None

    def _chat(self, params: dict[str, Any]) -> dict[str, Any]:
        if self.model is None:
            raise RpcError(Code.MODEL_FAILED, "no model is configured for this agent")
        named = params.get("model")
        if named is not None and named != self.model.name:
            why = f"this agent's model is {self.model.name!r}, not {named!r}"
            raise RpcError(Code.MODEL_FAILED, why)
        try:
            request = ChatRequest.model_validate(_object(params, "request"))
        except ValidationError as exc:
            raise _validation("request", exc) from None
        try:
            response = self.episode.chat(self.model, request)
        except BudgetExceeded:
            raise  # answered by ``call``
        except Exception as exc:  # the provider's failure goes back to the agent, as in-process
            raise RpcError(Code.MODEL_FAILED, f"{type(exc).__name__}: {exc}") from None
        return response.model_dump(mode="json")

    def _forecast(self, params: dict[str, Any]) -> dict[str, Any]:
        try:
            forecast = checked_answer(_object(params, "forecast"), self.episode.question.labels)
        except ValidationError as exc:
            raise _validation("forecast", exc) from None
        try:
            left = _NotebookLeft.model_validate({k: params[k] for k in _NOTEBOOK if k in params})
        except ValidationError as exc:
            raise _invalid(problems(exc, root=("params",))[0]) from None
        self.forecast = forecast
        self.episode.notebook_out = left.notebook_out
        self.episode.notebook_carried = left.notebook_carried
        self.episode.notebook_problems = left.notebook_problems
        return {}


class _NotebookLeft(Record):
    """The notebook an agent left with its answer (``pastcast/forecast``), as the episode
    records it."""

    notebook_out: Notebook | None = None
    notebook_carried: bool = False
    notebook_problems: tuple[NotebookProblem, ...] = ()


_NOTEBOOK = tuple(_NotebookLeft.model_fields)


# -- the submitted answer, read under the parser's rules: labels of the question only, and a
# partial answer completed, never renormalised into certainty.


def _unusable(forecast: Forecast, reason: FailureReason, why: str) -> Forecast:
    raw = forecast.raw_text or json.dumps(forecast.probs, ensure_ascii=False)
    return forecast.model_copy(
        update={"usable": False, "failure_reason": reason, "raw_text": f"{raw} ({why})"}
    )


def checked_answer(submitted: dict[str, Any], labels: Sequence[str]) -> Forecast:
    """The forecast ``submitted`` (the request's JSON object) over ``labels``: unusable when it
    names another label or, naming only some of them, states a value outside [0, 1]; a partial
    one is completed (the mass it leaves shared by the labels it does not name). Raises
    ``pydantic.ValidationError`` for what is no forecast."""
    forecast = Forecast.model_validate(submitted)
    if not forecast.usable:
        return forecast
    unknown = sorted(set(forecast.probs) - set(labels))
    if unknown:
        return _unusable(
            forecast, "unknown_labels", f"labels not in the question: {', '.join(unknown)}"
        )
    if set(forecast.probs) == set(labels):
        return forecast
    stated: dict[str, float] | None
    try:  # as sent: the record scales values above 1
        stated = {k: float(v) for k, v in submitted["probs"].items()}
    except (TypeError, ValueError, OverflowError):
        stated = None
    if stated is None or not all(is_probability(v) for v in stated.values()):
        shown = ", ".join(f"{k}={v!r}" for k, v in submitted["probs"].items())
        why = f"a partial answer states probabilities in [0, 1]: {shown}"
        return _unusable(forecast.model_copy(update={"probs": {}}), "invalid_probability", why)
    probs = completed(stated, labels)
    if not math.fsum(probs.values()) > 0.0:
        return _unusable(forecast, "no_positive_mass", "no positive probability")
    return forecast.model_copy(update={"probs": probs})


def serve_stdio(server: EpisodeServer, reader: IO[bytes], writer: IO[bytes]) -> None:
    """MCP's stdio transport: answer each line of ``reader`` on ``writer`` until end of input or
    the forecast."""
    while not server.finished:
        line = reader.readline(MAX_LINE + 1)
        if not line:
            return
        if len(line) > MAX_LINE and not line.endswith(b"\n"):
            while line and not line.endswith(b"\n"):  # the rest of the long line goes unread
                line = reader.readline(MAX_LINE)
            answer = long_line_answer()
        elif not line.strip():
            continue
        else:
            answer = server.handle_line(line)
        if answer:
            writer.write(answer)
            writer.flush()
