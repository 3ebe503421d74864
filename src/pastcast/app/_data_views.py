"""What a dataset holds, as ``pastcast data info`` and ``data show`` describe it: counts, the
import funnel, the corpus coverage of its steps, and one of its questions."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pastcast.app._open import open_corpus, open_dataset
from pastcast.cutoff import DayConvention
from pastcast.dataset import Dataset
from pastcast.errors import FieldError, within

if TYPE_CHECKING:
    from pastcast.audit import LeakageCard
    from pastcast.markets import CoverageReport

__all__ = [
    "DatasetSummary",
    "dataset_leakage_card",
    "dataset_question",
    "describe_dataset",
]


@dataclass(frozen=True)
class DatasetSummary:
    """``dataset_info``'s counts and funnel (with ``coverage`` as JSON when asked for), and the
    coverage report itself."""

    summary: dict[str, Any]
    coverage: CoverageReport | None = None
    leakage: LeakageCard | None = None


def dataset_leakage_card(dataset: Dataset, corpus: str | Path | None = None) -> LeakageCard:
    """The leakage card of ``dataset`` (``pastcast.audit.leakage_card``): with the dating of
    ``corpus`` when given, and the events each model of known knowledge cutoff may remember."""
    from pastcast.audit import leakage_card
    from pastcast.models import knowledge_cutoffs

    identity = None
    if corpus is not None:
        backend = open_corpus(corpus, "bm25")
        try:
            identity = backend.identity()
        finally:
            backend.close()
    return leakage_card(dataset, corpus=identity, models=knowledge_cutoffs.names())


def describe_dataset(
    directory: str | Path,
    *,
    corpus: str | Path | None = None,
    coverage_days: int = 7,
    leakage: bool = True,
) -> DatasetSummary:
    """Counts by source, label, split and schedule, the filtering funnel of the dataset
    directory ``directory``, with ``corpus`` the coverage of its steps per split, and with
    ``leakage`` its leakage card (``leakage_card`` in the summary)."""
    from pastcast.dataset import load_dataset
    from pastcast.markets import dataset_info, step_coverage

    with within("dataset"):
        summary = dataset_info(directory)
    report = card = None
    if corpus is not None or leakage:
        ds = load_dataset(directory)
        if corpus is not None:  # a step is covered by a document of the days before its cutoff
            backend = open_corpus(corpus, "bm25")
            try:
                report = step_coverage(ds, backend, window_days=coverage_days)
            finally:
                backend.close()
            summary = {**summary, "coverage": report.as_json()}
        if leakage:
            card = dataset_leakage_card(ds, corpus)
            summary = {**summary, "leakage_card": card.model_dump(mode="json")}
    return DatasetSummary(summary, report, card)


def _find(ds: Dataset, event: str) -> str:
    """The event id ``event`` names: exactly, or as the unique prefix of one id."""
    if any(e.id == event for e in ds.events):
        return event
    matches = [e.id for e in ds.events if e.id.startswith(event)]
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise FieldError(
            "event",
            f"{event!r}: the prefix of {len(matches)} events ({', '.join(matches[:3])}, ...)",
        )
    sample = ", ".join(e.id for e in ds.events[:3])
    raise FieldError(
        "event", f"{event!r}: no such event in {ds.id} ({len(ds.events)} events, e.g. {sample})"
    )


def dataset_question(
    event: str,
    dataset: str | Path | Dataset = "world",
    *,
    outcome: bool = False,
    convention: DayConvention = DayConvention.START_OF_DAY,
) -> dict[str, Any]:
    """One question as ``dataset`` holds it (``event``: its id or the unique prefix of one):
    the event, its split, forecast steps and market-price days; the resolution only with
    ``outcome``."""
    ds = open_dataset(dataset, convention=convention)
    event_id = _find(ds, event)
    ev = ds.event(event_id)
    beliefs = ds.beliefs.get(event_id, ())
    out: dict[str, Any] = {
        "dataset_id": ds.id,
        "event": ev.model_dump(mode="json"),
        "split": ds.splits.get(event_id),
        "steps": [s.cutoff.isoformat() for s in ds.steps_of(event_id)],
        "beliefs": {
            "days": len(beliefs),
            "first": beliefs[0].day.isoformat() if beliefs else None,
            "last": beliefs[-1].day.isoformat() if beliefs else None,
        },
    }
    if outcome:
        res = ds.resolutions[event_id]
        out["resolution"] = {"label": res.label, "resolved_at": res.resolved_at.isoformat()}
    return out
