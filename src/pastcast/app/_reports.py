"""Scoring and reporting run logs: the scorecard (``pastcast score``), the HTML report
(``pastcast report``) and the dashboard (``pastcast view``), each from the runs read once."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import numpy as np

from pastcast.app._compare import paired_comparisons
from pastcast.app._fields import as_field
from pastcast.app._reading import RunsRead, read_runs
from pastcast.dataset import Dataset
from pastcast.errors import FieldError
from pastcast.records import Forecast
from pastcast.registry import Registry
from pastcast.reports import (
    BOOTSTRAP_DRAWS,
    BOOTSTRAP_SEED,
    GROUP_COLUMNS,
    REPORT_COLUMNS,
    RUN_COLUMNS,
    Runs,
    Scorecard,
    market_age_text,
    scorecard,
)
from pastcast.scoring import Convention, PairedComparison

if TYPE_CHECKING:
    from fastapi import FastAPI

    from pastcast.models import KnowledgeGap
    from pastcast.reports.dashboard import RunIndex
    from pastcast.reports.html import ReportSection, WrittenReport

REPORTS_EXTRA_HINT = "pip install 'pastcast[reports]'"

TABLE_COLUMNS = tuple(
    c
    for c in GROUP_COLUMNS
    if c not in ("model", "horizon", "duration", "evidence", "stop", "market_age")
)
"""What the statistics group by: the score table's own columns (the agents' models come from
the run headers, the horizon and duration from the dataset, the evidence label, stop reason and
market age from the step columns: score and report)."""

MARKET_AGE_WARNING = 7.0
"""Days: a median market reference older than this at the cutoffs is noted by ``score`` and
``report`` (``market_age_warning``)."""

Labels = Literal["exact", "normalized"]


def group_columns(
    by: str | Sequence[str], allowed: Sequence[str] = GROUP_COLUMNS, field: str = "by"
) -> tuple[str, ...]:
    """Grouping columns (comma-separated text or a sequence), each one of ``allowed``."""
    parts = by.split(",") if isinstance(by, str) else by
    cols = tuple(c.strip() for c in parts if c.strip())
    bad = [c for c in cols if c not in allowed]
    if bad:
        raise FieldError(
            field, f"unknown column {bad[0]!r} (expected some of {', '.join(allowed)})"
        )
    return cols


def _needs_dataset(groups: Sequence[str], dataset: object) -> None:
    needs = next((c for c in groups if c in ("horizon", "duration")), None)
    if needs is not None and dataset is None:
        raise FieldError(
            "dataset",
            f"is needed to group by {needs}: run logs do not record when an event opened, "
            "closed or resolved",
        )


@dataclass(frozen=True)
class Scored:
    """A scorecard and the runs it scored."""

    card: Scorecard
    read: RunsRead
    """The runs scored, through their step columns: with ``normalize_labels`` their forecasts
    read again, with ``after_knowledge_cutoff`` only the steps kept."""
    labels: Labels
    cutoff_note: str | None = None
    """Events left out as resolved by a model's knowledge cutoff, when that was asked."""
    pairs: tuple[PairedComparison, ...] = ()
    """The paired comparisons asked for (``paired``), on the same forecasts as the card."""
    knowledge_gaps: tuple[KnowledgeGap, ...] = ()
    """With ``after_knowledge_cutoff``: each model's Brier on events resolved by its cutoff
    against later ones, before they were left out."""
    market_note: str | None = None
    """The market reference's median age at the cutoffs, when over ``market_age_warning``."""


SCORE_COLUMNS = (*RUN_COLUMNS, "failure_reason", "choice", "confidence", "replies", "resolved_at")
"""The step columns ``score_runs`` reads: the scorecard's, a forecast's other columns (read
again with normalized labels) and the resolution time (the knowledge cutoff)."""


def _normalized(runs: Runs) -> Runs:
    """``runs`` with every forecast read again from its raw text with normalized labels: only
    the steps that may read otherwise (unusable, or read only after a retry: ``replies``) are
    streamed by offset, one record at a time, and only the forecasts that changed are kept."""
    from pastcast.agents import reparse_forecast

    logs = []
    for log in runs.logs:
        usable = log.table.column("usable").to_numpy(zero_copy_only=False)
        replies = log.table.column("replies").to_numpy(zero_copy_only=False)
        rows = np.flatnonzero(~usable.astype(bool) | (replies > 1)).tolist()
        changed: list[int] = []
        forecasts: list[Forecast] = []
        for row, record in zip(rows, log.stream(rows), strict=True):
            forecast = reparse_forecast(
                record.forecast, record.grading.labels, normalize_typography=True
            )
            if forecast is not record.forecast:
                changed.append(row)
                forecasts.append(forecast)
        logs.append(log.with_forecasts(changed, forecasts))
    return replace(runs, logs=tuple(logs))


