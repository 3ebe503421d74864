"""ForecastBench importer: resolved binary market questions with daily YES series, from the
derived daily files or the published question and resolution sets (one freeze price per set),
with ``history`` (a clone of the upstream repository) adding the daily values of every nightly
version (``_fbhistory``). See docs/datasets.md, "ForecastBench".

A market that resolved early keeps its nominal date and may print ~0/~1 after resolving, so the
effective resolution is the earliest of the known resolution dates and the start of a trailing
settled run, and no price at or after it is kept; backgrounds are HTML, reduced to text.
"""

from __future__ import annotations

import csv
import json
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from pastcast import safejson
from pastcast.cutoff import cutoff_for_day, is_naive_timestamp, last_complete_day, parse_timestamp
from pastcast.errors import FieldError
from pastcast.markets._categories import categorize
from pastcast.markets._history import MarketHistory, guard_beliefs
from pastcast.markets.sources._fbhistory import read_nightly_history
from pastcast.markets.sources._html import html_to_text
from pastcast.records import BINARY_LABELS, DailyBelief, Event, Resolution
from pastcast.validation import first_problem

MARKET_SOURCES = ("polymarket", "manifold", "metaculus", "infer")

HISTORY_REPO_HINT = (
    "the published question and resolution sets carry one price per question set; pass a local "
    "clone of github.com/forecastingresearch/forecastbench-datasets (--history-repo) to rebuild "
    "daily series from its nightly history, or use the derived daily files"
)
"""What to do when ForecastBench questions lack daily history (the funnel's hint)."""


@dataclass
class ImportResult:
    histories: list[MarketHistory]
    skipped: Counter[str] = field(default_factory=Counter)
    """The import notes: what was dropped or assumed, counted by reason."""
    files: list[str] = field(default_factory=list)
    history: dict[str, int] = field(default_factory=dict)
    """Counts from the nightly history, when one was read (versions, questions with values)."""
    layout: str = "derived"
    """``derived`` (daily series files) or ``published`` (question and resolution sets only)."""


NAIVE_NOTE = "timestamps without a UTC offset, read as UTC"
"""The import note counting instants that carry a time of day but no offset."""


def _time(value: Any, where: str, name: str, notes: Counter[str] | None = None) -> datetime | None:
    if value is None or value == "" or value == "N/A":
        return None
    if not isinstance(value, str):
        raise FieldError("", f"{where}: field {name}: expected a date string, got {value!r}")
    try:
        when = parse_timestamp(value)
    except ValueError as exc:
        raise FieldError("", f"{where}: field {name}: {exc}") from None
    if notes is not None and is_naive_timestamp(value):
        notes[NAIVE_NOTE] += 1
    return when


def question_text(rec: dict[str, Any]) -> tuple[str, str, str]:
    """A question record's (title, description, resolution criteria), as agents are shown
    them: backgrounds reduced from HTML to text, the market's own criteria where it has any."""
    criteria = rec.get("market_info_resolution_criteria")
    if not isinstance(criteria, str) or criteria in ("", "N/A"):
        criteria = rec.get("resolution_criteria") or ""
    return (
        str(rec.get("question") or "").strip(),
        html_to_text(str(rec.get("background") or "")),
        html_to_text(str(criteria)),
    )


