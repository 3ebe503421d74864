"""Question texts as of the cutoff: dated updates written after a step's cutoff never reach the
model at that step (checked in the request a scripted model receives); a text taken after the
cutoff with an undated edit drops the step, counted in the funnel."""

from __future__ import annotations

import json
import re
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from markets_factories import at, binary, gamma_event

from pastcast.agents import NoToolsAgent
from pastcast.dataset import Dataset, body_as_of, find_edits
from pastcast.env import ForecastEnv
from pastcast.markets import MarketHistory, build_dataset, make_schedule
from pastcast.markets.sources import read_text_versions
from pastcast.markets.sources._polymarket import build_event
from pastcast.models import ScriptedModel
from pastcast.records import StepSpec

ANSWER = '{"probabilities": {"Yes": 0.5, "No": 0.5}}'


def _sent(ds: Dataset, step: StepSpec) -> str:
    """Everything the model is sent at ``step``: the request a scripted model received."""
    model = ScriptedModel([ANSWER], cycle=True)
    NoToolsAgent(model).forecast(ForecastEnv(ds, None).reset(step))
    assert model.requests
    return "\n".join(m.content for r in model.requests for m in r.messages)


@pytest.mark.parametrize(
    ("text", "header", "day"),
    [
        ("Base.\n\nUpdate 2025-06-22: later", "Update 2025-06-22:", "2025-06-22"),
        ("Base. UPDATE (June 22, 2025): more", "UPDATE (June 22, 2025):", "2025-06-22"),
        ("Base.\nClarification (2025-06-22): x", "Clarification (2025-06-22):", "2025-06-22"),
        ("Base.\nEDIT 6/22/25 - also", "EDIT 6/22/25", "2025-06-22"),
        ("Base. [Edit May 6, 2025]:  For the record", "[Edit May 6, 2025]:", "2025-05-06"),
        ("Base.\nUpdate 2024-27-12 (PST): - If", "Update 2024-27-12 (PST):", "2024-12-27"),
        ("Base.\nMOD EDIT (Nov 2, 2025 - @mod)\n\nThis", "MOD EDIT (Nov 2, 2025 - @mod)",
         "2025-11-02"),
        ("Base.\nUpdate - Sep 5, 2025: X was cancelled.", "Update - Sep 5, 2025:", "2025-09-05"),
        ("Base.\nUpdate 2 (September 5, 2025): x", "Update 2 (September 5, 2025):",
         "2025-09-05"),
        ("Rules. Edit: now counts too", "Edit:", None),
        ("Rules (edit: he must stay) and more.", "(edit:", None),
        ("Rules.\nEdit (Sep 5): no year, so not dated", "Edit (Sep 5):", None),
        ("Rules.\nUpdate 05.09.2025: day or month first?", "Update 05.09.2025:", None),
    ],
)  # fmt: skip
def test_the_common_edit_forms_are_found_and_dated(text: str, header: str, day: str | None) -> None:
    edit = find_edits(text)[0]
    assert edit.header == header
    assert (str(edit.day) if edit.day else None) == day


@pytest.mark.parametrize(
    "text", ["Resolves Yes if the update frequency is daily.", "Updated rules apply to the count."]
)
def test_words_in_a_sentence_are_no_note_head(text: str) -> None:
    assert find_edits(text) == ()


def test_the_repro_form_is_found() -> None:
    text = "Resolves Yes if X ships.\n\nUpdate - Sep 5, 2025: X was cancelled."
    (edit,) = find_edits(text)
    assert text[edit.start :].lstrip().startswith("Update - Sep 5, 2025:")
    assert str(edit.day) == "2025-09-05"


def test_a_note_is_public_only_once_its_day_has_ended_in_its_zone() -> None:
    text = "Base.\n\nUpdate 2025-06-22 (PST): later"
    assert body_as_of(text, at("2025-06-23T07:59:59"))[0] == "Base."
    assert body_as_of(text, at("2025-06-23T08:00:01"))[0] == text
    bare = "Base.\n\nUpdate 2025-06-22: later"  # no zone: the end of the day at UTC-12
    assert body_as_of(bare, at("2025-06-23T11:00:00"))[0] == "Base."
    assert body_as_of(bare, at("2025-06-23T12:00:01"))[0] == bare


