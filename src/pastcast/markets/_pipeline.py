"""End-to-end helpers behind ``pastcast data``: import, build, save, and summarise."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, is_dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Any, Required, TypedDict, Unpack

from pastcast.cutoff import DayConvention
from pastcast.dataset import Dataset, load_dataset, read_manifest, read_metadata, save_dataset
from pastcast.errors import FieldError
from pastcast.markets._build import DatasetBuildReport, TemporalSplit, build_dataset
from pastcast.markets._filters import FilterConfig
from pastcast.markets._history import MarketHistory
from pastcast.markets._schedules import Schedule, schedules
from pastcast.records import TextVersion

RELAXED_BY: Mapping[str, str] = {
    "source": "another --source",
    "pre-resolution beliefs": "prices dated before the resolution (--history-repo for "
    "ForecastBench's published sets)",
    "lifetime": "--filter min_lifetime_days=N (a smaller N)",
    "faithful days": "--filter min_faithful_fraction=F, --filter max_unfaithful_run=N or "
    "--filter min_trades=N",
    "price history": "--filter min_history_days=1 (or daily prices: --history-repo)",
    "nontrivial: not near-certain": "--filter min_surprisal=A (a smaller A)",
    "nontrivial: not flat and directionless": "--filter min_variation=0 or "
    "--filter min_consistency=0",
    "closes before collection": "--keep-late-closes (their close dates tell that they resolved "
    "early)",
    "temporal split": "another --split, or none",
    "forecast steps": "another --schedule",
    "text snapshots": "keep_unversioned=True (Python), or question sets published earlier",
    "sibling answers": "without --drop-sibling-answers",
    "forecast dates": "--min-dates N (a smaller N)",
}
"""What would keep the events a funnel stage removed, in the importers' options: named when an
import keeps nothing."""


class NothingKept(FieldError):
    """A build whose funnel kept no event: nothing is written. ``report`` is the funnel;
    ``relax`` what would keep the events of each stage that removed some, last first
    (``RELAXED_BY``)."""

    def __init__(self, report: DatasetBuildReport) -> None:
        self.report = report
        removing = [s for s in reversed(report.funnel) if s.removed]
        self.relax = tuple(
            f"{s.stage}: {RELAXED_BY[s.stage]}" for s in removing if s.stage in RELAXED_BY
        )
        last = removing[0] if removing else report.funnel[0]
        hint = f"; hint: {last.hint}" if last.hint else ""
        keep = f"; to keep events: {self.relax[0]}" if self.relax else ""
        super().__init__(
            "",
            f"no events are left to write (the last removed at stage {last.stage!r}: "
            f"{last.note}{hint}{keep}); nothing written",
        )


def is_release(directory: str | Path) -> bool:
    """A Forecast-Dojo release folder (``questions/{train,eval}.parquet``), not a dataset."""
    p = Path(directory)
    return not (p / "manifest.json").is_file() and any(
        (p / "questions" / f"{s}.parquet").is_file() for s in ("train", "eval")
    )


def load_benchmark(
    directory: str | Path,
    *,
    convention: DayConvention = DayConvention.START_OF_DAY,
    notes: Counter[str] | None = None,
) -> Dataset:
    """A dataset directory, or a Forecast-Dojo release read as one (its forecast dates turned
    into cutoffs under ``convention``; ``notes`` counts what reading it dropped). A dataset
    directory holds its cutoffs already: asking it for another convention is an error rather
    than a silent no-op."""
    if is_release(directory):
        from pastcast.markets.sources import load_release  # the importers load with a release

        return load_release(directory, convention=convention, notes=notes)
    if convention is not DayConvention.START_OF_DAY:
        raise FieldError(
            "",
            f"day convention {convention.value}: {directory} is a dataset directory whose "
            "cutoffs are fixed (choose the convention when importing it)",
        )
    return load_dataset(directory)


def make_schedule(
    name: str,
    *,
    corpus_end: date | None = None,
    start_at_first_belief: bool = False,
    convention: DayConvention = DayConvention.START_OF_DAY,
) -> Schedule:
    """The registered schedule ``name`` with the import options it takes.

    ``pastcast data import`` offers these options whatever the schedule; a schedule is given
    only those its factory has (``corpus_end``: hindcast; ``start_at_first_belief``: dojo;
    ``convention``, how a chosen day becomes a cutoff: all three built-in schedules).
    Other options go through ``schedules.build(name, **options)``, checked against the factory.
    """
    accepted = schedules.get(name).parameters()
    options = {
        "corpus_end": corpus_end,
        "start_at_first_belief": start_at_first_belief,
        "convention": convention,
    }
    if convention is not DayConvention.START_OF_DAY and "convention" not in accepted:
        raise ValueError(f"schedule {name!r} takes no day convention")
    return schedules.build(name, **{k: v for k, v in options.items() if k in accepted})


class DatasetOptions(TypedDict, total=False):
    """``build_dataset``'s options, as ``build_and_save`` passes them on."""

    name: Required[str]
    schedule: Required[Schedule]
    filters: FilterConfig | None
    split: TemporalSplit | None
    sources: Iterable[str] | None
    news_counts: Mapping[date, int] | None
    hints: Mapping[str, str] | None
    collected_at: datetime | None
    texts: Mapping[str, Sequence[TextVersion]] | None
    keep_unversioned: bool
    drop_sibling_answers: bool
    daily_history: bool


