"""Which steps of a dataset `pastcast run` plays: the day convention of a Forecast-Dojo release,
and the corpus coverage check (a warning per split; ``--covered-only`` drops uncovered steps).

Kept apart from the run command so that the step selection stays one small hook before
``run_benchmark``.
"""

from __future__ import annotations

from dataclasses import dataclass

import typer

from pastcast.cli._common import fail, note
from pastcast.corpus import CorpusBackend
from pastcast.cutoff import DayConvention
from pastcast.dataset import Dataset

__all__ = ["StepChoice", "select_steps"]


@dataclass(frozen=True)
class StepChoice:
    """The step options of ``pastcast run``."""

    convention: DayConvention = DayConvention.START_OF_DAY
    covered_only: bool = False
    coverage_days: int = 7


def select_steps(
    dataset: Dataset, backend: CorpusBackend | None, choice: StepChoice, as_json: bool
) -> Dataset:
    """Warn (stderr) about steps the corpus does not cover; drop them with ``covered_only``."""
    if backend is None:
        if choice.covered_only:
            fail("--covered-only: needs --corpus (coverage is measured against a corpus)")
        return dataset
    from pastcast.markets import step_coverage

    report = step_coverage(dataset, backend, window_days=choice.coverage_days)
    hint = "" if choice.covered_only else " (--covered-only leaves them out)"
    for line in report.warnings():
        typer.echo(f"warning: {line}{hint}", err=True)
    if not choice.covered_only:
        return dataset
    kept = [s for s in dataset.steps if report.is_covered(s)]
    if not kept:
        fail("--covered-only: no step of the dataset is covered by the corpus")
    note(f"--covered-only: {len(kept)} of {len(dataset.steps)} steps kept", as_json)
    return dataset.with_steps(kept)
