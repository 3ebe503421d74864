"""A note appended to a question text after a step's cutoff never reaches the model at that step,
whatever its wording, numbering, date format, position, markup or characters: checked in the
request a scripted model receives, for the forms an audit found and for generated ones."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markets_factories import gamma_event

from pastcast.agents import NoToolsAgent
from pastcast.dataset import Dataset
from pastcast.env import ForecastEnv
from pastcast.markets.sources._polymarket import build_event
from pastcast.models import ScriptedModel
from pastcast.records import Resolution, StepSpec

ANSWER = '{"probabilities": {"Yes": 0.5, "No": 0.5}}'
SECRET = "QZXLEAK"
BODY = (
    'This market will resolve to "Yes" if X ships by November 30, 2025, 11:59 PM ET. '
    'Otherwise, this market will resolve to "No".\n\n'
    "The resolution source for this market will be official information from X."
)
EARLY = datetime(2025, 8, 1, tzinfo=UTC)
"""A step before every generated note's date (5 September 2025)."""


def _sent(description: str, cutoff: datetime = EARLY) -> str:
    """Everything the model is sent at a step at ``cutoff`` of a Polymarket event (its text
    fetched after the resolution, as the importer takes it) with ``description``."""
    built = build_event(gamma_event(description))
    assert not isinstance(built, str)
    event, resolution, _ = built
    step = StepSpec(event_id=event.id, step_index=0, cutoff=cutoff)
    res = Resolution(event_id=event.id, label=resolution.label, resolved_at=resolution.resolved_at)
    ds = Dataset("pm", (event,), {event.id: res}, {}, (step,))
    model = ScriptedModel([ANSWER], cycle=True)
    NoToolsAgent(model).forecast(ForecastEnv(ds, None).reset(step))
    return "\n".join(m.content for r in model.requests for m in r.messages)


AUDIT_FORMS = [
    "Update - Sep 5, 2025:", "Update — September 5, 2025:", "Update, Sep 5 2025:",
    "Update 2 (September 5, 2025):", "Clarification #2 (Sep 5, 2025):", "EDIT2:",
    "Edit (Sep 5):", "Updated on 9/5:", "UPDATE 2025.09.05:", "Update 05.09.2025:",
    "Update (09-05-2025):", "Update as of September 5:", "Sept 5 update:", "2025-09-05 update:",
    "Resolution update 2025-09-05:", "Rules clarification — 5 September 2025:", "[Update]:",
    "UPDATE", "UPDATE!!!", "Note from creator:", "Clarification from the team:",
    "PS (Sep 5, 2025):", "Announcement (2025-09-05):", "ERRATUM (2025-09-05):",
    "Additional context (2025-09-05):", "Up\u00addate\u00a0(2025-09-05):",
    "\uff35\uff50\uff44\uff41\uff54\uff45\uff1a", "Up\u200bdate:", "Upd\u0430te (Sep 5, 2025):",
    "Update\u00a0-\u00a0Sep\u00a05,\u00a02025:", "EDIT 9/5/25 -", "MOD EDIT (Sep 5, 2025 - @mod)",
    "Update 2025-09-05 (PST) (AI summary of creator comment):", "**Update (Sep 5, 2025):**",
    "## Update", "> **Edit:**", "<p><b>Update:</b>", "<br>Update 2025-09-05 -",
]  # fmt: skip


@pytest.mark.parametrize("header", AUDIT_FORMS)
@pytest.mark.parametrize("joint", ["\n\n", "\n", " "])
def test_the_audit_forms_never_reach_an_earlier_step(header: str, joint: str) -> None:
    shown = _sent(f"{BODY}{joint}{header} X was cancelled; {SECRET}.")
    assert SECRET not in shown
    assert "This market will resolve" in shown  # the body before the note is still shown


@pytest.mark.parametrize(
    "text",
    [
        f"{BODY} (Update 2025-09-05) X was cancelled, {SECRET}.",
        f"{BODY[:-1]}, update 2025-09-05: X was cancelled, {SECRET}.",
        f"Resolves Yes if X ships (edit: {SECRET}) and more.",
        f"{BODY}\n\n(https://example.com/x)Update 2025-09-05: {SECRET}",
    ],
)
def test_mid_sentence_notes_never_reach_an_earlier_step(text: str) -> None:
    assert SECRET not in _sent(text)


def test_a_note_dated_before_the_cutoff_is_shown_with_the_body() -> None:
    text = f"{BODY}\n\nUpdate (Aug 1, 2025): X slipped a week.\n\nUpdate (Sep 5, 2025): {SECRET}"
    shown = _sent(text, datetime(2025, 8, 20, tzinfo=UTC))
    assert "X slipped a week" in shown and SECRET not in shown
    assert SECRET in _sent(text, datetime(2025, 9, 10, tzinfo=UTC))


