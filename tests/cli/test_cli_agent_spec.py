"""The ``--agent`` grammar: NAME[:key=value,...][@SETTING], values may hold @ : / and, quoted
as JSON, commas; every ``--agent`` example in the README and docs parses and passes the checks."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, get_args

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pastcast.app import parse_agent_option, split_agent_option
from pastcast.records import Setting

REPO = Path(__file__).resolve().parents[2]
SETTINGS: tuple[str, ...] = get_args(Setting)
README_COMPATIBLE = "tool-agent:model=openai-compatible:qwen@http://127.0.0.1:8080/v1@memory_on"


def test_an_openai_compatible_model_keeps_its_at_sign() -> None:
    spec = parse_agent_option(README_COMPATIBLE)
    assert spec.factory == "tool-agent" and spec.setting == "memory_on"
    assert spec.args == {"model": "openai-compatible:qwen@http://127.0.0.1:8080/v1"}
    assert spec.name == README_COMPATIBLE.removesuffix("@memory_on")
    bare = parse_agent_option("no-tools:model=openai-compatible:qwen@https://h.example/v1")
    assert bare.setting == "memory_free"
    assert bare.args == {"model": "openai-compatible:qwen@https://h.example/v1"}


@pytest.mark.parametrize(
    ("option", "args", "setting"),
    [
        ("heuristic", {}, None),
        ("heuristic@memory_on", {}, "memory_on"),
        (
            "heuristic:max_reads=4,strength=0.25@no_tools",
            {"max_reads": 4, "strength": 0.25},
            "no_tools",
        ),
        (
            'x:model_options={"n_ctx": 4096, "seed": 1},flag=true',
            {"model_options": {"n_ctx": 4096, "seed": 1}, "flag": True},
            None,
        ),
        ('x:text="a,b@memory_on"', {"text": "a,b@memory_on"}, None),
        ('x:text="a,b"@memory_free', {"text": "a,b"}, "memory_free"),
        (
            "x:cache_dir=/tmp/a b,mode=null,n=-3",
            {"cache_dir": "/tmp/a b", "mode": None, "n": -3},
            None,
        ),
        ("x: a = 1 , b=NaN,", {"a": 1, "b": "NaN"}, None),
        ("x:url=http://u:p@host:1/v1", {"url": "http://u:p@host:1/v1"}, None),
    ],
)
def test_examples_of_the_grammar(option: str, args: dict[str, Any], setting: str | None) -> None:
    parsed = split_agent_option(option)
    assert parsed.args == args and parsed.setting == setting


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ("heuristic@sleepy", "unknown setting 'sleepy'"),
        ("x:url=http://h/v1@memory_onn", "unknown setting 'memory_onn'"),
        ("x:a=1,b", "expected key=value, got 'b'"),
        ("x:a=1,a=2", "argument 'a' is given twice"),
        ("x:max-reads=1", "'max-reads' is not an argument name"),
        ('x:a="open', "argument 'a': not valid JSON"),
        ('x:a="q"z,b=1', "unexpected 'z' after the JSON value"),
        (":a=1", "expected NAME[:key=value,...][@SETTING]"),
    ],
)
def test_malformed_options_are_one_line_errors(option: str, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)) as err:
        split_agent_option(option)
    assert str(err.value).startswith(f"agents: {option!r}: ") and "\n" not in str(err.value)


# -- properties: whatever the values, formatting by the documented rules and parsing round-trips.

_PLAIN_END = re.compile(r"@[A-Za-z0-9_-]+\Z")


def _needs_quotes(text: str) -> bool:
    """The documented rules: plain text runs to the next comma, is trimmed, reads as JSON
    when it is JSON, and a trailing @WORD is a setting."""
    if not text or text != text.strip() or "," in text or text.startswith(('"', "[", "{")):
        return True
    if _PLAIN_END.search(text):
        return True
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def _format(value: Any) -> str:
    if isinstance(value, str) and not _needs_quotes(value):
        return value
    return json.dumps(value)


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=6,
)
keys = st.from_regex(r"[a-z_][a-z0-9_]{0,8}", fullmatch=True)
names = st.from_regex(r"[a-z][a-z0-9-]{0,12}", fullmatch=True)
# Values an OpenAI-compatible spec or a path would hold: @ : / and no comma.
url_like = st.text(alphabet="abc01:/@.-_", min_size=1).filter(lambda s: not _needs_quotes(s))


@settings(max_examples=300, deadline=None)
@given(
    name=names,
    args=st.dictionaries(keys, json_values | url_like, max_size=4),
    setting=st.none() | st.sampled_from(SETTINGS),
    spaced=st.booleans(),
)
def test_format_then_parse_round_trips(
    name: str, args: dict[str, Any], setting: str | None, spaced: bool
) -> None:
    sep = ", " if spaced else ","
    body = name + (":" + sep.join(f"{k}={_format(v)}" for k, v in args.items()) if args else "")
    option = body + (f"@{setting}" if setting else "")
    parsed = split_agent_option(option)
    assert parsed.name == name
    assert parsed.args == args
    assert parsed.setting == setting
    assert parsed.label == body


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list('ab=,:@/"[]{} 1')) | st.characters(), max_size=30))
def test_any_text_parses_or_is_a_value_error(text: str) -> None:
    try:
        parsed = split_agent_option(text)
    except ValueError as err:
        assert str(err).startswith("agents: ")
    else:
        assert parsed.name and ":" not in parsed.name


# -- every --agent example the documentation shows is valid.

_DOC_AGENT = re.compile(r"""--agent\s+(?:'([^']+)'|"([^"]+)"|([^\s'"`\\]+))""")


def _documented_agents() -> list[tuple[str, str]]:
    found = []
    for path in [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]:
        for match in _DOC_AGENT.finditer(path.read_text(encoding="utf-8")):
            option = next(g for g in match.groups() if g)
            if option.isupper() or option.startswith("NAME"):  # a placeholder: --agent SPEC
                continue
            found.append((path.name, option))
    return found


def test_the_readme_shows_an_openai_compatible_agent() -> None:
    assert ("README.md", README_COMPATIBLE) in _documented_agents()


@pytest.mark.parametrize(("doc", "option"), _documented_agents())
def test_documented_agents_parse_and_pass_the_checks(doc: str, option: str) -> None:
    parse_agent_option(option)
