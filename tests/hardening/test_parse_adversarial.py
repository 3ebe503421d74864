"""Model output parsing on adversarial text: it never raises and takes linear time.

Each 1 MB case must parse in well under a second of CPU time (a quadratic scan takes hours;
CPU time, so that other work on the machine does not count); the brace scanner is checked
against the straightforward quadratic one it replaces.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pastcast.agents import parse_forecast, parse_notebook
from pastcast.agents._answer_reader import _balanced_objects, _tagged, read_answer
from pastcast.records import FAILURE_REASONS, Forecast

MB = 1_000_000
YN = ("Yes", "No")

ADVERSARIAL: dict[str, str] = {
    "brackets": "[" * MB,
    "braces": "{" * MB,
    "closing braces": "}" * MB,
    "braces in a fence": "```json\n" + "{" * MB,
    "fences": "```" * (MB // 3),
    "fence openings": "```\n" * (MB // 4),
    "fence with a long language": "```" + "a" * MB,
    "answer tags": "<answer>" * (MB // 8),
    "answer tags and braces": "<answer>{" * (MB // 9),
    "notebook tags": "<notebook>" * (MB // 10),
    "think tags": "<think>" * (MB // 7),
    "quote braces": '{"' * (MB // 2),
    "escapes": '{"' + "\\" * MB,
    "huge integer": '{"Yes": ' + "9" * MB + ', "No": 1}',
    "integer above the digit limit": '{"Yes": ' + "9" * 4301 + ', "No": 1}',
    "integer beyond a float": '{"Yes": 1' + "0" * 400 + ', "No": 1}',
    "percent list": "{" + "1%," * (MB // 3) + "}",
    "digit run": "{" + "1" * MB + "}",
    "digits then percent": "{" + "1" * MB + "%}",
    "nested keys": '{"a":' * (MB // 5),
    "nested lists in an object": '{"Yes": ' + "[" * (MB // 2) + "]" * (MB // 2) + "}",
    "bare objects": "{x}" * (MB // 3),
    "unary minus": '{"Yes": ' + "-" * MB + "1}",
    "words": "{" + "true " * (MB // 5) + "}",
    "NUL bytes": "\x00" * MB,
    "lone surrogates": '{"Yes": 0.5, "No": 0.5, "rationale": "\ud800' + "\udfff" * 1000 + '"}',
}


# A megabyte read in linear time takes under a second of CPU here (0.7-1.0 s for the slowest
# form); a quadratic reading of it would take hours, so a 3 s bound tells them apart on a
# loaded machine as well.
LINEAR_S = 3.0


def _timed(fn: Callable[[], object]) -> float:
    start = time.process_time()
    fn()
    return time.process_time() - start


@pytest.mark.timeout(60)
@pytest.mark.parametrize("name", list(ADVERSARIAL))
def test_parse_forecast_is_linear_and_never_raises(name: str) -> None:
    text = ADVERSARIAL[name]
    out: list[Forecast] = []
    took = _timed(lambda: out.append(parse_forecast(text, YN)))
    assert took < LINEAR_S, f"{name}: {took:.2f} s"
    fc = out[0]
    assert fc.raw_text == text
    assert fc.usable or fc.failure_reason in FAILURE_REASONS


@pytest.mark.timeout(60)
@pytest.mark.parametrize("name", list(ADVERSARIAL))
def test_notebook_parsing_is_linear_and_never_raises(name: str) -> None:
    text = ADVERSARIAL[name]
    took = _timed(lambda: parse_notebook(text))
    assert took < LINEAR_S, f"{name}: {took:.2f} s"


def test_numbers_a_float_cannot_hold_are_invalid_probabilities() -> None:
    for name in ("huge integer", "integer above the digit limit", "integer beyond a float"):
        assert parse_forecast(ADVERSARIAL[name], YN).failure_reason == "invalid_probability", name


def test_a_complete_answer_after_adversarial_text_is_still_found() -> None:
    answer = '{"Yes": 0.7, "No": 0.3}'
    for prefix in ("{" * 10_000, '{"' * 5_000, "```" + "a" * 10_000, "<answer>" * 1_000):
        fc = parse_forecast(prefix + " " + answer, YN)
        assert fc.usable, (prefix[:20], fc.failure_reason)
        assert fc.probs["Yes"] == pytest.approx(0.7)


def test_tagged_spans_match_the_lazy_regex() -> None:
    text = "<answer>a</answer> <ANSWER>b</Answer> <answer>c <answer>d</answer> <answer>e"
    assert [text[a:b] for a, b in _tagged(text, "answer")] == ["a", "b", "c <answer>d"]


# The scanner it replaces: a scan from every opening brace, quadratic on unclosed braces.
def _reference_balanced_objects(text: str) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    i, n = 0, len(text)
    while i < n:
        start = text.find("{", i)
        if start < 0:
            break
        depth, in_str, esc, j = 0, False, False, start
        end = -1
        while j < n:
            c = text[j]
            if in_str:
                if esc:
                    esc = False
                elif c == "\\":
                    esc = True
                elif c == '"':
                    in_str = False
            elif c == '"':
                in_str = True
            elif c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
                if depth == 0:
                    end = j + 1
                    break
            j += 1
        if end < 0:
            i = start + 1
            continue
        spans.append((start, end))
        i = end
    return spans


@settings(max_examples=1500, deadline=None)
@given(st.text(alphabet='{}"\\ab', max_size=40))
def test_brace_scanner_matches_the_reference(text: str) -> None:
    assert _balanced_objects(text) == _reference_balanced_objects(text)


@settings(max_examples=400, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "{",
                "}",
                "[",
                "]",
                '"',
                "'",
                "\\",
                "```",
                "```json\n",
                "<answer>",
                "</answer>",
                "<notebook>",
                "</notebook>",
                "<think>",
                "</think>",
                '"Yes"',
                '"No"',
                ":",
                ",",
                "0.4",
                "60%",
                "9" * 5000,
                "1e999",
                "-",
                "true",
                "null",
                "NaN",
                " ",
                "\n",
                "\x00",
                "\ud800",
                '"probabilities":',
                '"notebook":',
                '"assessment":',
            ]
        ),
        max_size=60,
    ).map("".join)
)
def test_json_ish_text_never_raises(text: str) -> None:
    fc = parse_forecast(text, YN)
    assert fc.usable or fc.failure_reason in FAILURE_REASONS
    parse_notebook(text)
    reply = read_answer(text, section="notebook")
    assert all(isinstance(obj, dict) for obj in read_answer(text).objects())
    assert all(isinstance(obj, dict) for obj in reply.objects())
    assert isinstance(reply.cut_short, bool)


def test_replies_are_read_by_many_threads_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # A reply's reading is cached on it without a lock shared by every reply: a thread reading
    # a long reply holds back no other thread's (functools.cached_property on Python 3.11 did).
    import threading

    from pastcast.agents import _answer_reader

    inside, release = threading.Event(), threading.Event()
    real = _answer_reader._find_blocks

    def find(body: str) -> tuple[_answer_reader._Block, ...]:
        if "slow" in body:
            inside.set()
            release.wait(5)
        return real(body)

    monkeypatch.setattr(_answer_reader, "_find_blocks", find)
    slow = read_answer('slow {"a": 1}')
    reader = threading.Thread(target=lambda: slow.obj)
    reader.start()
    try:
        assert inside.wait(5)
        started = time.monotonic()
        fast = read_answer('{"b": 2}')
        assert fast.obj == {"b": 2} and fast.failure is None
        assert time.monotonic() - started < 2.0
    finally:
        release.set()
        reader.join()
    assert slow.obj == {"a": 1}
    assert slow.obj is slow.obj  # read once, then kept