def _market_age(runs: Runs, max_age: float | None, warning: float) -> tuple[Runs, str | None]:
    """Only the steps whose market belief was at most ``max_age`` days old at the cutoff (none:
    every step), and a note when the median age of those kept is over ``warning`` days."""
    if max_age is not None and not max_age >= 0:
        raise FieldError("max_market_age", f"expected a number of days >= 0, not {max_age!r}")
    if not warning >= 0:
        raise FieldError("market_age_warning", f"expected a number of days >= 0, not {warning!r}")
    ages = runs.market_ages()
    if max_age is not None:
        keep = np.isfinite(ages) & (ages <= max_age)
        if not keep.any():
            raise FieldError(
                "max_market_age",
                f"no forecast was graded against a market belief at most {max_age:g} days old "
                "at its cutoff",
            )
        runs, ages = runs.where(keep), ages[keep]
    known = ages[np.isfinite(ages)]
    if not known.size or float(np.median(known)) <= warning:
        return runs, None
    return runs, (
        f"the market reference is {market_age_text(known.tolist())} at the cutoffs (over "
        f"{warning:g} days): information-alpha and the market Brier are measured against a "
        "stale price (--max-market-age DAYS keeps the fresher ones)"
    )


def score_runs(
    run_logs: Sequence[str | Path],
    *,
    dataset: str | Path | Dataset | None = None,
    by: str | Sequence[str] = ("agent", "setting"),
    fallback: Convention = "uniform",
    bootstrap: int = BOOTSTRAP_DRAWS,
    seed: int = BOOTSTRAP_SEED,
    bins: int = 10,
    after_knowledge_cutoff: bool = False,
    normalize_labels: bool = False,
    paired: Sequence[str] = (),
    max_market_age: float | None = None,
    market_age_warning: float = MARKET_AGE_WARNING,
) -> Scored:
    """The scorecard of ``run_logs`` grouped ``by``, as `pastcast score` computes it
    (docs/reports.md; the options are its parameters). Every option reads the step columns;
    only the forecasts ``normalize_labels`` may read otherwise are streamed in full, one at a
    time."""
    groups = group_columns(by)
    _needs_dataset(groups, dataset)
    labels: Labels = "normalized" if normalize_labels else "exact"
    read = read_runs(run_logs, dataset, columns=SCORE_COLUMNS)
    runs = _normalized(read.runs) if normalize_labels else read.runs
    note = None
    gaps: tuple[KnowledgeGap, ...] = ()
    if after_knowledge_cutoff:  # only the steps of events no model of the logs may remember
        from pastcast.models import after_knowledge_cutoff as kept_steps
        from pastcast.models import knowledge_gaps

        gaps = knowledge_gaps(runs.logs, runs.base_table, draws=bootstrap, seed=seed)
        with as_field("after_knowledge_cutoff"):
            kept = kept_steps(runs.logs)
        if kept.knowledge_cutoff is not None:
            note = (
                f"left out {kept.dropped_events} events ({kept.dropped_steps} steps) resolved by "
                f"{kept.knowledge_cutoff.isoformat()} (knowledge cutoff of {kept.model})"
            )
        if not kept.keep.any():
            raise FieldError(
                "after_knowledge_cutoff", "no event resolved after the models' knowledge cutoffs"
            )
        runs = runs.where(kept.keep)
    runs, market_note = _market_age(runs, max_market_age, market_age_warning)
    with as_field("by"):
        card = scorecard(runs, groups, fallback, bootstrap=bootstrap, seed=seed, bins=bins)
    pairs = paired_comparisons(
        runs.base_table, paired, fallback=fallback, bootstrap=bootstrap, seed=seed
    )
    return Scored(card, replace(read, runs=runs), labels, note, pairs, gaps, market_note)


# Sections an installed plugin adds to the report and the dashboard (the arena's rounds):
# factories of the entry-point group ``pastcast.report_sections`` (docs/plugins.md).
report_sections: Registry[tuple[ReportSection, ...]] = Registry("report_section")


def plugin_sections(
    run_logs: Sequence[str | Path], folders: Mapping[str, str | Path] | None = None
) -> tuple[ReportSection, ...]:
    """Every plugin's sections for ``run_logs``, each given its folder of ``folders`` (by the
    plugin's name); a folder for a plugin that is not installed is an ``FieldError`` naming it."""
    folders = dict(folders or {})
    for name in folders:
        if name not in report_sections:
            known = ", ".join(report_sections.names()) or "none"
            raise FieldError(
                name, f"no report-section plugin {name!r} is installed (installed: {known})"
            )
    logs = tuple(Path(p) for p in run_logs)
    out: list[ReportSection] = []
    for entry in report_sections.entries():
        folder = folders.get(entry.name)
        out += entry.factory(logs, None if folder is None else Path(folder))
    return tuple(out)


