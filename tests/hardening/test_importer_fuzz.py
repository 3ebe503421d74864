"""Importer input at its worst: ForecastBench lines, Polymarket events, release Parquet rows and
corpus JSONL lines that are malformed, contradictory or empty of text. Each is read (what was
dropped or assumed counted in a note), or refused with one line naming the file, the line or row
and the field; none raises anything else, none is taken silently."""

from __future__ import annotations

import copy
import json
import math
import shutil
import sys
from collections import Counter
from datetime import date
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pastcast.corpus.sources import LoadReport, read_jsonl_documents
from pastcast.errors import FieldError
from pastcast.markets.sources import PolymarketError, load_release, read_forecastbench
from pastcast.markets.sources._polymarket import build_event

FIXTURES = Path(__file__).parents[1] / "markets" / "fixtures"


def _one_line(exc: BaseException) -> str:
    text = str(exc)
    assert "\n" not in text and text.strip(), repr(text)
    return text


# ForecastBench: the first line of the derived file, changed.
FB_LINES: dict[str, tuple[dict[str, Any] | str, str]] = {
    # name: (the fields replaced, or the raw line; what is expected: "ok", a note, or an error)
    "resolved to a string": ({"resolved_to": "1"}, "note:resolution is not 0/1"),
    "resolved to one half": ({"resolved_to": 0.5}, "note:resolution is not 0/1"),
    "resolved to NaN": ({"resolved_to": math.nan}, "note:resolution is not 0/1"),
    "resolved to null": ({"resolved_to": None}, "note:resolution is not 0/1"),
    "resolved to a list": ({"resolved_to": [1]}, "note:resolution is not 0/1"),
    "resolved to a huge integer": ({"resolved_to": 10**400}, "note:resolution is not 0/1"),
    "no id": ({"id": None}, "error:field id"),
    "numeric id": ({"id": 7}, "error:field id"),
    "NUL-only question": ({"question": "\x00\x00"}, "error:field title"),
    "empty question": ({"question": "   "}, "error:field title"),
    "control-only question": ({"question": "\x07\x1b"}, "error:field title"),
    "naive open time": (
        {"market_info_open_datetime": "2025-01-01T08:00:00"},
        "note:timestamps without a UTC offset, read as UTC",
    ),
    "open time not a date": (
        {"market_info_open_datetime": "yesterday"},
        "error:field market_info_open",
    ),
    "open time a number": ({"market_info_open_datetime": 20250101}, "error:field market_info_open"),
    "offset off the calendar": (
        {"market_info_close_datetime": "9999-12-31T23:00:00-05:00"},
        "error:field market_info_close",
    ),
    "close before open": (
        {"market_info_open_datetime": "2025-04-01", "market_info_close_datetime": "2025-03-01"},
        "note:close before open",
    ),
    "not a market source": ({"source": "acled"}, "note:not a market source"),
    "not an object": ("[1, 2, 3]", "error:expected a JSON object"),
    "not JSON": ('{"source": "polymarket", ', "error:not valid JSON"),
    "nested too deep": ("[" * 600 + "]" * 600, "error:not valid JSON"),
    "lone surrogate in the question": ({"question": "Will \ud800 happen?"}, "error:field title"),
    "HTML-only background": ({"background": "<div><br></div>"}, "ok"),
}


def _fb(tmp_path: Path, first: dict[str, Any] | str) -> Path:
    root = tmp_path / "fb"
    shutil.copytree(FIXTURES / "fb", root)
    derived = root / "derived"
    (derived / "values.fixture.csv").rename(derived / "daily_values.csv")
    lines = (derived / "questions.fixture.jsonl").read_text().splitlines()
    (derived / "questions.fixture.jsonl").unlink()
    if isinstance(first, str):
        lines[0] = first
    else:
        lines[0] = json.dumps({**json.loads(lines[0]), **first})
    (derived / "markets_resolved.jsonl").write_text("\n".join(lines) + "\n")
    return root


