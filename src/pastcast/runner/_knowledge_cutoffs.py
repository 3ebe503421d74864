"""Leave out events a model may remember: those that resolved by a model's knowledge cutoff.

Every agent is then compared on the same events: an event is kept only if it resolved after the
latest knowledge cutoff among the models of the logs (agents without a model do not constrain
it). Cutoffs come from each log's header (as recorded when it ran), else from the registry.
Both read the logs' step columns (``agent``, ``event_id``, ``step_index``, ``resolved_at``),
never their full records.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import date, datetime

import numpy as np
from numpy.typing import NDArray

from pastcast.models import knowledge_cutoff, remembered
from pastcast.runlog import StepColumns
from pastcast.scoring import ScoreTable

__all__ = ["KnowledgeCutoffFilter", "KnowledgeGap", "after_knowledge_cutoff", "knowledge_gaps"]


@dataclass(frozen=True)
class KnowledgeCutoffFilter:
    keep: NDArray[np.bool_]
    """Per step of the logs (in log order), whether its event resolved after every model's
    cutoff."""
    knowledge_cutoff: date | None
    """The latest knowledge cutoff (None: no model in the logs)."""
    model: str | None
    """The model it belongs to."""
    dropped_events: int
    dropped_steps: int


def _resolved(log: StepColumns) -> Iterator[tuple[str, str, int, datetime | None]]:
    """Agent, event, step and resolution time of each row of ``log``, a batch at a time."""
    names = ["agent", "event_id", "step_index", "resolved_at"]
    for batch in log.table.select(names).to_batches(max_chunksize=65_536):
        yield from zip(*(batch.column(c).to_pylist() for c in names), strict=True)


def after_knowledge_cutoff(logs: Sequence[StepColumns]) -> KnowledgeCutoffFilter:
    """The steps of ``logs`` on events no model of theirs may remember; ``ValueError`` (one
    line) for a model without a known cutoff or a log without resolution times."""
    cutoffs: dict[str, date | None] = {}
    for log in logs:
        recorded = log.header.knowledge_cutoffs
        for spec in log.header.agents:
            model = spec.args.get("model")
            if isinstance(model, str) and cutoffs.get(model) is None:
                cutoffs[model] = recorded.get(model) or knowledge_cutoff(model)
    unknown = sorted(m for m, c in cutoffs.items() if c is None)
    if unknown:
        raise ValueError(
            f"no knowledge cutoff known for {', '.join(unknown)} (give the model a "
            "knowledge_cutoff in the plan, or register one with "
            "pastcast.models.register_knowledge_cutoff)"
        )
    n = sum(log.table.num_rows for log in logs)
    known = {m: c for m, c in cutoffs.items() if c is not None}
    if not known:
        return KnowledgeCutoffFilter(np.ones(n, dtype=np.bool_), None, None, 0, 0)
    model = max(known, key=lambda m: known[m])
    latest = known[model]
    keep = np.empty(n, dtype=np.bool_)
    dropped: set[str] = set()
    i = 0
    for log in logs:
        for _, event_id, step, resolved_at in _resolved(log):
            if resolved_at is None:
                raise ValueError(
                    f"{log.path}: step {event_id}#{step} has no "
                    "resolution time (a log written before they were recorded; run it again)"
                )
            keep[i] = not remembered(resolved_at, latest)
            if not keep[i]:
                dropped.add(event_id)
            i += 1
    return KnowledgeCutoffFilter(keep, latest, model, len(dropped), int(n - keep.sum()))


@dataclass(frozen=True)
class KnowledgeGap:
    """How much better a model's agents score on events resolved by its knowledge cutoff (it
    may remember them) than on later ones: a positive ``gap`` is Brier lost after the cutoff."""

    model: str
    knowledge_cutoff: date
    source: str | None
    """Where the cutoff comes from (the vendor, a file, a measurement)."""
    agents: tuple[str, ...]
    before_events: int
    after_events: int
    before_brier: float
    after_brier: float
    gap: float
    """``after_brier - before_brier``."""
    low: float | None
    high: float | None
    """Percentile interval of the event-clustered bootstrap (None with fewer than two events
    on a side)."""


def knowledge_gaps(
    logs: Sequence[StepColumns],
    table: ScoreTable,
    *,
    draws: int = 4000,
    seed: int = 0,
    level: float = 0.95,
) -> tuple[KnowledgeGap, ...]:
    """For each model of ``logs`` with a known knowledge cutoff, the Brier of its agents'
    forecasts on events resolved by the cutoff and after it, and their difference with an
    interval: whole events resampled (``cluster_bootstrap_means``), both groups on the same
    draws. ``table``: the score table of the logs' steps, in log order. Steps without a
    resolution time are left out."""
    from pastcast.models import knowledge_cutoff_source
    from pastcast.scoring import cluster_bootstrap_means

    agents: dict[str, set[str]] = {}
    cutoffs: dict[str, date] = {}
    for log in logs:
        for spec in log.header.agents:
            model = spec.args.get("model")
            if not isinstance(model, str):
                continue
            cut = log.header.knowledge_cutoffs.get(model) or knowledge_cutoff(model)
            if cut is None:
                continue
            cutoffs.setdefault(model, cut)
            agents.setdefault(model, set()).add(spec.name)
    rows: dict[str, list[int]] = {model: [] for model in cutoffs}
    before: dict[str, list[bool]] = {model: [] for model in cutoffs}
    i = 0
    for log in logs:
        models_of: dict[str, set[str]] = {}  # an agent's steps count once for its model
        for spec in log.header.agents:
            model = spec.args.get("model")
            if isinstance(model, str) and model in cutoffs:
                models_of.setdefault(spec.name, set()).add(model)
        for agent, _, _, resolved_at in _resolved(log):
            if resolved_at is not None:
                for model in models_of.get(agent, ()):
                    rows[model].append(i)
                    before[model].append(remembered(resolved_at, cutoffs[model]))
            i += 1
    brier_all = table.metrics("uniform")["brier"]
    events_all = table.codes("event")
    out: list[KnowledgeGap] = []
    for model in sorted(rows):
        if not rows[model]:
            continue
        cut = cutoffs[model]
        picked = np.asarray(rows[model], dtype=np.int64)
        brier = brier_all[picked]
        events = events_all[picked]
        was = np.asarray(before[model], dtype=np.bool_)
        n_before = int(np.unique(events[was]).size)
        n_after = int(np.unique(events[~was]).size)
        if not n_before or not n_after:
            continue
        cols = np.stack([np.where(was, brier, np.nan), np.where(~was, brier, np.nan)], 1)
        mean_b, mean_a = float(np.nanmean(cols[:, 0])), float(np.nanmean(cols[:, 1]))
        low: float | None = None
        high: float | None = None
        if n_before >= 2 and n_after >= 2 and draws > 0:
            boot = cluster_bootstrap_means(events, cols, draws, np.random.default_rng(seed))
            diff = boot[1] - boot[0]
            diff = diff[np.isfinite(diff)]
            if diff.size:
                tail = (1.0 - level) / 2.0 * 100.0
                low = float(np.percentile(diff, tail))
                high = float(np.percentile(diff, 100.0 - tail))
        out.append(
            KnowledgeGap(
                model=model,
                knowledge_cutoff=cut,
                source=knowledge_cutoff_source(model),
                agents=tuple(sorted(agents[model])),
                before_events=n_before,
                after_events=n_after,
                before_brier=mean_b,
                after_brier=mean_a,
                gap=mean_a - mean_b,
                low=low,
                high=high,
            )
        )
    return tuple(out)