@dataclass(frozen=True)
class Report:
    """The report written, and the runs it reports."""

    written: WrittenReport
    read: RunsRead
    """The runs reported, through their step columns (``REPORT_COLUMNS``); the notebooks the
    evidence figures count are streamed by offset."""
    market_note: str | None = None
    """As ``Scored.market_note``."""


def _fractions(lookback: str | Sequence[float] | None) -> tuple[float, ...] | None:
    if lookback is None:
        return None
    try:
        parts = lookback.split(",") if isinstance(lookback, str) else lookback
        values = tuple(float(x) for x in parts if str(x).strip())
    except ValueError:
        raise FieldError(
            "lookback", f"expected comma-separated fractions, not {lookback!r}"
        ) from None
    if not values or any(not 0 < v <= 1 for v in values) or list(values) != sorted(set(values)):
        raise FieldError("lookback", f"expected increasing fractions in (0, 1], not {lookback!r}")
    return values


def report_runs(
    run_logs: Sequence[str | Path],
    out: str | Path,
    *,
    dataset: str | Path | Dataset | None = None,
    by: str | Sequence[str] = ("agent", "setting"),
    fallback: Convention = "uniform",
    bootstrap: int = BOOTSTRAP_DRAWS,
    seed: int = BOOTSTRAP_SEED,
    bins: int = 10,
    events: Sequence[str] | None = (),
    figures: Sequence[str] | None = None,
    lookback: str | Sequence[float] | None = None,
    sections: Mapping[str, str | Path] | None = None,
    max_market_age: float | None = None,
    market_age_warning: float = MARKET_AGE_WARNING,
) -> Report:
    """Write the HTML report of ``run_logs`` under ``out``, as `pastcast report` does
    (docs/reports.md; the options are its parameters). The report-section plugins add theirs
    (``report_sections``), each reading its folder of ``sections`` (``{"arena": DIR}``)."""
    from pastcast.app._audits import run_leakage_cards  # the audits: for the report, not score

    groups = group_columns(by)
    fractions = _fractions(lookback)
    try:
        from pastcast.reports.figures import FIGURES
        from pastcast.reports.html import write_html_report
    except ImportError as exc:
        raise FieldError(
            "", f"reports need the reports extra ({exc.name} is missing): {REPORTS_EXTRA_HINT}"
        ) from None
    for name in figures or ():
        if name not in FIGURES:
            raise FieldError(
                "figures", f"{name!r}: unknown figure (known: {', '.join(FIGURES.names())})"
            )
    _needs_dataset(groups, dataset)
    read = read_runs(run_logs, dataset, columns=REPORT_COLUMNS)
    runs, market_note = _market_age(read.runs, max_market_age, market_age_warning)
    read = replace(read, runs=runs)
    known = read.runs.event_ids()
    for event in events or ():
        if event not in known:
            raise FieldError(
                "events", f"{event!r}: no forecast of the run logs is about this event"
            )
    extra = plugin_sections(run_logs, sections)
    with as_field("by"):
        written = write_html_report(
            read.runs,
            out,
            by=groups,
            fallback=fallback,
            bootstrap=bootstrap,
            seed=seed,
            bins=bins,
            events=tuple(events or ()),
            lookback=fractions,
            figures=list(figures) if figures else None,
            sections=extra,
            leakage=run_leakage_cards(read),
        )
    return Report(written, read, market_note)


@dataclass(frozen=True)
class Dashboard:
    """The read-only dashboard of run logs: its web app (serve it, or call it with a test
    client) and its index."""

    app: FastAPI
    index: RunIndex
    read: RunsRead

    @property
    def notes(self) -> tuple[str, ...]:
        """What reading left out or merged, and each stored index rebuilt (and why)."""
        return (*self.read.notes, *self.index.notes)


def dashboard(
    run_dirs: Sequence[str | Path],
    dataset: str | Path | Dataset | None = None,
    sections: Mapping[str, str | Path] | None = None,
) -> Dashboard:
    """The dashboard of every run log named by ``run_dirs`` (a step file, or every run log
    under a directory), each forecast once (see ``read_runs``), read through the logs' columnar
    companions with each log's score table kept beside it; the sections of the report-section
    plugins (``sections`` as in ``report_runs``), each on a page of its own."""
    from pastcast.app._audits import run_leakage_cards

    try:
        from pastcast.reports.dashboard import INDEX_COLUMNS, RunIndex, create_app, find_run_logs
    except ImportError as exc:
        raise FieldError(
            "",
            f"the dashboard needs the reports extra ({exc.name} is missing): {REPORTS_EXTRA_HINT}",
        ) from None
    with as_field("run_logs"):
        paths = find_run_logs(run_dirs)
    read = read_runs(paths, dataset, columns=INDEX_COLUMNS)
    index = RunIndex(read.runs)
    extra = plugin_sections(paths, sections)
    leakage = run_leakage_cards(read)
    return Dashboard(create_app(index, sections=extra, leakage=leakage), index, read)
