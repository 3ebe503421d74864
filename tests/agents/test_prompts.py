"""Shipped prompt files: loading, versions, placeholders, and no outcome or price fields."""

from __future__ import annotations

import hashlib
import os
import re
from datetime import UTC, datetime
from functools import partial
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pastcast.agents import _prompts, action_template
from pastcast.agents._answer import view_fields
from pastcast.agents._notebook import memory_answer_template, notebook_field
from pastcast.agents._prompts import (
    list_prompts,
    load_prompt,
    question_fields,
)
from pastcast.env import question_view
from pastcast.records import Event

EXPECTED = {
    "no_tools.v1",
    "tool_agent.v1",
    "memory_on.v1",
    "research_stage.v1",
    "forecast_stage.v1",
    "json_action.v1",
}
# Everything a prompt may be filled with: question fields and agent-side context only.
ALLOWED = {
    "title",
    "description",
    "resolution_criteria",
    "labels",
    "labels_json",
    "category",
    "close_date",
    "cutoff_date",
    "answer_template",
    "memory_answer_template",
    "notebook",
    "tools",
    "max_tool_calls",
    "report",
    "actions",
}


def _event() -> Event:
    return Event(
        id="e1",
        title="Will {x} happen?",
        description="Braces {title} in user text stay as they are.",
        resolution_criteria="Resolves Yes if it happens.",
        kind="multi",
        labels=("Alice", "Bob “B”", "Carol"),
        open_time=datetime(2024, 1, 1, tzinfo=UTC),
        close_time=datetime(2024, 6, 1, tzinfo=UTC),
    )


def test_all_expected_prompts_ship() -> None:
    assert set(list_prompts()) >= EXPECTED


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_prompt_placeholders_are_safe(name: str) -> None:
    prompt = load_prompt(name)
    assert prompt.id == name
    assert prompt.sha256 == hashlib.sha256(prompt.text.encode()).hexdigest()
    assert prompt.placeholders <= ALLOWED, prompt.placeholders - ALLOWED
    forbidden = re.compile(r"price|market|resolved|outcome_label|truth|^label$")
    assert not [p for p in prompt.placeholders if forbidden.search(p)]
    assert {"title", "cutoff_date"} <= prompt.placeholders


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_render_fills_everything_once(name: str) -> None:
    event = _event()
    fields = question_fields(event, datetime(2024, 3, 5, tzinfo=UTC))
    fields |= {
        "tools": "- search(query)",
        "max_tool_calls": "8",
        "report": "Key facts: none.",
        "actions": action_template(event.labels),
        "notebook": notebook_field(None),
        "memory_answer_template": memory_answer_template(event.labels),
    }
    rendered = load_prompt(name).render(fields)
    text = rendered.system + rendered.user
    assert "Will {x} happen?" in text  # user text is inserted verbatim, not re-filled
    assert "2024-03-05" in text
    leftover = set(re.findall(r"\{([a-z][a-z0-9_]*)\}", text)) - {"x", "title"}
    assert not leftover
    system, user = rendered.messages()
    assert (system.role, user.role) == ("system", "user")


def test_missing_field_is_named() -> None:
    with pytest.raises(ValueError, match=r"missing fields .*cutoff_date"):
        load_prompt("no_tools").render({"title": "t"})


def test_latest_version_and_unknown_names() -> None:
    assert load_prompt("no_tools").version >= 1
    with pytest.raises(KeyError, match="known: "):
        load_prompt("nonexistent")
    with pytest.raises(KeyError):
        load_prompt("no_tools.v999")


def test_prompt_file_is_read_again_once_edited(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The file is read once per process, but an edited file (an editable install) is not
    # served from that read: its text, and the hash a run log records, are the new ones.
    (tmp_path / "prompts").mkdir()
    path = tmp_path / "prompts" / "probe.v1.txt"
    path.write_text("[system]\nold\n[user]\n{title}\n", encoding="utf-8")
    monkeypatch.setattr(_prompts.resources, "files", lambda _package: tmp_path)
    _prompts.prompt_registry.add("probe.v1", partial(_prompts._packaged_text, "probe.v1.txt"))
    assert "old" in load_prompt("probe.v1").text
    path.write_text("[system]\nnew text\n[user]\n{title}\n", encoding="utf-8")
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    again = load_prompt("probe.v1")
    assert "new text" in again.text
    assert again.sha256 == hashlib.sha256(again.text.encode("utf-8")).hexdigest()


def test_question_fields_use_time_when_not_midnight() -> None:
    fields = question_fields(_event(), datetime(2024, 3, 5, 12, 30, tzinfo=UTC))
    assert fields["cutoff_date"] == "2024-03-05 12:30 UTC"
    assert fields["labels"].splitlines() == ["- Alice", "- Bob “B”", "- Carol"]


_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)
_SHOWN = st.text(st.characters(whitelist_categories=("L", "N", "P", "Zs")), max_size=30).filter(
    lambda text: any(c.isalnum() for c in text)
)


@settings(max_examples=60, deadline=None)
@given(
    title=_SHOWN,
    description=_TEXT,
    criteria=_TEXT,
    category=_TEXT,
    labels=st.lists(_SHOWN, min_size=2, max_size=4, unique=True),
    minute=st.sampled_from([0, 1, 90, 754]),
)
def test_a_question_view_fills_the_fields_its_event_fills(
    title: str,
    description: str,
    criteria: str,
    category: str,
    labels: list[str],
    minute: int,
) -> None:
    # An agent fills its prompt from the question view of its step; the view holds the event's
    # fields as the step is shown them, so the placeholders are the event's, texts and times.
    event = Event(
        id="e1",
        title=title,
        description=description,
        resolution_criteria=criteria,
        kind="multi",
        labels=tuple(labels),
        category=category,
        open_time=datetime(2024, 1, 1, tzinfo=UTC),
        close_time=datetime(2024, 6, 1, 0, minute % 60, tzinfo=UTC),
    )
    cutoff = datetime(2024, 3, 5, minute // 60, minute % 60, tzinfo=UTC)
    view = question_view(event, cutoff, 0)
    assert view_fields(view) == question_fields(event, cutoff)