@pytest.mark.parametrize("name", list(FB_LINES))
def test_a_forecastbench_line_is_read_noted_or_refused_naming_it(tmp_path: Path, name: str) -> None:
    change, expected = FB_LINES[name]
    root = _fb(tmp_path, change)
    kind, _, what = expected.partition(":")
    if kind == "error":
        with pytest.raises(FieldError) as err:
            read_forecastbench(root)
        message = _one_line(err.value)
        assert "markets_resolved.jsonl:1:" in message and what in message, message
        return
    result = read_forecastbench(root)
    if kind == "note":
        assert result.skipped[what] >= 1, result.skipped
    else:
        assert "polymarket:0xaaa" in {h.event.id for h in result.histories}


# Polymarket: a binary Gamma event, changed.
def _market(**kw: Any) -> dict[str, Any]:
    base = {
        "id": "b",
        "question": "Will X?",
        "conditionId": "0xcb",
        "outcomes": '["Yes", "No"]',
        "outcomePrices": '["1", "0"]',
        "clobTokenIds": '["tok-yes", "tok-no"]',
        "startDate": "2025-06-01T00:00:00Z",
        "endDate": "2025-06-20T00:00:00Z",
        "closedTime": "2025-06-18T00:00:00Z",
        "umaResolutionStatus": "resolved",
    }
    return base | kw


def _gamma(**market: Any) -> dict[str, Any]:
    return {"id": "101", "slug": "x", "title": "Will X?", "markets": [_market(**market)]}


POLYMARKET: dict[str, tuple[dict[str, Any], str]] = {
    "terminal NaN": (_gamma(outcomePrices='["NaN", "0"]'), "excluded:not a probability"),
    "terminal Infinity": (_gamma(outcomePrices='["Infinity", "0"]'), "excluded:not a probability"),
    "terminal negative": (_gamma(outcomePrices='["-3", "4"]'), "excluded:not a probability"),
    "terminal above 1": (_gamma(outcomePrices='["7", "0"]'), "excluded:not a probability"),
    "terminal not a number": (_gamma(outcomePrices='["abc", "0"]'), "error:outcomePrices"),
    "prices not JSON": (_gamma(outcomePrices="[1, "), "error:outcomePrices"),
    "prices not aligned": (_gamma(outcomePrices='["1"]'), "error:not index-aligned"),
    "no Yes outcome": (_gamma(outcomes='["Up", "Down"]'), "excluded:not Yes/No"),
    "start not a date": (_gamma(startDate="soon"), "error:field startDate"),
    "no dates": (_gamma(startDate=None, endDate=None, closedTime=None), "excluded:missing"),
    "NUL-only title": (
        {**_gamma(question="\x00"), "title": "\x00\x00"},
        "error:field title",
    ),
    "unresolved by the oracle": (_gamma(umaResolutionStatus="disputed"), "excluded:not resolved"),
    "no markets": ({"id": "101", "markets": []}, "excluded:no markets"),
    "duplicate option titles": (
        {
            "id": "202",
            "title": "Who?",
            "negRisk": True,
            "markets": [_market(id="a", groupItemTitle="A"), _market(id="b", groupItemTitle="A")],
        },
        "excluded:not unique",
    ),
    "two winners": (
        {
            "id": "202",
            "title": "Who?",
            "negRisk": True,
            "markets": [_market(id="a", groupItemTitle="A"), _market(id="b", groupItemTitle="B")],
        },
        "excluded:not exactly one YES",
    ),
}


@pytest.mark.parametrize("name", list(POLYMARKET))
def test_a_polymarket_event_is_built_excluded_or_refused_naming_it(name: str) -> None:
    event, expected = POLYMARKET[name]
    kind, _, what = expected.partition(":")
    if kind == "error":
        with pytest.raises(PolymarketError) as err:
            build_event(copy.deepcopy(event))
        assert what in _one_line(err.value), str(err.value)
        return
    built = build_event(copy.deepcopy(event))
    assert isinstance(built, str) and what in built, built