# Generated forms: wording (note words and their synonyms, or any word at all where the shape
# says "header"), numbering, dates in many formats with and without a year, where the date
# sits, how the header ends, where the note starts, markup and character variants.
_NOTE_WORDS = [
    "update", "updated", "edit", "edited", "clarification", "correction", "addendum", "note",
    "notice", "announcement", "erratum", "errata", "amendment", "revision", "ps", "p.s.",
    "additional context", "note from creator", "clarification from the team", "mod edit",
    "rules clarification", "resolution update", "important", "admin note", "fyi",
]  # fmt: skip
_DATES = [
    "2025-09-05", "Sep 5, 2025", "September 5, 2025", "5 September 2025", "Sept. 5, 2025",
    "9/5/2025", "9/5/25", "2025.09.05", "05.09.2025", "09-05-2025", "Sep 5", "September 5th",
    "9/5", "5th Sep", "Sep 5 2025",
]  # fmt: skip
_ZONES = ["", " (PST)", " ET", " UTC"]


def _word() -> st.SearchStrategy[str]:
    any_word = st.text(st.sampled_from("abcdefghijklmnopqrstuvwxyz"), min_size=2, max_size=10)
    return st.one_of(st.sampled_from(_NOTE_WORDS), any_word)


def _case(text: str, how: int) -> str:
    return (text, text.upper(), text.title(), text.lower())[how]


def _unicode(text: str, how: int) -> str:
    if how == 1:  # no-break spaces, as HTML converted to text has
        return text.replace(" ", "\u00a0")
    if how == 2:  # fullwidth letters and colon
        return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)
    if how == 3 and len(text) > 2:  # an invisible character inside the first word
        return text[:2] + "\u200b" + text[2:]
    if how == 4:  # a Cyrillic letter drawn like a Latin one
        return text.replace("a", "\u0430").replace("e", "\u0435").replace("o", "\u043e")
    return text


@st.composite
def _header(draw: st.DrawFn) -> tuple[str, bool]:
    """A note header, and whether it is a note word (the only kind of note a mid-sentence
    position can announce: any other word there is read as the body's)."""
    word = draw(_word())
    noted = word in _NOTE_WORDS
    word = _case(word, draw(st.integers(0, 3)))
    number = draw(st.sampled_from(["", " 2", " #2", "2", " II", " (2)"]))
    date = draw(st.sampled_from(["", *_DATES]))
    date += draw(st.sampled_from(_ZONES)) if date else ""
    where = draw(st.sampled_from(["after", "before", "bracket", "square", "as of", "on"]))
    if not date.strip():
        head = word + number
    elif where == "before":
        head = f"{date} {word}"
    elif where == "bracket":
        head = f"{word}{number} ({date})"
    elif where == "square":
        head = f"[{word}{number} {date}]"
    elif where in ("as of", "on"):
        head = f"{word} {where} {date}"
    else:
        sep = draw(st.sampled_from([" ", " - ", " — ", ", ", " – "]))
        head = f"{word}{number}{sep}{date}"
    end = draw(st.sampled_from([":", " :", "!!!", " -", " —", "):", "]:", "\n", ": ", ":\n"]))
    if end in ("):", "]:"):
        head = f"{'(' if end == '):' else '['}{head}"
    return head + end, noted


@st.composite
def _noted_text(draw: st.DrawFn) -> str:
    header, noted = draw(_header())
    markup = draw(st.sampled_from(["", "**", "__", "## ", "> ", "- ", "* ", "<b>", "<p>"]))
    if markup in ("**", "__"):
        header = f"{markup}{header.rstrip()}{markup} "
    elif markup == "<b>":
        header = f"<b>{header.rstrip()}</b> "
    elif markup == "<p>":
        header = f"<p>{header}"
    else:
        header = markup + header
    header = _unicode(header, draw(st.integers(0, 4)))
    starts = ["\n\n", "\n", " ", "<br>", "</p><p>", "\n\n---\n\n", "\r\n", "\u2028"]
    if noted:
        starts += ["mid-comma", "mid-bracket"]
    start = draw(st.sampled_from(starts))
    note = f"X was cancelled, {SECRET}. More follows."
    if start == "mid-comma":
        return f"{BODY[:-1]}, {header} {note}"
    if start == "mid-bracket":
        return f"{BODY} ({header.strip()} {note})"
    return f"{BODY}{start}{header}{' ' if not header.endswith((' ', chr(10))) else ''}{note}"


@settings(
    max_examples=10_000,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(_noted_text())
def test_no_generated_note_reaches_a_step_before_its_date(text: str) -> None:
    shown = _sent(text)
    assert SECRET not in shown, text