def build_and_save(
    histories: Iterable[MarketHistory],
    out: str | Path,
    *,
    provenance: Mapping[str, Any] | None = None,
    **options: Unpack[DatasetOptions],
) -> tuple[Dataset, DatasetBuildReport]:
    """``build_dataset``, then the dataset written to ``out`` with its metadata; an import that
    keeps nothing raises ``NothingKept`` with its funnel, and writes nothing."""
    dataset, report = build_dataset(histories, **options)
    if not dataset.events:  # an empty dataset is never written as if it were a result
        raise NothingKept(report)
    split, collected_at = options.get("split"), options.get("collected_at")
    schedule = options["schedule"]
    metadata: dict[str, Any] = {
        "name": options["name"],
        "schedule": schedule.name,
        "schedule_config": asdict(schedule) if is_dataclass(schedule) else {},
        "filters": asdict(options.get("filters") or FilterConfig()),
        "split": None
        if split is None
        else {"t0": split.t0.isoformat(), "t1": split.t1.isoformat(), "t2": split.t2.isoformat()},
        "funnel": report.as_json()["funnel"],
        "collected_at": None if collected_at is None else collected_at.isoformat(),
        "provenance": dict(provenance or {}),
    }
    save_dataset(dataset, out, metadata=metadata)
    return dataset, report


def dataset_info(directory: str | Path) -> dict[str, Any]:
    """Counts by source, kind, category, label, split and schedule, plus the recorded funnel."""
    ds = load_dataset(directory)
    meta = read_metadata(directory)
    manifest = read_manifest(directory)
    labels = Counter(r.label for r in ds.resolutions.values())
    steps_per_event = Counter(s.event_id for s in ds.steps)
    return {
        "dataset_id": ds.id,
        "content_hash": manifest.get("content_hash"),
        "format_version": manifest.get("format_version"),
        "events": len(ds.events),
        "by_source": dict(sorted(Counter(e.source for e in ds.events).items())),
        "by_kind": dict(sorted(Counter(e.kind for e in ds.events).items())),
        "by_category": dict(sorted(Counter(e.category or "-" for e in ds.events).items())),
        "by_label": dict(sorted(labels.items())),
        "by_split": dict(sorted(Counter(ds.splits.values()).items())),
        "beliefs": sum(len(v) for v in ds.beliefs.values()),
        "steps": {
            "schedule": meta.get("schedule"),
            "total": len(ds.steps),
            "events_with_steps": len(steps_per_event),
            "per_event": dict(sorted(Counter(steps_per_event.values()).items())),
        },
        "funnel": meta.get("funnel", []),
        "provenance": meta.get("provenance", {}),
    }
