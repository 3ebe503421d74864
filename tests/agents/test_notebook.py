"""Belief notebook: parsing, canonical text, validation with typed problems, carry-forward, and
the answer schema derived from the record."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime

from hypothesis import given, settings
from hypothesis import strategies as st

from pastcast.agents._notebook import (
    NOTEBOOK_SCHEMA,
    carry_forward,
    check_notebook,
    future_entries,
    memory_answer_template,
    parse_notebook,
)
from pastcast.records import Assessment, LedgerEntry, Notebook, NotebookProblem

LABELS = ("Yes", "No")

text_st = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=30)
entries = st.builds(
    LedgerEntry,
    id=text_st,
    claim=text_st,
    date_observed=st.dates(date(2020, 1, 1), date(2026, 1, 1)),
    source=st.text(max_size=20),
    supports=st.lists(st.sampled_from(LABELS), max_size=2, unique=True).map(tuple),
    rules_out=st.lists(st.sampled_from(LABELS), max_size=2, unique=True).map(tuple),
    status=st.sampled_from(["active", "superseded"]),
)
notebooks = st.builds(
    Notebook,
    assessment=st.builds(
        Assessment,
        probabilities=st.dictionaries(st.sampled_from(LABELS), st.floats(0, 1), min_size=1),
        summary=st.text(max_size=50),
        open_questions=st.lists(text_st, max_size=3).map(tuple),
    ),
    evidence_ledger=st.lists(entries, max_size=4).map(tuple),
)


@settings(max_examples=100, deadline=None)
@given(notebooks)
def test_render_parse_round_trip(nb: Notebook) -> None:
    text = nb.text()
    assert parse_notebook(text) == nb
    assert parse_notebook(f"Some prose.\n<notebook>\n{text}\n</notebook>\nmore prose") == nb
    answer = json.dumps({"probabilities": {"Yes": 0.5, "No": 0.5}, "notebook": json.loads(text)})
    assert parse_notebook(f"Final:\n```json\n{answer}\n```") == nb


def _nb(*dates: str, supports: tuple[str, ...] = ("Yes",)) -> Notebook:
    return Notebook(
        assessment=Assessment(probabilities={"Yes": 0.6, "No": 0.4}, open_questions=("q",)),
        evidence_ledger=tuple(
            LedgerEntry(
                id=f"E{i}", claim="c", date_observed=date.fromisoformat(d), supports=supports
            )
            for i, d in enumerate(dates)
        ),
    )


def test_ledger_dates_follow_cutoff_semantics() -> None:
    nb = _nb("2024-03-04", "2024-03-05")
    # Midnight cutoff: day 2024-03-05 has not begun to be visible.
    assert [e.id for e in future_entries(nb, datetime(2024, 3, 5, tzinfo=UTC))] == ["E1"]
    assert future_entries(nb, "2024-03-05")
    # Mid-day cutoff: the current day is partly visible.
    assert not future_entries(nb, datetime(2024, 3, 5, 9, tzinfo=UTC))
    assert not future_entries(nb, date(2024, 3, 6))


def test_check_reports_typed_problems() -> None:
    cutoff = "2024-04-01"
    assert check_notebook(_nb("2024-03-01").text(), LABELS, cutoff).ok
    bad_label = check_notebook(_nb("2024-03-01", supports=("Maybe",)).text(), LABELS, cutoff)
    assert not bad_label.ok
    assert bad_label.problems == (
        NotebookProblem(kind="unknown_labels", detail="ledger entry E0: unknown labels ['Maybe']"),
    )
    late = check_notebook(_nb("2024-04-02").text(), LABELS, cutoff)
    assert not late.ok
    assert [p.kind for p in late.problems] == ["future_dates"]
    assert "after the cutoff" in str(late.problems[0])
    dup = json.loads(_nb("2024-03-01", "2024-03-02").text())
    dup["evidence_ledger"][1]["id"] = "E0"
    assert [p.kind for p in check_notebook(json.dumps(dup), LABELS, cutoff).problems] == [
        "duplicate_ids"
    ]
    assert check_notebook("no notebook here", LABELS, cutoff).problems == (
        NotebookProblem(kind="unparseable"),
    )


def test_a_reply_cut_inside_its_notebook_is_truncated() -> None:
    cutoff = "2024-04-01"
    whole = json.dumps(
        {"probabilities": {"Yes": 0.6, "No": 0.4}, "notebook": json.loads(_nb("2024-03-01").text())}
    )
    assert check_notebook(whole, LABELS, cutoff).ok
    for cut in (whole[: len(whole) // 2], "<notebook>\n" + _nb("2024-03-01").text()[:40]):
        (problem,) = check_notebook(cut, LABELS, cutoff).problems
        assert problem.kind == "truncated", cut
    # A reply that never began a notebook is unparseable, not truncated.
    assert check_notebook('{"probabilities": {"Yes": 0.6', LABELS, cutoff).problems[0].kind == (
        "unparseable"
    )


def test_the_answer_schema_is_derived_from_the_record() -> None:
    assert Notebook.answer_schema() == NOTEBOOK_SCHEMA
    assert "$ref" not in json.dumps(NOTEBOOK_SCHEMA)
    assert set(NOTEBOOK_SCHEMA["properties"]) == set(Notebook.model_fields)
    entry = NOTEBOOK_SCHEMA["properties"]["evidence_ledger"]["items"]
    assert set(entry["properties"]) == set(LedgerEntry.model_fields) == set(entry["required"])
    assert entry["properties"]["status"]["enum"] == ["active", "superseded"]
    assessment = NOTEBOOK_SCHEMA["properties"]["assessment"]
    assert set(assessment["properties"]) == set(Assessment.model_fields)
    probabilities = assessment["properties"]["probabilities"]
    assert probabilities == {"type": "object", "additionalProperties": {"type": "number"}}


def test_the_text_shows_probabilities_as_a_map() -> None:
    text = _nb("2024-03-01").text()
    assert json.loads(text)["assessment"]["probabilities"] == {"Yes": 0.6, "No": 0.4}
    assert Notebook.model_validate_json(text) == _nb("2024-03-01")


def test_extra_keys_are_dropped_but_bad_dates_fail() -> None:
    obj = json.loads(_nb("2024-03-01").text())
    obj["assessment"]["confidence"] = 0.9
    obj["evidence_ledger"][0]["url"] = "x"
    assert parse_notebook(json.dumps(obj)) == _nb("2024-03-01")
    obj["evidence_ledger"][0]["date_observed"] = "early March"
    assert parse_notebook(json.dumps(obj)) is None


def test_malformed_notebook_is_carried_forward_unchanged() -> None:
    previous = _nb("2024-03-01")
    kept, check = carry_forward(previous, "{not a notebook", LABELS, "2024-04-01")
    assert kept == previous
    assert not check.ok
    kept, check = carry_forward(previous, _nb("2024-05-01").text(), LABELS, "2024-04-01")
    assert kept == previous  # future-dated evidence is not accepted either
    new = _nb("2024-03-20")
    kept, check = carry_forward(previous, "ok:\n" + new.text(), LABELS, "2024-04-01")
    assert check.ok
    assert kept == new
    first, check = carry_forward(None, "garbage", LABELS, "2024-04-01")
    assert first is None
    assert not check.ok


def test_the_answer_template_names_every_field_of_the_record() -> None:
    # The prompt's example is prose for the model; it must still be a notebook of the record.
    text = memory_answer_template(LABELS).replace("<probability>", "0.5")
    text = text.replace("<YYYY-MM-DD>", "2024-03-01")
    nb = json.loads(text)["notebook"]
    assert set(nb) == set(Notebook.model_fields)
    assert set(nb["assessment"]) == set(Assessment.model_fields)
    assert set(nb["evidence_ledger"][0]) == set(LedgerEntry.model_fields)
    assert check_notebook(text, LABELS, "2024-04-01").ok
