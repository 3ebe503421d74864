"""How a tool is defined: once, as a typed ``Toolbox`` method marked with ``@tool``; its schema,
description, JSON-action example and validated dispatch all derive from that definition, and
every call goes through ``Toolbox._run_tool`` once (docs/models.md, "Tools")."""

from __future__ import annotations

import functools
import inspect
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import date
from functools import cached_property
from typing import Any, Literal, TypeVar, cast, get_args, get_type_hints

from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from pastcast.errors import FieldError
from pastcast.models import ToolSpec
from pastcast.records import Record
from pastcast.validation import problems

Requirement = Literal["corpus", "threads", "market", "python"]
"""What a step must offer for the tool to exist: a corpus, threaded documents, market access,
the python sandbox."""

F = TypeVar("F", bound=Callable[..., Any])


class BudgetExceeded(RuntimeError):
    """The step's tool or model budget is spent; the episode ends."""

    def __init__(self, kind: str, limit: int) -> None:
        super().__init__(f"{kind} budget of {limit} exhausted")
        self.kind = kind
        self.limit = limit


class ToolError(FieldError):
    """A tool call the environment refused (bad arguments, document not visible or not shown). Its
    own kind of ``FieldError``: the callers that recover from it tell it apart."""

    def __init__(self, reason: str, field: str = "") -> None:
        super().__init__(field, reason)


# -- typed results (their JSON form is what the model reads and the run log keeps) --


class SearchResult(Record):
    id: str
    title: str
    date: str
    score: float
    snippet: str


class DocumentText(Record):
    id: str
    title: str
    date: str
    source: str
    author: str | None = None
    """For ``author_posts``; None where the corpus has no authors (news)."""
    text: str


class ListedPost(Record):
    """A post or comment of a thread or an author's listing."""

    id: str
    title: str
    date: str
    author: str | None
    parent_id: str | None
    text: str


class MarketDay(Record):
    day: date
    probs: dict[str, float]


class PythonResult(Record):
    stdout: str
    stderr: str
    exit_code: int | None
    timed_out: bool = False
    killed_reason: str | None = None
    truncated: bool = False
    error: str | None = None
    """Why the sandbox did not run the code (e.g. code that cannot be encoded)."""


@dataclass(frozen=True)
class ToolDef:
    """One tool, derived from its method."""

    name: str
    description: str
    requires: Requirement
    arguments: type[BaseModel]

    @cached_property
    def parameters(self) -> dict[str, Any]:
        """The JSON schema of the arguments (pydantic's, without its generated titles)."""
        schema = self.arguments.model_json_schema()
        props = {
            k: {f: v for f, v in prop.items() if f != "title"}
            for k, prop in schema.get("properties", {}).items()
        }
        out: dict[str, Any] = {"type": "object", "properties": props}
        if schema.get("required"):
            out["required"] = list(schema["required"])
        return out

    @cached_property
    def spec(self) -> ToolSpec:
        """The native tool spec offered to a model."""
        return ToolSpec(name=self.name, description=self.description, parameters=self.parameters)

    def validate(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """The arguments checked and converted; a ``ToolError`` in one line otherwise (it goes
        back to the model, which can correct its call). Unknown keys are ignored: a JSON action
        carries the fields of every tool."""
        try:
            parsed = self.arguments.model_validate(dict(arguments))
        except ValidationError as exc:
            found = "; ".join(problems(exc))
            raise ToolError(f"{self.name}: invalid arguments: {found}") from None
        return {k: getattr(parsed, k) for k in type(parsed).model_fields}

    def example(self) -> str:
        """The JSON action that calls this tool, with a placeholder or default for each argument
        (shown to models in JSON action mode)."""
        fields: dict[str, Any] = {"action": self.name}
        for name, prop in self.parameters["properties"].items():
            if "default" in prop and prop["default"] is None:
                continue  # an optional filter: shown in the schema, left out of the example
            if "default" in prop:
                fields[name] = prop["default"]
            else:
                fields[name] = f"<{prop.get('description', name)}>"
        return json.dumps(fields, ensure_ascii=False)


def _argument_model(func: Callable[..., Any]) -> type[BaseModel]:
    hints = get_type_hints(func, include_extras=True)
    fields: dict[str, Any] = {}
    for p in list(inspect.signature(func).parameters.values())[1:]:  # after ``self``
        if p.kind is p.VAR_KEYWORD:  # ``**given: Unpack[SomeTypedDict]``: optional arguments
            extra = get_type_hints(get_args(hints[p.name])[0], include_extras=True)
            fields |= {k: (v, None) for k, v in extra.items() if k not in fields}
            continue
        fields[p.name] = (hints[p.name], ... if p.default is p.empty else p.default)
    config = ConfigDict(extra="ignore", frozen=True)
    return create_model(f"{func.__name__}_arguments", __config__=config, **fields)


_MARK = "__pastcast_tool__"


def tool(requires: Requirement) -> Callable[[F], F]:
    """Mark a ``Toolbox`` method as a tool available when the step offers ``requires``; each call
    runs through the toolbox's ``_run_tool`` with the arguments given (those left None out)."""

    def mark(method: F) -> F:
        signature = inspect.signature(method)
        var = next((p.name for p in signature.parameters.values() if p.kind is p.VAR_KEYWORD), "")

        @functools.wraps(method)
        def run(self: Any, *args: Any, **kwargs: Any) -> Any:
            bound = signature.bind(self, *args, **kwargs)
            bound.apply_defaults()
            named = dict(bound.arguments)
            named |= named.pop(var, {})  # ``**given``: its arguments one by one
            given = {k: v for k, v in list(named.items())[1:] if v is not None}
            return self._run_tool(method.__name__, given, lambda: method(self, *args, **kwargs))

        setattr(run, _MARK, requires)
        return cast(F, run)

    return mark


def tool_defs(cls: type) -> tuple[ToolDef, ...]:
    """The tools of ``cls`` in definition order (the order models are offered them)."""
    out = []
    for name, member in vars(cls).items():
        requires = getattr(member, _MARK, None)
        if requires is not None:
            about = " ".join((inspect.getdoc(member) or "").split("\n\n")[0].split())
            out.append(ToolDef(name, about, requires, _argument_model(member)))
    return tuple(out)
