"""The content screen: documents whose title or text describes what happened after their date are
flagged, and excluded (and counted) when a corpus is built."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pastcast.cli import app
from pastcast.corpus.embedded import EmbeddedIndex
from pastcast.corpus.sources import ContentScreen, open_source, screen_document
from pastcast.cutoff import end_of_day
from pastcast.records import Document

runner = CliRunner()


def _doc(day: str, title: str, text: str = "Something happened. (Reuters)") -> Document:
    return Document(
        id=f"{day}-{abs(hash(title)) % 10_000}",
        timestamp=end_of_day(date.fromisoformat(day)),
        title=title,
        text=text,
    )


@pytest.mark.parametrize(
    ("day", "title", "reason"),
    [
        # a period that ends after the item's date: known only once it was over
        ("2020-01-18", "War in Afghanistan (2001–2021)", "title_later_period"),
        ("2020-01-17", "2019–2021 Iraqi protests", "title_later_period"),
        ("2023-11-10", "2023–2024 Sundhnúkur eruptions", "title_later_period"),
        # an event named by a year that had not come yet
        ("2023-10-11", "2024 Iran–Israel conflict, Israel–Hezbollah conflict", "title_later_year"),
        ("2024-06-01", "2025 India–Pakistan war", "title_later_year"),
        ("2024-03-08", "Attack of 12 March 2024 on the convoy", "title_later_date"),
    ],
)
def test_hindsight_titles_are_flagged(day: str, title: str, reason: str) -> None:
    assert screen_document(_doc(day, title)) == reason


@pytest.mark.parametrize(
    ("day", "title"),
    [
        # scheduled events are named by their year long before it comes
        ("2022-03-10", "2024 United States presidential election"),
        ("2025-10-13", "2026 FIFA World Cup qualification"),
        ("2023-07-18", "2026 Commonwealth Games"),
        ("2023-06-05", "Mike Pence 2024 presidential campaign"),
        ("2022-06-17", "Eurovision Song Contest 2023"),
        ("2020-09-12", "2020–21 Premier League season"),
        # ongoing periods, earlier years, numbers that are not years
        ("2023-11-03", "Israel–Hezbollah conflict (2023–present)"),
        ("2024-05-02", "Russian invasion of Ukraine (2022) aftermath"),
        ("2023-10-22", "Alaska Airlines Flight 2059"),
        ("2024-01-01", "Armed conflicts and attacks"),
    ],
)
def test_scheduled_and_ongoing_titles_pass(day: str, title: str) -> None:
    assert screen_document(_doc(day, title)) is None


def test_text_naming_a_later_date_or_period_is_flagged() -> None:
    day = "2020-01-07"
    assert screen_document(_doc(day, "Iran", "His death was announced on January 10, 2020.")) == (
        "text_later_date"
    )
    assert screen_document(_doc(day, "Iran", "Elections will be held on 5 September 2021.")) is None
    assert screen_document(_doc(day, "Iraq", "The 2019–2021 protests ended the government.")) == (
        "text_later_period"
    )
    assert screen_document(_doc(day, "UN", "Members serve for the 2021–2022 term.")) is None


def test_the_screen_counts_what_it_removes() -> None:
    docs = [
        _doc("2020-01-18", "War in Afghanistan (2001–2021)"),
        _doc("2020-01-18", "Armed conflicts and attacks"),
        _doc("2023-10-11", "2024 Iran–Israel conflict"),
    ]
    screen = ContentScreen()
    kept = list(screen.screen(docs))
    assert [d.title for d in kept] == ["Armed conflicts and attacks"]
    assert screen.removed == {"title_later_period": 1, "title_later_year": 1}
    assert screen.lines() == [
        "content screen: 2 documents removed (title_later_period 1, title_later_year 1)"
    ]


def _jsonl(tmp_path: Path) -> Path:
    rows = [
        {"id": "ok", "timestamp": "2020-01-18T12:00:00Z", "title": "Talks", "text": "Talks go on."},
        {
            "id": "late",
            "timestamp": "2020-01-18T12:00:00Z",
            "title": "War in Afghanistan (2001–2021)",
            "text": "A convoy was attacked.",
        },
    ]
    src = tmp_path / "docs.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return src


def test_corpus_build_excludes_flagged_documents_and_reports_them(tmp_path: Path) -> None:
    src = _jsonl(tmp_path)
    run = open_source("jsonl", src)
    assert [d.id for d in run.documents] == ["ok"]
    assert "content screen: 1 documents removed (title_later_period 1)" in run.report_lines()
    out = tmp_path / "index"
    result = runner.invoke(app, ["corpus", "build", f"jsonl:{src}", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "content screen: 1 documents removed (title_later_period 1)" in result.output
    assert len(EmbeddedIndex.open(out)) == 1
    kept = tmp_path / "kept"
    args = ["corpus", "build", f"jsonl:{src}", "--out", str(kept), "--include-flagged"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert len(EmbeddedIndex.open(kept)) == 2 and "content screen" not in result.output


@pytest.mark.shared_data
def test_real_archive_headings_naming_a_later_year(shared_data_dir: Path) -> None:
    run = open_source("wcep", shared_data_dir / "wcep")
    kept = list(run.documents)
    lines = run.report_lines()
    screened = next(line for line in lines if line.startswith("content screen"))
    removed = int(screened.split(": ")[1].split()[0])
    assert 80 <= removed <= 245, screened  # of the ~245 headings naming a later year
    assert all(screen_document(d) is None for d in kept)
    titles = {(d.title, d.timestamp.year) for d in kept}
    assert ("2024 Iran–Israel conflict, Israel–Hezbollah conflict", 2023) not in titles
    assert ("War in Afghanistan (2001–2021)", 2020) not in titles
    assert ("2024 United States presidential election", 2023) in titles  # scheduled: kept
    cutoff = datetime(2023, 12, 1, tzinfo=UTC)
    index = EmbeddedIndex.in_memory(d for d in kept if d.timestamp < cutoff)
    hits = index.search("2024 Iran Israel conflict", as_of=cutoff, k=20)
    assert all("2024 Iran–Israel" not in h.title for h in hits)
