"""Agent specs given on the command line, checked before any work starts.

Grammar of ``--agent``::

    SPEC    = NAME [":" ARG {"," ARG}] ["@" SETTING]
    ARG     = KEY "=" VALUE
    VALUE   = JSON    a "string", [list] or {object}; may hold commas, "@", ":" and "/"
            | TEXT    up to the next comma; a number, true, false or null is read as such
    SETTING = memory_free | memory_on | no_tools

Only a trailing ``@WORD`` (letters, digits, ``_``, ``-``) is read as the setting, and it must be
one of the three; every other ``@`` belongs to a value, so
``tool-agent:model=openai-compatible:qwen@http://127.0.0.1:8080/v1@memory_on`` needs no quotes.
A value holding a comma, or ending in ``@WORD``, is written as a JSON string: ``key="a,b"``.
"""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, cast, get_args

from pydantic import TypeAdapter, ValidationError
from pydantic.errors import PydanticUserError

from pastcast import safejson
from pastcast.agents import agent_spec, agents, build_agent, clear_models, load_models
from pastcast.cli._common import fail
from pastcast.models import known_providers
from pastcast.records import Setting
from pastcast.registry import RegistryError
from pastcast.runlog import AgentSpec
from pastcast.validation import problems

__all__ = [
    "AGENT_FORM",
    "AGENT_GRAMMAR",
    "AgentOption",
    "check_agent_args",
    "check_agents",
    "parse_agent_option",
    "split_agent_option",
]

SETTINGS: tuple[str, ...] = get_args(Setting)
AGENT_FORM = "NAME[:key=value,...][@SETTING]"
AGENT_GRAMMAR = (
    f"{AGENT_FORM}, SETTING one of {'|'.join(SETTINGS)}. A value is JSON, or plain text up to "
    'the next comma (quote one holding a comma: key="a,b"). Only a trailing @SETTING is a '
    "setting, so values may hold @, : and /."
)

_SETTING_TAIL = re.compile(r"@([A-Za-z0-9_-]+)\Z")
_JSON_START = ('"', "[", "{")


@dataclass(frozen=True)
class AgentOption:
    """One ``--agent`` value split by the grammar (nothing checked against the registry)."""

    name: str
    args: dict[str, Any]
    setting: Setting | None
    label: str
    """The option without its setting: the agent's name in the run log."""


def _reject_constant(text: str) -> Any:
    raise ValueError(text)  # NaN and Infinity stay text: JSON has no such numbers


def _plain(text: str) -> Any:
    try:
        return safejson.loads(text, parse_constant=_reject_constant)
    except ValueError:
        return text


def _value(text: str, start: int, where: str) -> tuple[Any, int]:
    """The value starting at ``start`` and the index just past its comma."""
    i = start
    while i < len(text) and text[i].isspace():
        i += 1
    if text.startswith(_JSON_START, i):
        try:
            value, end = safejson.raw_decode(text, i)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{where}: not valid JSON ({exc.msg})") from None
        comma = text.find(",", end)
        comma = len(text) if comma < 0 else comma
        extra = text[end:comma].strip()
        if extra:
            raise ValueError(f"{where}: unexpected {extra!r} after the JSON value")
        return value, comma + 1
    comma = text.find(",", i)
    comma = len(text) if comma < 0 else comma
    return _plain(text[i:comma].strip()), comma + 1


def _parse_args(text: str, option: str) -> dict[str, Any]:
    args: dict[str, Any] = {}
    pos = 0
    while pos < len(text):
        comma = text.find(",", pos)
        comma = len(text) if comma < 0 else comma
        eq = text.find("=", pos)
        if eq < 0 or eq > comma:
            item = text[pos:comma].strip()
            if item:
                raise ValueError(f"--agent {option!r}: expected key=value, got {item!r}")
            pos = comma + 1  # an empty item: "a=1,,b=2" or a trailing comma
            continue
        key = text[pos:eq].strip()
        if not key.isidentifier():
            raise ValueError(f"--agent {option!r}: {key!r} is not an argument name")
        if key in args:
            raise ValueError(f"--agent {option!r}: argument {key!r} is given twice")
        args[key], pos = _value(text, eq + 1, f"--agent {option!r}: argument {key!r}")
    return args


