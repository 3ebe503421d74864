"""Accuracy by coverage label (Hindcast's Table 1, strong / weak / none): scores of runs
grouped by the coverage label the probe gave each event."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from pydantic import ValidationError

from pastcast.curate._records import EventCuration
from pastcast.runlog import StepRecord
from pastcast.scoring import GroupSummary, summarize, table_from_records
from pastcast.scoring.analyses import with_event_column
from pastcast.validation import first_problem


def read_curation(directory: str | Path) -> tuple[EventCuration, ...]:
    """The per-event records of a curated dataset (``curation/events.jsonl``)."""
    path = Path(directory) / "curation" / "events.jsonl"
    if not path.is_file():
        raise ValueError(f"{path}: missing (not a dataset written by 'pastcast data curate')")
    out = []
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            try:
                out.append(EventCuration.model_validate_json(line))
            except ValidationError as exc:
                raise ValueError(first_problem(exc, f"{path}:{lineno}")) from None
    return tuple(out)


def coverage_labels(events: Iterable[EventCuration]) -> dict[str, str]:
    """Each probed event's coverage label (removed events included: they are the contrast)."""
    return {e.event_id: e.coverage.label for e in events if e.coverage is not None}


def coverage_label_summary(
    records: Iterable[StepRecord],
    labels: Mapping[str, str],
    bootstrap: int = 4000,
) -> tuple[GroupSummary, ...]:
    """Scores (accuracy, Brier, ...) per agent, setting and coverage label; events the probe did
    not reach are labelled ``unprobed``."""
    table = with_event_column(table_from_records(records), "coverage", labels, "unprobed")
    return summarize(table, by=("agent", "setting", "coverage"), bootstrap=bootstrap)