def _forecastbench_folder(root: Path) -> None:
    background = (
        "<p>Will the launch happen?</p>\n\nUpdate 2025-09-10 (PST) (AI summary of creator "
        "comment): The launch already slipped to December; resolves NO-LEAK-MARKER.\n"
    )
    rec = {
        "id": "m1", "source": "manifold", "question": "Will the launch happen in 2025?",
        "background": background, "resolution_criteria": "Resolves YES if it launches.",
        "market_info_resolution_criteria": "N/A",
    }  # fmt: skip
    folder = root / "question_sets"
    folder.mkdir(parents=True)
    payload = {"forecast_due_date": "2025-10-26", "questions": [rec]}
    (folder / "2025-10-26-llm.json").write_text(json.dumps(payload))


def _history(eid: str, description: str, source: str) -> MarketHistory:
    prices = [0.4 + 0.001 * i for i in range(150)]
    h = binary(eid, prices, start="2025-07-01", close="2025-11-30", source=source)
    return MarketHistory(h.event.model_copy(update={"description": description}), h.resolution,
                         h.beliefs)  # fmt: skip


def test_a_text_read_at_a_late_cutoff_is_still_cut_at_an_earlier_one() -> None:
    # Each text's notes are found once and kept: what a later step saw never reaches an earlier one.
    text = "Base.\n\nUpdate 2025-06-22 (PST): the answer"
    for _ in range(2):
        assert body_as_of(text, at("2025-06-30"))[0] == text
        assert body_as_of(text, at("2025-06-23T07:59:59"))[0] == "Base."
    assert find_edits(text) is find_edits(text)


def test_a_forecastbench_update_after_an_early_cutoff_is_never_sent_at_that_step(
    tmp_path: Path,
) -> None:
    _forecastbench_folder(tmp_path)
    texts = read_text_versions(tmp_path)
    (version,) = texts["manifold:m1"]
    h = _history("manifold:m1", version.description, "manifold")
    h = MarketHistory(h.event.model_copy(update={"title": version.title}), h.resolution, h.beliefs)
    # before the question set is out the step is shown it (kept, flagged): written later
    ds, _ = build_dataset(
        [h], name="fb", schedule=make_schedule("causal-lookback"), texts=texts,
        keep_unversioned=True,
    )  # fmt: skip
    early = next(s for s in ds.steps if s.cutoff < at("2025-09-10"))
    assert "NO-LEAK-MARKER" in version.description  # the snapshot holds it
    assert "NO-LEAK-MARKER" not in _sent(ds, early)
    assert "Will the launch happen?" in _sent(ds, early)  # the body before the note is shown
    late = StepSpec(event_id="manifold:m1", step_index=9, cutoff=at("2025-10-28"))
    assert "NO-LEAK-MARKER" in _sent(ds.with_steps([*ds.steps, late]), late)


def _polymarket(description: str) -> MarketHistory:
    built = build_event(gamma_event(description))
    assert not isinstance(built, str)
    event, resolution, _ = built
    beliefs = binary(event.id, [0.4 + 0.001 * i for i in range(140)], start="2025-07-01").beliefs
    return MarketHistory(event, resolution, beliefs)


def test_a_polymarket_update_after_an_early_cutoff_is_never_sent_at_that_step() -> None:
    text = (
        "This market resolves Yes if X ships by November 30.\n\n"
        "UPDATE (September 5, 2025): X was cancelled; POLY-LEAK-MARKER."
    )
    h = _polymarket(text)
    ds, report = build_dataset([h], name="pm", schedule=make_schedule("causal-lookback"))
    early = next(s for s in ds.steps if s.cutoff < at("2025-09-05"))
    late = next(s for s in ds.steps if s.cutoff > at("2025-09-07"))
    assert "POLY-LEAK-MARKER" not in _sent(ds, early)
    assert "ships by November 30" in _sent(ds, early)
    assert "POLY-LEAK-MARKER" in _sent(ds, late)
    stage = {s.stage: s for s in report.funnel}["question-text edits"]
    shortened = int(stage.note.split("; ")[1].split()[0])  # "N of them shortened ..."
    assert shortened == sum(s.cutoff < at("2025-09-07") for s in ds.steps) > 0
    assert any("shortened at 'UPDATE (September 5, 2025):'" in e for e in stage.examples)


