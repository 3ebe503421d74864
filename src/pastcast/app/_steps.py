"""Which steps of a dataset a run plays: all of them, with a warning per split about steps the
corpus does not cover, or only the covered ones (``covered_only``)."""

from __future__ import annotations

from collections.abc import Callable

from pastcast.corpus import CorpusBackend
from pastcast.dataset import Dataset
from pastcast.errors import FieldError

__all__ = ["steps_to_play"]


def steps_to_play(
    dataset: Dataset,
    backend: CorpusBackend | None,
    *,
    covered_only: bool = False,
    coverage_days: int = 7,
    notes: Callable[[str], None],
) -> Dataset:
    """``dataset`` with only the steps the corpus covers (a document in the ``coverage_days``
    before the cutoff) when ``covered_only``; a ``warning: ...`` line to ``notes`` per split
    with uncovered steps either way."""
    if backend is None:
        if covered_only:
            raise FieldError("covered_only", "needs a corpus (coverage is measured against one)")
        return dataset
    from pastcast.markets import step_coverage

    report = step_coverage(dataset, backend, window_days=coverage_days)
    hint = "" if covered_only else " (covered_only leaves them out)"
    for line in report.warnings():
        notes(f"warning: {line}{hint}")
    if not covered_only:
        return dataset
    kept = [s for s in dataset.steps if report.is_covered(s)]
    if not kept:
        raise FieldError(
            "covered_only", "leaves nothing: no step of the dataset is covered by the corpus"
        )
    notes(f"covered_only: {len(kept)} of {len(dataset.steps)} steps kept")
    return dataset.with_steps(kept)
