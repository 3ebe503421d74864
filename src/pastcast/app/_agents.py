"""Agents named as text (``heuristic:max_reads=4@memory_on``), parsed and checked against the
agent registry before any work starts, and the models they use, loaded and stopped.

The grammar of an agent option (``pastcast run --agent``, ``agents`` of the Python API) is in
docs/agents.md and ``AGENT_GRAMMAR``: only a trailing ``@WORD`` is a setting, so values may hold
``@``, ``:`` and ``/`` unquoted; a value holding a comma is written as a JSON string.
"""

from __future__ import annotations

import json
import re
import signal
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any, cast, get_args

from pastcast import safejson
from pastcast.agents import agent_spec, build_agent, clear_models, load_models
from pastcast.app._fields import as_field
from pastcast.errors import FieldError
from pastcast.models import known_providers
from pastcast.records import Setting
from pastcast.runlog import AgentSpec

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
    """One agent option split by the grammar (nothing checked against the registry)."""

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


def _value(text: str, start: int, where: str, field: str) -> tuple[Any, int]:
    """The value starting at ``start`` and the index just past its comma."""
    i = start
    while i < len(text) and text[i].isspace():
        i += 1
    if text.startswith(_JSON_START, i):
        try:
            value, end = safejson.raw_decode(text, i)
        except json.JSONDecodeError as exc:
            raise FieldError(field, f"{where}: not valid JSON ({exc.msg})") from None
        comma = text.find(",", end)
        comma = len(text) if comma < 0 else comma
        extra = text[end:comma].strip()
        if extra:
            raise FieldError(field, f"{where}: unexpected {extra!r} after the JSON value")
        return value, comma + 1
    comma = text.find(",", i)
    comma = len(text) if comma < 0 else comma
    return _plain(text[i:comma].strip()), comma + 1


def _parse_args(text: str, option: str, field: str) -> dict[str, Any]:
    args: dict[str, Any] = {}
    pos = 0
    while pos < len(text):
        comma = text.find(",", pos)
        comma = len(text) if comma < 0 else comma
        eq = text.find("=", pos)
        if eq < 0 or eq > comma:
            item = text[pos:comma].strip()
            if item:
                raise FieldError(field, f"{option!r}: expected key=value, got {item!r}")
            pos = comma + 1  # an empty item: "a=1,,b=2" or a trailing comma
            continue
        key = text[pos:eq].strip()
        if not key.isidentifier():
            raise FieldError(field, f"{option!r}: {key!r} is not an argument name")
        if key in args:
            raise FieldError(field, f"{option!r}: argument {key!r} is given twice")
        args[key], pos = _value(text, eq + 1, f"{option!r}: argument {key!r}", field)
    return args


def split_agent_option(option: str, *, field: str = "agents") -> AgentOption:
    """Split ``option`` by the grammar above; ``FieldError`` naming ``field`` says what is
    wrong, the option quoted."""
    body, setting = option, None
    tail = _SETTING_TAIL.search(option)
    if tail is not None:
        word = tail.group(1)
        if word not in SETTINGS:
            raise FieldError(
                field, f"{option!r}: unknown setting {word!r} (choose from {', '.join(SETTINGS)})"
            )
        body, setting = option[: tail.start()], cast(Setting, word)
    name, _, arg_text = body.partition(":")
    if not name:
        raise FieldError(field, f"{option!r}: expected {AGENT_FORM}")
    return AgentOption(name, _parse_args(arg_text, option, field), setting, body)


def check_agent_args(
    name: str, args: Mapping[str, Any], option: str, *, field: str = "agents"
) -> None:
    """``FieldError`` naming ``field``, the agent and the argument unless agent ``name``'s factory
    takes ``args`` (names and types, checked by the agent registry as for every other caller):
    checked when the run is planned, so a misspelled argument never reaches a running chain."""
    where = f"{option!r}: agent {name!r}"
    if "setting" in args:
        raise FieldError(field, f"{where}: give the setting as @SETTING, not as an argument")
    try:
        agent_spec(name, **args)
    except ValueError as exc:  # FieldError too: one line naming the agent and the argument
        raise FieldError(field, f"{option!r}: {exc}") from None
    model = args.get("model")
    if isinstance(model, str):  # a provider spec (see pastcast.models.resolve_model)
        provider, sep, rest = model.partition(":")
        known = known_providers()
        if not sep or not rest or provider not in known:
            raise FieldError(
                field,
                f"{where}: argument 'model': {model!r} is not PROVIDER:NAME with a known "
                f"provider ({', '.join(known)})",
            )


def parse_agent_option(option: str, *, field: str = "agents") -> AgentSpec:
    """``heuristic:max_reads=4@memory_on`` -> an AgentSpec named ``heuristic:max_reads=4``,
    its agent and arguments checked against the registry (``FieldError`` naming ``field``)."""
    parsed = split_agent_option(option, field=field)
    check_agent_args(parsed.name, parsed.args, option, field=field)
    setting = parsed.setting or "memory_free"
    return agent_spec(parsed.name, setting=setting, label=parsed.label, **parsed.args)


def parse_agent_options(
    options: Sequence[str], default_setting: Setting = "memory_free"
) -> tuple[AgentOption, ...]:
    """Every option split and checked (agents given without ``@SETTING`` get
    ``default_setting``); the same agent in the same setting twice is refused."""
    if not options:
        raise FieldError("agents", "give at least one agent")
    parsed = []
    for option in options:
        split = split_agent_option(option)
        check_agent_args(split.name, split.args, option)
        parsed.append(replace(split, setting=split.setting or default_setting))
    keys = [(p.label, p.setting) for p in parsed]
    if len(set(keys)) != len(keys):
        raise FieldError(
            "agents", f"the same agent and setting is given twice ({', '.join(options)})"
        )
    return tuple(parsed)


def check_agents(specs: Iterable[AgentSpec]) -> None:
    """Build every agent once and load its model: arguments an agent refuses, or a model that
    cannot be loaded, are an ``FieldError`` (field ``agents[i]``) before the work rather than a
    run of unusable forecasts. Models loaded stay loaded for the run: call it inside
    ``models_session``."""
    for i, spec in enumerate(specs):
        try:
            build_agent(spec)
        except (ValueError, TypeError) as exc:
            raise FieldError(f"agents[{i}]", f"{spec.name!r}: {exc}") from None
    with as_field("agents"):
        load_models()


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread inside ``models_session`` (where it would otherwise
    end the process at once): the work unwinds as for Ctrl-C, its models stopped."""


def _terminated(signum: int, frame: object) -> None:
    raise Terminated


@contextmanager
def models_session() -> Iterator[None]:
    """The shared models agents build inside the block (``pastcast.agents.agent_model``) are
    stopped when it ends, however it ends: every local llama.cpp server started for them
    included. Ctrl-C and SIGTERM included: in the main thread of a process that leaves SIGTERM
    to its default (death, with nothing cleaned up), SIGTERM raises ``Terminated`` in the block;
    neither signal interrupts the models' stopping (they are held until it is done)."""
    owned = threading.current_thread() is threading.main_thread()
    owned = owned and signal.getsignal(signal.SIGTERM) == signal.SIG_DFL
    if owned:
        signal.signal(signal.SIGTERM, _terminated)
    try:
        yield
    finally:
        mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
        try:
            clear_models()
        finally:
            if owned:
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)