# Release Parquet rows, written as the release tests write them.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "markets"))
from release_factories import release_row, write_release  # noqa: E402


def _row(**kw: Any) -> dict[str, Any]:
    return release_row("e", **({"slug": "s", "title": "Will it?", "body": ""} | kw))


RELEASE: dict[str, tuple[dict[str, Any], str]] = {
    "unknown belief kind": (_row(belief_kind="scalar"), "error:field belief_kind"),
    "label not an option": (_row(resolved_label="Maybe"), "error:field resolved_label"),
    "NUL-only title": (_row(title="\x00", slug=None), "error:field title"),
    "close before start": (_row(close_date=date(2025, 6, 1)), "error:close_time"),
    "crowd above 1": (_row(crowd_probabilities=[[1.5, 0.6], [0.2, 0.8]]), "error:probs"),
    "crowd negative": (_row(crowd_probabilities=[[-0.1, 0.6], [0.2, 0.8]]), "error:probs"),
    "crowd NaN is unpriced": (_row(crowd_probabilities=[[math.nan, 0.6], [0.2, 0.8]]), "ok:2"),
    "crowd misaligned": (_row(crowd_probabilities=[[0.4], [0.2, 0.8]]), "error:not aligned"),
    "crowd per date": (_row(crowd_probabilities=[[0.4, 0.6]]), "error:one entry per forecast"),
    "dates before the opening": (
        _row(forecast_dates=[date(2025, 6, 1), date(2025, 7, 20)]),
        "note:before the question opened",
    ),
    "dates after the close": (
        _row(forecast_dates=[date(2025, 7, 5), date(2025, 9, 1)]),
        "note:at or after the resolution",
    ),
}


def _release(tmp_path: Path, row: dict[str, Any]) -> Path:
    return write_release(tmp_path, [row], [])


@pytest.mark.parametrize("name", list(RELEASE))
def test_a_release_row_is_read_noted_or_refused_naming_it(tmp_path: Path, name: str) -> None:
    row, expected = RELEASE[name]
    root = _release(tmp_path, row)
    kind, _, what = expected.partition(":")
    notes: Counter[str] = Counter()
    if kind == "error":
        with pytest.raises(FieldError) as err:
            load_release(root, notes=notes)
        message = _one_line(err.value)
        assert "train.parquet: row 0:" in message and what in message, message
        return
    ds = load_release(root, notes=notes)
    if kind == "note":
        assert any(what in reason for reason in notes), notes
        assert len(ds.steps_of("e")) == 1
    else:
        assert len(ds.steps_of("e")) == int(what) and not notes


@pytest.mark.parametrize(
    ("damage", "says"),
    [
        (lambda q: (q / "eval.parquet").unlink(), "eval.parquet: missing"),
        (lambda q: (q / "train.parquet").write_bytes(b"PAR1 not really"), "not a readable Parquet"),
        (lambda q: (q / "train.parquet").write_bytes(b""), "not a readable Parquet"),
        (
            lambda q: pq.write_table(pa.table({"event_id": ["e"]}), q / "train.parquet"),
            "missing column",
        ),
    ],
)
def test_a_damaged_release_file_is_refused_naming_it(
    tmp_path: Path, damage: Any, says: str
) -> None:
    root = _release(tmp_path, _row())
    damage(root / "questions")
    with pytest.raises(FieldError) as err:
        load_release(root)
    assert says in _one_line(err.value)


