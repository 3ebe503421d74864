"""What ForecastBench's files say about when things were known: the text snapshots of its
questions, and when the data was collected (docs/audits.md, "Text versions").

Each question set is taken as published at the end of its forecast due date (the set's file
name otherwise): the latest time its text can have been written, so a step is never shown a
snapshot from after its cutoff; a text of unknown date is not a snapshot. ``collected_at`` is
the end of the last day the files show data for, a lower bound of when they were taken.
"""

from __future__ import annotations

import csv
from collections import defaultdict
from collections.abc import Iterable, Iterator
from datetime import date, datetime
from pathlib import Path
from typing import Any

from pastcast import safejson
from pastcast.cutoff import end_of_day, parse_publication_time
from pastcast.markets._history import MarketHistory
from pastcast.markets.sources._forecastbench import MARKET_SOURCES, question_text
from pastcast.records import TextVersion

_ORIGIN_PREFIX = "forecastbench:"
_SHOWN = ("title", "description", "resolution_criteria")


def _published(name: str, due: object) -> datetime | None:
    for text in (due, name[:10]):
        if isinstance(text, str):
            try:
                return parse_publication_time(text[:10])
            except ValueError:
                continue
    return None


def _snapshots(root: Path) -> Iterator[tuple[str, datetime, str, dict[str, Any]]]:
    """(event id, published at, origin, record) of every market question in every snapshot."""
    for path in sorted((root / "question_sets").glob("*.json")):
        try:
            obj = safejson.loads(path.read_bytes())
        except (OSError, ValueError):
            continue  # the importer reports unreadable sets; a missing snapshot is only fewer
        if not isinstance(obj, dict) or not isinstance(obj.get("questions"), list):
            continue
        when = _published(path.name, obj.get("forecast_due_date"))
        if when is None:
            continue
        for rec in obj["questions"]:
            if isinstance(rec, dict) and rec.get("source") in MARKET_SOURCES and rec.get("id"):
                yield f"{rec['source']}:{rec['id']}", when, path.name, rec
    derived = root / "derived" / "markets_resolved.jsonl"
    if derived.is_file():
        with derived.open("rb") as fh:
            for line in fh:
                try:
                    rec = safejson.loads(line)
                except ValueError:
                    continue
                origin = rec.get("text_origin") if isinstance(rec, dict) else None
                if not isinstance(origin, str) or not origin.startswith(_ORIGIN_PREFIX):
                    continue
                name = origin.removeprefix(_ORIGIN_PREFIX)
                when = _published(name, None)
                if when is not None and rec.get("source") in MARKET_SOURCES and rec.get("id"):
                    yield f"{rec['source']}:{rec['id']}", when, name, rec


def read_text_versions(root: str | Path) -> dict[str, tuple[TextVersion, ...]]:
    """Event id -> its text snapshots, oldest first, from a ForecastBench folder."""
    found: dict[str, list[TextVersion]] = defaultdict(list)
    for event_id, when, origin, rec in _snapshots(Path(root)):
        shown = dict(zip(_SHOWN, question_text(rec), strict=True))
        if shown["title"]:
            version = TextVersion(event_id=event_id, published_at=when, origin=origin, **shown)
            found[event_id].append(version)
    out: dict[str, tuple[TextVersion, ...]] = {}
    for event_id, versions in sorted(found.items()):
        kept: list[TextVersion] = []
        text = set(_SHOWN)  # a snapshot that changed it
        for v in sorted(versions, key=lambda v: (v.published_at, v.origin)):
            if not kept or v.model_dump(include=text) != kept[-1].model_dump(include=text):
                kept.append(v)
        out[event_id] = tuple(kept)
    return out


def _day(value: object) -> date | None:
    if not isinstance(value, str):
        return None
    try:
        return date.fromisoformat(value[:10])
    except ValueError:
        return None


def collected_at(root: str | Path, histories: Iterable[MarketHistory] = ()) -> datetime | None:
    """The end of the last day a ForecastBench folder (and the market histories read from it or
    from its nightly history: their last prices and their resolutions, which a resolution set
    can only carry once they happened) has data for; None when there is none."""
    base = Path(root)
    days: list[date] = []
    for h in histories:
        days += [b.day for b in h.beliefs[-1:]]
        days.append(h.resolution.resolved_at.date())
    values = base / "derived" / "daily_values.csv"
    if values.is_file():
        with values.open(newline="", encoding="utf-8", errors="replace") as fh:
            days += [d for row in csv.DictReader(fh) if (d := _day(row.get("date")))]
    for path in sorted((base / "question_sets").glob("*.json")):
        try:
            obj = safejson.loads(path.read_bytes())
        except (OSError, ValueError):
            continue
        if not isinstance(obj, dict):
            continue
        days += [d for d in [_day(obj.get("forecast_due_date"))] if d]
        questions = obj.get("questions")
        for rec in questions if isinstance(questions, list) else []:
            if isinstance(rec, dict) and (d := _day(rec.get("freeze_datetime"))):
                days.append(d)
    return end_of_day(max(days)) if days else None
