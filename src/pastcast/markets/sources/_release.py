"""Loader for the Forecast-Dojo release layout, ``questions/{train,eval}.parquet`` (its columns
and conventions: docs/datasets.md, "Forecast-Dojo release layout"). The resolution instant is the
start of the close date. The release has no topic: each event gets one from its text
(``categorize``).
"""

from __future__ import annotations

import math
from collections import Counter
from datetime import date, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from pydantic import ValidationError

from pastcast.cutoff import DayConvention, cutoff_for_day, parse_timestamp, step_precedes_resolution
from pastcast.dataset import Dataset, with_content_id
from pastcast.errors import FieldError
from pastcast.markets._categories import categorize
from pastcast.markets._history import guard_beliefs
from pastcast.records import BINARY_LABELS, DailyBelief, Event, Resolution, StepSpec
from pastcast.validation import first_problem

RELEASE_COLUMNS = (
    "event_id",
    "slug",
    "title",
    "body",
    "options",
    "belief_kind",
    "resolved_label",
    "start_date",
    "close_date",
    "forecast_dates",
    "crowd_probabilities",
)


def _instant(value: Any) -> datetime:
    if isinstance(value, datetime):
        return parse_timestamp(value.isoformat())
    return cutoff_for_day(value) if isinstance(value, date) else parse_timestamp(str(value))


def _day(value: Any) -> date:
    return (
        value
        if isinstance(value, date) and not isinstance(value, datetime)
        else _instant(value).date()
    )


def _row(row: dict[str, Any], split: str, convention: DayConvention) -> tuple[Any, ...]:
    kind = row["belief_kind"]
    if kind not in ("binary", "multi_neg_risk"):
        raise ValueError(f"field belief_kind: {kind!r} is not binary or multi_neg_risk")
    options = tuple(str(o) for o in row["options"] or ())
    eid = str(row["event_id"])
    labels = BINARY_LABELS if kind == "binary" else options
    close = _instant(row["close_date"])
    title, body = str(row["title"] or row["slug"] or eid), str(row["body"] or "")
    event = Event(
        id=eid,
        title=title,
        description=body,
        category=categorize(title, body),
        kind="binary" if kind == "binary" else "multi",
        labels=labels,
        open_time=_instant(row["start_date"]),
        close_time=close,
        source="forecast-dojo",
        url=f"https://polymarket.com/event/{row['slug']}" if row["slug"] else None,
    )
    resolution = Resolution(event_id=eid, label=str(row["resolved_label"]), resolved_at=close)
    if resolution.label not in labels:
        raise ValueError(f"field resolved_label: {resolution.label!r} is not one of {labels}")
    dates = [_day(d) for d in row["forecast_dates"] or ()]
    crowd = list(row["crowd_probabilities"] or ())
    if len(crowd) != len(dates):
        raise ValueError("field crowd_probabilities: not one entry per forecast date")
    beliefs, steps = [], []
    for i, (day, probs) in enumerate(zip(dates, crowd, strict=True)):
        if len(probs) != len(options):
            raise ValueError(f"field crowd_probabilities[{i}]: not aligned with options")
        priced = {
            o: float(p)
            for o, p in zip(options, probs, strict=True)
            if p is not None and math.isfinite(p)
        }
        if kind == "binary" and "Yes" in priced:
            priced = {"Yes": priced["Yes"], "No": 1.0 - priced["Yes"]}
        if priced:
            beliefs.append(DailyBelief(event_id=eid, day=day, probs=priced))
        steps.append(StepSpec(event_id=eid, step_index=i, cutoff=cutoff_for_day(day, convention)))
    return event, resolution, tuple(beliefs), tuple(steps), split


BEFORE_OPEN_NOTE = "forecast dates before the question opened, dropped"
AFTER_RESOLUTION_NOTE = "forecast dates at or after the resolution, dropped"
TITLE_NOTE_DROPPED = "forecast dates whose question title carries a note, dropped"
SHORTENED_NOTE = "forecast dates shown their question text up to its first note not dated before"


def load_release(
    root: str | Path,
    *,
    convention: DayConvention = DayConvention.START_OF_DAY,
    notes: Counter[str] | None = None,
) -> Dataset:
    """Read ``questions/train.parquet`` and ``questions/eval.parquet`` (both must be there: a
    release without one is taken for one cut short). A forecast date whose cutoff is before the
    question opened, or not before its resolution, is dropped; ``notes`` (when given) counts
    them by reason."""
    base = Path(root) / "questions"
    parts = [(s, base / f"{s}.parquet") for s in ("train", "eval")]
    missing_parts = [p.name for _, p in parts if not p.is_file()]
    if len(missing_parts) == len(parts):
        raise FieldError("", f"{base}: no train.parquet or eval.parquet")
    if missing_parts:
        raise FieldError(
            "", f"{base / missing_parts[0]}: missing (a release has train.parquet and eval.parquet)"
        )
    notes = notes if notes is not None else Counter()
    events: list[Event] = []
    resolutions: dict[str, Resolution] = {}
    beliefs: dict[str, tuple[DailyBelief, ...]] = {}
    steps: list[StepSpec] = []
    splits: dict[str, str] = {}
    for split, path in parts:
        try:
            table = pq.read_table(path)
        except (pa.ArrowInvalid, OSError) as exc:
            raise FieldError("", f"{path}: not a readable Parquet file ({exc})") from None
        missing = [c for c in RELEASE_COLUMNS if c not in table.column_names]
        if missing:
            raise FieldError("", f"{path}: field {missing[0]}: missing column")
        for i, row in enumerate(table.select(list(RELEASE_COLUMNS)).to_pylist()):
            try:
                event, res, bel, st, sp = _row(row, split, convention)
            except ValidationError as err:
                raise FieldError("", first_problem(err, f"{path}: row {i}")) from None
            except (ValueError, TypeError) as exc:
                raise FieldError("", f"{path}: row {i}: {exc}") from None
            opened = tuple(s for s in st if s.cutoff >= event.open_time)
            kept = tuple(s for s in opened if step_precedes_resolution(s.cutoff, res.resolved_at))
            for note, dropped in (
                (BEFORE_OPEN_NOTE, len(st) - len(opened)),
                (AFTER_RESOLUTION_NOTE, len(opened) - len(kept)),
            ):
                if dropped:
                    notes[note] += dropped
            events.append(event)
            resolutions[event.id] = res
            beliefs[event.id] = guard_beliefs(bel, res)
            steps.extend(kept)
            splits[event.id] = sp
    try:
        ds = Dataset("forecast-dojo", tuple(events), resolutions, beliefs, tuple(steps), splits)
    except ValueError as exc:
        raise FieldError("", f"{base}: {exc}") from None
    # The release's texts were taken with it, after every forecast date: each date is shown a
    # text only up to its first note not dated before it (``Dataset.screen_at``).
    screens = {s: ds.screen_at(s.event_id, s.cutoff)[1] for s in ds.steps}
    undecidable = {s for s, sc in screens.items() if sc.dropped}
    shortened = sum(sc.shortened and not sc.dropped for sc in screens.values())
    if shortened:
        notes[SHORTENED_NOTE] += shortened
    if undecidable:
        notes[TITLE_NOTE_DROPPED] += len(undecidable)
        ds = ds.with_steps(s for s in ds.steps if s not in undecidable)
    return with_content_id(ds, "forecast-dojo")
