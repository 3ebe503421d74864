"""Sibling answers: a step whose question names the resolved answer of another event still open
at its cutoff is found by the dataset audit (and dropped on request at import); a similar string
that is no answer, or an answer already public, is not."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from typer.testing import CliRunner

from pastcast.audit import audit_texts
from pastcast.cli import app
from pastcast.dataset import Dataset, save_dataset, with_content_id
from pastcast.markets import MarketHistory, build_dataset, make_schedule, sibling_answers
from pastcast.records import DailyBelief, Event, Resolution, StepSpec

PRIZE = ("María Corina Machado", "Donald Trump", "Greta Thunberg", "Other")


def at(s: str) -> datetime:
    return datetime.fromisoformat(s).replace(tzinfo=UTC)


def _event(eid: str, title: str, *, labels: tuple[str, ...] = ("Yes", "No"), **kw: str) -> Event:
    return Event(
        id=eid, title=title, kind="multi" if len(labels) > 2 else "binary", labels=labels,
        open_time=at("2025-09-01"), close_time=at("2025-12-31"), **kw,  # type: ignore[arg-type]
    )  # fmt: skip


def _dataset(*extra: Event, steps: tuple[str, ...] = ("2025-10-01", "2025-10-15")) -> Dataset:
    prize = _event("prize", "Who will win the 2025 Nobel Peace Prize?", labels=PRIZE)
    other = _event("cup", "Who wins the cup?", labels=("Other", "Team Blue", "Team Red"))
    events = (prize, other, *extra)
    resolutions = {
        "prize": Resolution(event_id="prize", label=PRIZE[0], resolved_at=at("2025-10-10")),
        "cup": Resolution(event_id="cup", label="Other", resolved_at=at("2025-11-10")),
    }
    for e in extra:
        resolutions[e.id] = Resolution(event_id=e.id, label="No", resolved_at=at("2025-12-31"))
    plan = tuple(
        StepSpec(event_id=e.id, step_index=i, cutoff=at(day))
        for e in extra
        for i, day in enumerate(steps)
    )
    return Dataset("t", events, resolutions, {}, plan)


def test_a_planted_sibling_answer_is_found_while_the_sibling_is_open() -> None:
    planted = _event(
        "speech", "Will MARÍA-CORINA   MACHADO address the UN General Assembly in 2025?"
    )
    (pair,) = sibling_answers(_dataset(planted))
    assert (pair.event_id, pair.step_index, pair.sibling_id) == ("speech", 0, "prize")
    assert pair.answer == PRIZE[0] and pair.field == "title"  # 10-15: the prize is public


def test_similar_strings_that_name_no_answer_are_not_found() -> None:
    lookalikes = (
        _event("a", "Will Machado's party win the vote?"),  # part of the label only
        _event("b", "Will María Corina Machados be elected?"),  # not the same word
        _event("c", "Will Donald Trump or María Corina Machado win the prize?"),  # the race
        _event("d", "Will Greta Thunberg sail again?"),  # a losing option
        _event("e", "Will any Other team win?", description="Other"),  # a generic label
    )
    assert sibling_answers(_dataset(*lookalikes)) == ()


def test_the_answer_in_a_description_is_found_and_the_audit_reports_the_rate() -> None:
    planted = _event("speech", "Will she speak at the UN?", description="After María Corina "
                     "Machado's prize, will she speak?")  # fmt: skip
    plain = _event("plain", "Will it rain?")
    audit = audit_texts(_dataset(planted, plain))
    assert audit.steps == 4 and audit.sibling_steps == 1 and audit.sibling_rate == 0.25
    assert audit.sibling_answers[0].field == "description"
    assert "names 'María Corina Machado', the answer of prize" in audit.findings()[0]


def _history(event: Event, resolution: Resolution) -> MarketHistory:
    labels = event.labels
    beliefs = tuple(
        DailyBelief(
            event_id=event.id, day=(event.open_time + timedelta(days=i)).date(),
            probs={labels[0]: 0.3 + 0.002 * i, labels[1]: 0.7 - 0.002 * i},
        )
        for i in range(100)
    )  # fmt: skip
    return MarketHistory(event, resolution, beliefs)


def test_an_import_drops_the_steps_naming_an_open_sibling_answer_when_asked() -> None:
    ds = _dataset(_event("speech", "Will María Corina Machado address the UN?"))
    histories = [_history(e, ds.resolutions[e.id]) for e in ds.events]
    schedule = make_schedule("causal-lookback")
    kept, report = build_dataset(histories, name="t", schedule=schedule)
    assert "sibling answers" not in {s.stage for s in report.funnel}
    named = [s for s in sibling_answers(kept) if s.event_id == "speech"]
    assert named  # steps before 10-10 name the prize's winner
    dropped, report = build_dataset(histories, name="t", schedule=schedule,
                                    drop_sibling_answers=True)  # fmt: skip
    stage = {s.stage: s for s in report.funnel}["sibling answers"]
    assert (
        stage.note.startswith(f"{len(named)} of ")
        and "names 'María Corina Machado'" in (stage.examples[0])
    )
    assert sibling_answers(dropped) == ()
    assert all(s.cutoff >= at("2025-10-10") for s in dropped.steps if s.event_id == "speech")


def test_the_dataset_audit_command_reports_the_rate_and_the_pairs(tmp_path: Path) -> None:
    planted = _event("speech", "Will María Corina Machado address the UN?")
    ds = with_content_id(_dataset(planted, _event("plain", "Will it rain?")), "t")
    save_dataset(ds, tmp_path / "ds")
    result = CliRunner().invoke(app, ["audit", "dataset", str(tmp_path / "ds"), "--json"])
    assert result.exit_code == 1, result.output
    out = json.loads(result.output)
    assert out["sibling_steps"] == 1 and out["sibling_rate"] == 0.25
    assert out["sibling_answers"][0]["sibling_id"] == "prize"
    clean = CliRunner().invoke(app, ["audit", "dataset", "world"])
    assert clean.exit_code == 0 and "sibling answers: 0 steps" in clean.output
