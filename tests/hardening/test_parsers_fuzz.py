"""The parsers behind the options and files, fuzzed directly with generated inputs: each either
returns a value or raises its one-line ValueError; JSON nested past the limit is refused before
the C decoder recurses, even where a library has raised the interpreter's recursion limit."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pastcast import safejson
from pastcast.app import split_agent_option
from pastcast.errors import FieldError
from pastcast.markets import TemporalSplit
from pastcast.runlog import read_run_log

SRC = Path(__file__).parents[2] / "src"
JSONISH = st.text(alphabet='[]{}":,0123456789.eE-+\\ntrufalsN \x00\udcff', max_size=200)


def _one_line(exc: BaseException) -> None:
    text = str(exc)
    assert "\n" not in text and text.strip(), repr(text)


@settings(max_examples=400, deadline=None)
@given(st.one_of(JSONISH, st.binary(max_size=200)))
def test_safejson_refuses_with_a_decode_error_or_returns(data: str | bytes) -> None:
    try:
        safejson.loads(data)
    except json.JSONDecodeError as exc:
        if isinstance(exc, safejson.JsonRefused):
            _one_line(exc)


@pytest.mark.parametrize(
    "text",
    ["[" * 600, '{"a":' * 600, "[" * 100_000 + "]" * 100_000, '{"k": "' + "[" * 5000 + '"}'],
)
def test_nesting_is_measured_outside_strings(text: str) -> None:
    if text.startswith('{"k"'):  # brackets inside a string do not nest
        assert safejson.loads(text) == {"k": "[" * 5000}
        return
    with pytest.raises(json.JSONDecodeError, match="nested deeper than 512"):
        safejson.loads(text)


def test_deep_json_is_refused_even_under_a_raised_recursion_limit() -> None:
    # web3 sets the limit to 100,000; json's C decoder then overflows the C stack first.
    code = (
        "import sys; sys.setrecursionlimit(100_000)\n"
        "from pastcast import safejson\n"
        "for text in ('[' * 300_000, '{\"a\":' * 300_000):\n"
        "    try:\n"
        "        safejson.loads(text)\n"
        "    except ValueError as exc:\n"
        "        print(exc)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PYTHONPATH": str(SRC)},
    )
    assert done.returncode == 0, done.stderr[-500:]
    assert done.stdout.count("nested deeper than 512 levels") == 2


AGENT_TEXT = st.text(alphabet="abc-_:=,@\"'[]{}0123456789 .\\", max_size=80)


@settings(max_examples=500, deadline=None)
@given(st.one_of(AGENT_TEXT, st.text(max_size=80)))
def test_agent_options_split_or_raise_one_line(text: str) -> None:
    try:
        split_agent_option(text)
    except ValueError as exc:
        _one_line(exc)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.dates().map(str), st.text(max_size=12)), max_size=4).map(",".join))
def test_temporal_splits_parse_or_raise_one_line(text: str) -> None:
    try:
        split = TemporalSplit.parse(text)
    except ValueError as exc:
        _one_line(exc)
    else:
        assert split.t0 <= split.t1 <= split.t2


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=300))
def test_run_logs_of_any_bytes_are_read_or_refused_in_one_line(data: bytes) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "run.jsonl"
        log.write_bytes(data)
        (Path(tmp) / "run.header.json").write_bytes(data[:100])
        try:
            read_run_log(log)
        except FieldError as exc:
            _one_line(exc)