def split_agent_option(option: str) -> AgentOption:
    """Split ``option`` by the grammar above; ``ValueError`` names the option and the problem."""
    body, setting = option, None
    tail = _SETTING_TAIL.search(option)
    if tail is not None:
        word = tail.group(1)
        if word not in SETTINGS:
            raise ValueError(
                f"--agent {option!r}: unknown setting {word!r} (choose from {', '.join(SETTINGS)})"
            )
        body, setting = option[: tail.start()], cast(Setting, word)
    name, _, arg_text = body.partition(":")
    if not name:
        raise ValueError(f"--agent {option!r}: expected {AGENT_FORM}")
    return AgentOption(name, _parse_args(arg_text, option), setting, body)


def _accepted(params: Mapping[str, inspect.Parameter]) -> str:
    return ", ".join(p for p in params if p != "setting") or "none"


def _check_types(factory: Callable[..., Any], args: Mapping[str, Any], where: str) -> None:
    """Values against the factory's annotations, where they resolve (lax: 4 for a float)."""
    try:
        params = inspect.signature(factory, eval_str=True).parameters
    except (NameError, TypeError, ValueError):
        return  # annotations that do not resolve here: binding was checked already
    for key, value in args.items():
        param = params.get(key)
        if param is None or param.annotation is inspect.Parameter.empty:
            continue
        try:
            TypeAdapter(param.annotation).validate_python(value)
        except PydanticUserError:
            continue  # a type pydantic cannot check
        except ValidationError as exc:
            msg = problems(exc)[0]
            raise ValueError(f"{where}: argument {key!r}: {msg} (got {value!r})") from None


def check_agent_args(name: str, args: Mapping[str, Any], option: str) -> None:
    """Raise ``ValueError`` naming the agent and the argument (and listing the accepted ones)
    unless agent ``name``'s factory takes ``args``: checked when the run is planned, so a
    misspelled argument never reaches a running chain."""
    try:
        factory = agents.get(name).factory
    except ValueError as exc:  # an unknown agent: the message lists the known ones
        raise ValueError(f"--agent {option!r}: {exc}") from None
    where = f"--agent {option!r}: agent {name!r}"
    if "setting" in args:
        raise ValueError(f"{where}: give the setting as @SETTING, not as an argument")
    params = inspect.signature(factory).parameters
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    for key in args:
        if key not in params and not takes_any:
            raise ValueError(f"{where} has no argument {key!r} (accepted: {_accepted(params)})")
    for key, p in params.items():
        required = p.default is inspect.Parameter.empty and p.kind in (
            inspect.Parameter.POSITIONAL_OR_KEYWORD,
            inspect.Parameter.KEYWORD_ONLY,
        )
        if required and key != "setting" and key not in args:
            raise ValueError(f"{where} needs argument {key!r} (accepted: {_accepted(params)})")
    _check_types(factory, args, where)
    model = args.get("model")
    if isinstance(model, str):  # a provider spec (see pastcast.models.resolve_model)
        provider, sep, rest = model.partition(":")
        known = known_providers()
        if not sep or not rest or provider not in known:
            raise ValueError(
                f"{where}: argument 'model': {model!r} is not PROVIDER:NAME with a known "
                f"provider ({', '.join(known)})"
            )


def check_agents(specs: Iterable[AgentSpec]) -> None:
    """Build every agent once and load its model: arguments an agent refuses, or a model that
    cannot be loaded, exit 2 before the work rather than as a run of unusable forecasts."""
    for spec in specs:
        try:
            build_agent(spec)
        except (ValueError, TypeError, RegistryError) as exc:
            fail(f"--agent {spec.name!r}: {exc}")
    try:
        load_models()
    except ValueError as exc:
        clear_models()
        fail(f"--agent: {exc}")


def parse_agent_option(option: str, default_setting: Setting = "memory_free") -> AgentSpec:
    """``heuristic:max_reads=4@memory_on`` -> an AgentSpec named ``heuristic:max_reads=4``,
    its agent and arguments checked against the registry."""
    parsed = split_agent_option(option)
    check_agent_args(parsed.name, parsed.args, option)
    setting = parsed.setting or default_setting
    return agent_spec(parsed.name, setting=setting, label=parsed.label, **parsed.args)