def _load_series(path: Path) -> dict[tuple[str, str], dict[date, list[float]]]:
    out: dict[tuple[str, str], dict[date, list[float]]] = defaultdict(lambda: defaultdict(list))
    with path.open(newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        missing = {"source", "id", "date", "value"} - set(reader.fieldnames or ())
        if missing:
            raise FieldError("", f"{path}: header: missing columns {sorted(missing)}")
        for lineno, row in enumerate(reader, start=2):
            where = f"{path}:{lineno}"
            try:
                day = date.fromisoformat(row["date"])
            except (TypeError, ValueError):
                raise FieldError("", f"{where}: field date: not a date: {row['date']!r}") from None
            try:
                value = float(row["value"])
            except (TypeError, ValueError):
                raise FieldError(
                    "", f"{where}: field value: not a number: {row['value']!r}"
                ) from None
            if not 0.0 <= value <= 1.0:
                raise FieldError("", f"{where}: field value: {value} is not a probability")
            out[(row["source"], row["id"])][day].append(value)
    return out


def _iter_jsonl(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    with path.open("rb") as fh:  # decoded line by line, so bad bytes are named by their line
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                obj = safejson.loads_line(line)
            except json.JSONDecodeError as exc:
                raise FieldError("", f"{path}:{lineno}: not valid JSON ({exc.msg})") from None
            if not isinstance(obj, dict):
                raise FieldError("", f"{path}:{lineno}: expected a JSON object")
            yield f"{path}:{lineno}", obj


def _load_json(path: Path, key: str) -> list[dict[str, Any]]:
    try:
        obj = safejson.loads(path.read_bytes())
    except json.JSONDecodeError as exc:
        raise FieldError("", f"{path}: not valid JSON ({exc.msg})") from None
    items = obj.get(key) if isinstance(obj, dict) else None
    if not isinstance(items, list):
        raise FieldError("", f"{path}: field {key}: missing or not a list")
    return [x for x in items if isinstance(x, dict)]


_BOTH_WAYS = "resolved both ways, dropped"


def _resolution_dates(root: Path, notes: Counter[str]) -> dict[tuple[str, str], tuple[date, float]]:
    """(source, id) -> (earliest resolution date, resolved_to) over all resolution sets; a
    market question resolved to different values is dropped, named in a note."""
    out: dict[tuple[str, str], tuple[date, float]] = {}
    values: dict[tuple[str, str], set[float]] = defaultdict(set)
    for path in sorted((root / "resolution_sets").glob("*_resolution_set.json")):
        for i, rec in enumerate(_load_json(path, "resolutions")):
            if not isinstance(rec.get("id"), str) or rec.get("resolved") is not True:
                continue  # combination questions (id lists) and unresolved rows
            where = f"{path}: resolutions[{i}]"
            when = _time(rec.get("resolution_date"), where, "resolution_date")
            value = rec.get("resolved_to")
            if when is None or not isinstance(value, int | float):
                continue
            key = (str(rec.get("source")), rec["id"])
            if key[0] in MARKET_SOURCES:  # a dataset question resolves once per horizon
                values[key].add(float(value))
            prev = out.get(key)
            if prev is None or when.date() < prev[0]:
                out[key] = (when.date(), float(value))
    for key, seen in values.items():
        if len(seen) > 1:
            notes[f"{_BOTH_WAYS}: {key[0]}:{key[1]}"] += 1
            del out[key]
    return out


def _make(
    rec: dict[str, Any],
    where: str,
    days: dict[date, list[float]],
    resolved_to: Any,
    res_dates: list[date],
    result: ImportResult,
    settle_eps: float,
) -> None:
    source, qid = str(rec.get("source", "")), rec.get("id")
    if not isinstance(qid, str) or not qid:
        raise FieldError("", f"{where}: field id: missing or not a string")
    if resolved_to not in (0, 1, 0.0, 1.0):
        result.skipped["resolution is not 0/1"] += 1
        return
    label = "Yes" if float(resolved_to) == 1.0 else "No"
    series = sorted((d, sum(v) / len(v)) for d, v in days.items())
    if not series:
        result.skipped["no price series"] += 1
        return
    # the first day of a trailing run of prices at the realised extreme (post-resolution prints)
    settled: date | None = None
    for day, p in reversed(series):
        if (p >= 1.0 - settle_eps) if label == "Yes" else (p <= settle_eps):
            settled = day
        else:
            break
    ends = [cutoff_for_day(d) for d in res_dates]
    if settled is not None:
        ends.append(cutoff_for_day(settled))
    if not ends:
        result.skipped["no resolution date"] += 1
        return
    resolved_at = min(ends)
    notes = result.skipped
    open_time = _time(
        rec.get("market_info_open_datetime"), where, "market_info_open_datetime", notes
    )
    close_time = _time(
        rec.get("market_info_close_datetime"), where, "market_info_close_datetime", notes
    )
    open_time = open_time or cutoff_for_day(series[0][0])
    close_time = close_time or cutoff_for_day(max(res_dates) if res_dates else series[-1][0])
    if close_time < open_time:
        result.skipped["close before open"] += 1
        return
    title, description, criteria = question_text(rec)
    try:
        event = Event(
            id=f"{source}:{qid}",
            title=title,
            description=description,
            resolution_criteria=criteria,
            kind="binary",
            labels=BINARY_LABELS,
            category=categorize(title, description),
            open_time=open_time,
            close_time=close_time,
            source=source,
            url=rec.get("url") or None,
        )
        resolution = Resolution(event_id=event.id, label=label, resolved_at=resolved_at)
        beliefs = [
            DailyBelief(event_id=event.id, day=d, probs={"Yes": p, "No": 1.0 - p})
            for d, p in series
        ]
    except ValidationError as err:
        raise FieldError("", first_problem(err, where)) from None
    kept = guard_beliefs(beliefs, resolution)
    result.skipped["post-resolution prices dropped"] += len(beliefs) - len(kept)
    result.histories.append(MarketHistory(event, resolution, kept))


def _freeze_value(rec: dict[str, Any], where: str) -> float:
    try:
        value = float(rec.get("freeze_datetime_value"))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise FieldError("", f"{where}: field freeze_datetime_value: not a number") from None
    if not 0.0 <= value <= 1.0:
        raise FieldError("", f"{where}: field freeze_datetime_value: {value} is not a probability")
    return value


def _merge(*series: dict[date, list[float]]) -> dict[date, list[float]]:
    out: dict[date, list[float]] = defaultdict(list)
    for s in series:
        for day, values in s.items():
            out[day].extend(values)
    return out


def _outcome(value: Any) -> str:
    """A resolved value as it compares: 1 and 1.0 alike, anything else by its text."""
    if isinstance(value, int | float) and not isinstance(value, bool) and value in (0, 1):
        return repr(float(value))
    return repr(value)


def _unique_questions(
    rows: Iterator[tuple[str, dict[str, Any]]], notes: Counter[str]
) -> list[tuple[str, dict[str, Any]]]:
    """The market questions of the derived file, each once: a question given on several lines
    keeps its first when they agree on the outcome, and is dropped (named in a note) when they
    do not, since which of them is true cannot be told."""
    first: dict[tuple[str, str], tuple[str, dict[str, Any]]] = {}
    outcomes: dict[tuple[str, str], list[str]] = defaultdict(list)
    for where, rec in rows:
        if rec.get("source") not in MARKET_SOURCES:
            notes["not a market source"] += 1
            continue
        key = (str(rec["source"]), str(rec.get("id")))
        outcomes[key].append(_outcome(rec.get("resolved_to")))
        first.setdefault(key, (where, rec))
    for key, seen in outcomes.items():
        if len(set(seen)) > 1:
            notes[f"{_BOTH_WAYS}: {key[0]}:{key[1]}"] += 1
            del first[key]
        elif len(seen) > 1:
            notes["repeated question lines (the first kept)"] += len(seen) - 1
    return list(first.values())


def read_forecastbench(
    root: str | Path, *, settle_eps: float = 0.002, history: str | Path | None = None
) -> ImportResult:
    """Resolved binary market questions of a ForecastBench folder as market histories.

    ``settle_eps``: a trailing run of prices within this distance of the realised 0/1 is taken
    as post-resolution and moves the effective resolution to the run's first day.
    ``history``: a local git clone of the upstream datasets repository whose nightly versions
    give each question a daily series (merged with the prices of the files read).
    """
    base = Path(root)
    if not (base / "derived").is_dir() and (base / "datasets" / "question_sets").is_dir():
        base = base / "datasets"  # a clone of the upstream repository
    result = ImportResult(histories=[])
    nightly: Any = {}
    if history is not None:
        try:
            found = read_nightly_history(history, MARKET_SOURCES)
        except FieldError as exc:
            raise FieldError("", f"--history-repo {exc}") from None
        result.history, nightly = dict(found.counts), found.values
    resolutions = _resolution_dates(base, result.skipped)
    derived = base / "derived" / "markets_resolved.jsonl"
    if derived.is_file():
        values = base / "derived" / "daily_values.csv"
        if not values.is_file():
            raise FieldError("", f"{values}: missing (needed with {derived.name})")
        series = _load_series(values)
        result.files += [str(derived), str(values)]
        for where, rec in _unique_questions(_iter_jsonl(derived), result.skipped):
            key = (str(rec["source"]), str(rec.get("id")))
            when = _time(rec.get("resolution_date"), where, "resolution_date", result.skipped)
            dates = [when.date()] if when else []
            if key in resolutions:
                dates.append(resolutions[key][0])
            days = _merge(series.get(key, {}), nightly.get(key, {}))
            _make(rec, where, days, rec.get("resolved_to"), dates, result, settle_eps)
        return result
    qsets = sorted((base / "question_sets").glob("*.json"))
    if not qsets:
        raise FieldError("", f"{base}: neither derived/markets_resolved.jsonl nor question_sets/")
    result.layout = "published"
    # A question recurs in several question sets, each with its own freeze value: all are kept.
    appearances: dict[tuple[str, str], list[tuple[str, dict[str, Any]]]] = defaultdict(list)
    for path in qsets:
        result.files.append(str(path))
        for i, rec in enumerate(_load_json(path, "questions")):
            if rec.get("source") not in MARKET_SOURCES:
                result.skipped["not a market source"] += 1
                continue
            key = (str(rec["source"]), str(rec.get("id")))
            appearances[key].append((f"{path}: questions[{i}]", rec))
    for key, seen in appearances.items():
        if key not in resolutions:
            result.skipped["unresolved"] += 1
            continue
        freezes = {}
        for where, rec in seen:
            freeze = _time(rec.get("freeze_datetime"), where, "freeze_datetime")
            if freeze:
                freezes[last_complete_day(freeze)] = [_freeze_value(rec, where)]
        res_day, resolved_to = resolutions[key]
        where, rec = seen[0]
        days = _merge(freezes, nightly.get(key, {}))
        _make(rec, where, days, resolved_to, [res_day], result, settle_eps)
    return result