# Corpus JSONL lines.
GOOD = {"id": "a", "timestamp": "2024-03-01T12:00:00Z", "title": "T", "text": "body"}
JSONL: dict[str, tuple[bytes, str]] = {
    "lone surrogate in the text": (
        b'{"id": "s", "timestamp": "2024-03-01", "title": "T", "text": "\\ud800"}',
        "field text: a lone surrogate",
    ),
    "lone low surrogate in the title": (
        b'{"id": "s", "timestamp": "2024-03-01", "title": "\\udfff", "text": "x"}',
        "field title: a lone surrogate",
    ),
    "reversed surrogate pair": (
        b'{"id": "s", "timestamp": "2024-03-01", "title": "T", "text": "\\udc00\\ud800"}',
        "field text: a lone surrogate",
    ),
    "bytes not UTF-8": (
        b'{"id": "s", "timestamp": "2024-03-01", "title": "\xff", "text": ""}',
        "UTF-8",
    ),
    "nested too deep": (b"[" * 600 + b"]" * 600, "invalid JSON"),
    "timestamp off the calendar": (
        b'{"id": "s", "timestamp": "0001-01-01T00:00:00+01:00", "title": "", "text": ""}',
        "field timestamp",
    ),
    "timestamp a number": (
        b'{"id": "s", "timestamp": 1700000000, "title": "", "text": ""}',
        "field timestamp: expected a string",
    ),
    "blank id": (b'{"id": "  ", "timestamp": "2024-03-01", "title": "", "text": ""}', "field id"),
    "unknown field": (
        b'{"id": "s", "timestamp": "2024-03-01", "title": "", "text": "", "score": 1}',
        "field score: unknown field",
    ),
    "text a list": (
        b'{"id": "s", "timestamp": "2024-03-01", "title": "", "text": ["a"]}',
        "field text: expected a string",
    ),
}


@pytest.mark.parametrize("name", list(JSONL))
def test_a_bad_corpus_line_is_one_error_or_skipped_and_counted(tmp_path: Path, name: str) -> None:
    line, says = JSONL[name]
    path = tmp_path / "docs.jsonl"
    later = {**GOOD, "id": "b"}
    path.write_bytes(json.dumps(GOOD).encode() + b"\n" + line + b"\n" + json.dumps(later).encode())
    with pytest.raises(FieldError) as err:
        list(read_jsonl_documents(path))
    message = _one_line(err.value)
    assert message.startswith(f"{path}:2: ") and says in message, message
    report = LoadReport()
    docs = list(read_jsonl_documents(path, lenient=True, report=report))
    assert [d.id for d in docs] == ["a", "b"] and report.skipped == 1


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.text(max_size=40),
            st.dictionaries(
                st.sampled_from(["id", "timestamp", "title", "text", "url", "x"]),
                st.one_of(st.text(max_size=12), st.integers(), st.none()),
                max_size=5,
            ).map(json.dumps),
        ),
        max_size=6,
    )
)
def test_any_corpus_lines_are_read_or_refused_in_one_line(lines: list[str]) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "docs.jsonl"
        path.write_text("\n".join(lines), encoding="utf-8", errors="surrogatepass")
        for lenient in (False, True):
            try:
                docs = list(read_jsonl_documents(path, lenient=lenient))
            except FieldError as exc:
                assert _one_line(exc).startswith(f"{path}:")
            else:
                for doc in docs:
                    doc.text.encode("utf-8")  # every kept document is text an index can hold


@pytest.mark.parametrize("other", [[1], {"v": 1}, 10**400, math.nan, True, "1"])
def test_repeated_lines_with_odd_outcomes_are_compared_not_crashed_on(
    tmp_path: Path, other: Any
) -> None:
    root = _fb(tmp_path, {})
    path = root / "derived" / "markets_resolved.jsonl"
    first = json.loads(path.read_text().splitlines()[0])
    with path.open("a") as fh:
        fh.write(json.dumps({**first, "resolved_to": other}) + "\n")
    result = read_forecastbench(root)
    assert result.skipped["resolved both ways, dropped: polymarket:0xaaa"] == 1
    assert "polymarket:0xaaa" not in {h.event.id for h in result.histories}
