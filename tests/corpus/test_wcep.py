from __future__ import annotations

import gzip
import json
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from pastcast.cli._app import app
from pastcast.corpus import check_no_leakage
from pastcast.corpus.embedded import EmbeddedIndex
from pastcast.corpus.sources import read_wcep
from pastcast.corpus.sources._hindsight import later_date_mention
from pastcast.corpus.sources._wcep import WcepReport

NEWS = "Ministers agree on a new budget framework after long talks. (Reuters)"


def day_yaml(day: date, n_items: int = 3, extra: list[str] | None = None) -> str:
    items = ["Budget crisis"] + [f"{NEWS[:-10]} item {i}. (AP)" for i in range(n_items)]
    payload = {"Politics and elections": items + (extra or [])}
    return yaml.safe_dump(
        {"Date": day.isoformat(), "Source_URI": "Portal", "Intelligence_Payload": payload}
    )


@pytest.fixture
def wcep_dir(tmp_path: Path) -> Path:
    root = tmp_path / "wcep"
    for i in range(20):
        day = date(2024, 1, 1) + timedelta(days=i)
        folder = root / "yaml" / f"{day:%Y}" / f"{day:%m}"
        folder.mkdir(parents=True, exist_ok=True)
        text = day_yaml(day)
        if i == 10:  # later rewrite in another schema
            text = yaml.safe_dump({"date": day.isoformat(), "dataset": {}, "events": []})
        if i == 12:
            text = "Date: x\n  : *bad\n"
        if i == 14:  # same schema, ten times the usual size
            text = day_yaml(day, n_items=60)
        if i == 16:
            text = day_yaml(
                day,
                extra=[
                    "The singer dies at home; the family announced it on January 25, 2024. (CNN)",
                    "The vote is postponed until March 3, 2024. (BBC)",
                ],
            )
        (folder / f"{day.isoformat()}.yaml").write_text(text)
    rows = [
        {"date": "2023-12-30", "cat": "Sports", "text": "Cup final", "item": False},
        {"date": "2023-12-30", "cat": "Sports", "text": "A wins the cup. (ESPN)", "item": True},
        {"date": "2023-12-30", "cat": "Sports", "text": "A wins the cup. (ESPN)", "item": True},
        {"date": "2024-01-01", "cat": "X", "text": "ignored: yaml wins. (AP)", "item": True},
    ]
    with gzip.open(root / "wcep_2020_2026_compact.jsonl.gz", "wt") as fh:
        fh.writelines(json.dumps(r) + "\n" for r in rows)
    return root


def test_reads_documents_and_reports_removals(wcep_dir: Path) -> None:
    report = WcepReport()
    docs = list(read_wcep(wcep_dir, report=report))
    assert report.days_read == 21 and report.days_by_source["compact"] == 1
    assert report.days_flagged["deep_context_schema"] == ["2024-01-11"]
    assert report.days_flagged["unparseable"] == ["2024-01-13"]
    assert report.days_flagged["size_outlier"] == ["2024-01-15"]
    assert report.items_removed == {"duplicate_in_day": 1, "later_date_mention": 1}
    first = docs[0]
    assert first.id == "wcep-2023-12-30-001" and first.title == "Cup final"
    assert first.text == "A wins the cup. (ESPN)" and first.source == "wcep:Sports"
    assert not any("ignored" in d.text for d in docs)
    jan1 = [d for d in docs if d.id.startswith("wcep-2024-01-01")]
    assert len(jan1) == 3 and all(d.title == "Budget crisis" for d in jan1)
    assert any("postponed until March 3" in d.text for d in docs)  # forward-looking is kept
    assert report.items_kept == len(docs) == 1 + 17 * 3 + 1


def test_a_day_is_visible_only_once_it_is_over(wcep_dir: Path) -> None:
    docs = list(read_wcep(wcep_dir, since=date(2024, 1, 2), until=date(2024, 1, 2)))
    index = EmbeddedIndex.in_memory(docs)
    assert index.count_before(datetime(2024, 1, 2, 23, 59, tzinfo=UTC)) == 0
    assert index.count_before(datetime(2024, 1, 3, tzinfo=UTC)) == 3


def test_flagged_days_can_be_kept_on_request(wcep_dir: Path) -> None:
    report = WcepReport()
    docs = list(read_wcep(wcep_dir, include_flagged=True, report=report))
    assert any(d.id.startswith("wcep-2024-01-15") for d in docs)
    assert any("family announced" in d.text for d in docs)


def test_later_date_screen() -> None:
    day = date(2020, 1, 7)
    assert later_date_mention("His death was announced on January 10, 2020. (AP)", day)
    assert not later_date_mention("Elections will be held on 5 September 2021. (AP)", day)
    assert not later_date_mention("On January 8, 2020 the talks resumed. (AP)", day)
    assert not later_date_mention("Nothing dated here. (AP)", day)


@pytest.mark.shared_data
def test_real_archive_build_flags_the_rewritten_days(shared_data_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "wcep-index"
    result = CliRunner().invoke(
        app, ["corpus", "build", f"wcep:{shared_data_dir / 'wcep'}", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    flagged = {
        line.split(": ", 2)[2]
        for line in result.output.splitlines()
        if line.strip().startswith("days removed")
    }
    removed = {d for line in flagged for d in line.split(", ")}
    expected = {"2026-01-07"} | {f"2026-03-{d:02d}" for d in range(6, 19)}
    assert expected <= removed
    index = EmbeddedIndex.open(out)
    assert len(index) > 30_000
    # Nothing dated on or after a rewritten day leaks at that day's cutoff.
    hits = index.search("Mojtaba Khamenei supreme leader", as_of=datetime(2026, 3, 9, tzinfo=UTC))
    assert hits and all(h.timestamp < datetime(2026, 3, 9, tzinfo=UTC) for h in hits)
    month = list(
        read_wcep(shared_data_dir / "wcep", since=date(2025, 5, 1), until=date(2025, 6, 30))
    )
    report = check_no_leakage(EmbeddedIndex.in_memory(month), month, n_probes=300)
    assert report.violations == 0 and report.hits_checked > 1000
