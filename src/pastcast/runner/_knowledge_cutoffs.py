"""Leave out events a model may remember: those that resolved by a model's knowledge cutoff.

Every agent is then compared on the same events: an event is kept only if it resolved after the
latest knowledge cutoff among the models of the logs (agents without a model do not constrain
it). Cutoffs come from each log's header (as recorded when it ran), else from the registry.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date

from pastcast.models import knowledge_cutoff, remembered
from pastcast.runlog import RunLog, StepRecord

__all__ = ["KnowledgeCutoffFilter", "KnowledgeGap", "after_knowledge_cutoff", "knowledge_gaps"]


@dataclass(frozen=True)
class KnowledgeCutoffFilter:
    steps: tuple[StepRecord, ...]
    """The steps of events that resolved after every model's cutoff."""
    knowledge_cutoff: date | None
    """The latest knowledge cutoff (None: no model in the logs)."""
    model: str | None
    """The model it belongs to."""
    dropped_events: int
    dropped_steps: int


def after_knowledge_cutoff(logs: Sequence[RunLog]) -> KnowledgeCutoffFilter:
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
    steps = [s for log in logs for s in log.steps]
    known = {m: c for m, c in cutoffs.items() if c is not None}
    if not known:
        return KnowledgeCutoffFilter(tuple(steps), None, None, 0, 0)
    model = max(known, key=lambda m: known[m])
    latest = known[model]
    kept: list[StepRecord] = []
    dropped: set[str] = set()
    for log in logs:
        for s in log.steps:
            if s.grading.resolved_at is None:
                raise ValueError(
                    f"{log.path}: step {s.event_id}#{s.step_index} has no "
                    "resolution time (a log written before they were recorded; run it again)"
                )
            if remembered(s.grading.resolved_at, latest):
                dropped.add(s.event_id)
            else:
                kept.append(s)
    return KnowledgeCutoffFilter(tuple(kept), latest, model, len(dropped), len(steps) - len(kept))


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
    logs: Sequence[RunLog], *, draws: int = 4000, seed: int = 0, level: float = 0.95
) -> tuple[KnowledgeGap, ...]:
    """For each model of ``logs`` with a known knowledge cutoff, the Brier of its agents'
    forecasts on events resolved by the cutoff and after it, and their difference with an
    interval: whole events resampled (``cluster_bootstrap_means``), both groups on the same
    draws. Steps without a resolution time are left out."""
    import numpy as np

    from pastcast.models import knowledge_cutoff_source
    from pastcast.scoring import cluster_bootstrap_means, table_from_records

    by_model: dict[str, list[StepRecord]] = {}
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
            by_model.setdefault(model, []).extend(
                s for s in log.steps if s.agent == spec.name and s.grading.resolved_at is not None
            )
    out: list[KnowledgeGap] = []
    for model in sorted(by_model):
        steps = by_model[model]
        if not steps:
            continue
        cut = cutoffs[model]
        table = table_from_records(steps)
        brier = table.metrics("uniform")["brier"]
        before = np.array(
            [
                s.grading.resolved_at is not None and remembered(s.grading.resolved_at, cut)
                for s in steps
            ]
        )
        events = table.codes("event")
        n_before = len({s.event_id for s, b in zip(steps, before, strict=True) if b})
        n_after = len({s.event_id for s, b in zip(steps, before, strict=True) if not b})
        if not n_before or not n_after:
            continue
        cols = np.stack([np.where(before, brier, np.nan), np.where(~before, brier, np.nan)], 1)
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