def test_an_undated_note_in_a_later_text_shortens_it_and_is_counted() -> None:
    undated = _polymarket("Resolves Yes if X ships.\n\nEdit: also counts if X ships in beta.")
    plain = _history("plain", "Resolves Yes if Y ships.", "polymarket")
    ds, report = build_dataset(
        [undated, plain], name="pm", schedule=make_schedule("causal-lookback")
    )
    stage = {s.stage: s for s in report.funnel}["question-text edits"]
    assert stage.removed == 0 and {e.id for e in ds.events} == {undated.event.id, "plain"}
    steps = ds.steps_of(undated.event.id)
    assert all("beta" not in _sent(ds, s) and "X ships" in _sent(ds, s) for s in steps)
    assert f"; {len(steps)} of them shortened" in stage.note
    assert any("shortened at 'Edit:'" in e for e in stage.examples)


def test_a_note_in_a_later_title_drops_the_step_and_is_counted() -> None:
    h = _polymarket("Resolves Yes if X ships by November 30.")
    titled = h.event.model_copy(update={"title": "Will X ship? (Update Sep 5, 2025: cancelled)"})
    plain = _history("plain", "Resolves Yes if Y ships.", "polymarket")
    ds, report = build_dataset(
        [MarketHistory(titled, h.resolution, h.beliefs), plain], name="pm",
        schedule=make_schedule("causal-lookback"),
    )  # fmt: skip
    stage = {s.stage: s for s in report.funnel}["question-text edits"]
    kept = ds.steps_of(titled.id)
    assert kept and all(s.cutoff > at("2025-09-06T12:00") for s in kept)  # the note is public
    assert "steps dropped: title carries a note" in stage.note


def test_an_undatable_edit_in_a_snapshot_published_before_the_cutoff_is_kept(
    tmp_path: Path,
) -> None:
    from pastcast.records import TextVersion

    h = _history("q", "Base.\n\nEdit: also in beta.", "manifold")
    version = TextVersion(
        event_id="q", published_at=at("2025-07-20"), title=h.event.title,
        description=h.event.description,
    )  # fmt: skip
    ds, report = build_dataset(
        [h], name="fb", schedule=make_schedule("causal-lookback"), texts={"q": (version,)}
    )
    stage = {s.stage: s for s in report.funnel}["question-text edits"]
    assert stage.removed == 0 and ds.steps
    assert not any(ds.screen_at(s.event_id, s.cutoff)[1].dropped for s in ds.steps)
    assert all("also in beta" in _sent(ds, s) for s in ds.steps)  # the snapshot is whole


def test_real_forecastbench_updates_are_found_and_left_out_before_their_date(
    shared_data_dir: Path,
) -> None:
    root = shared_data_dir / "forecastbench"
    entries = dated = 0
    by_form: Counter[str] = Counter()
    for path in sorted((root / "question_sets").glob("*.json")):
        for rec in json.loads(path.read_text())["questions"]:
            text = str(rec.get("background") or "")
            if re.search(r"Update \d{4}-\d\d-\d\d", text):
                entries += 1
                edits = find_edits(text)
                dated += any(e.dated for e in edits)
                by_form.update(re.sub(r"\d", "9", e.header[:18]) for e in edits)
                first = min(e.day for e in edits if e.day)
                before = datetime(first.year, first.month, first.day, tzinfo=UTC)
                shown = body_as_of(text, before - timedelta(days=1))[0]
                assert not re.search(r"Update \d{4}-\d\d-\d\d", shown)
    assert entries == dated == 107  # every entry with a dated update has it read
    assert by_form["Update 9999-99-99 "] > 100


def test_a_release_shortens_its_texts_before_their_first_undated_or_later_note(
    tmp_path: Path,
) -> None:
    from collections import Counter

    from release_factories import release_row, write_release

    from pastcast.markets.sources import load_release

    rows = [
        release_row("u", body="Resolves Yes if so.\n\nEdit: beta counts too."),
        release_row("d", body="Resolves Yes if so.\n\nUpdate 2025-07-10: RELEASE-LEAK-MARKER."),
        release_row("p", body="Resolves Yes if so."),
    ]
    notes: Counter[str] = Counter()
    ds = load_release(write_release(tmp_path / "rel", rows, [release_row("e")]), notes=notes)
    assert {s.event_id for s in ds.steps} == {"u", "d", "p", "e"}
    assert all("beta" not in _sent(ds, s) for s in ds.steps_of("u"))
    assert (
        notes["forecast dates shown their question text up to its first note not dated before"] == 3
    )
    early, late = ds.steps_of("d")
    assert "RELEASE-LEAK-MARKER" not in _sent(ds, early)  # 07-05
    assert "RELEASE-LEAK-MARKER" in _sent(ds, late)  # 07-20
