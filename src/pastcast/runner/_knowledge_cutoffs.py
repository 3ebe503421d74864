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

__all__ = ["KnowledgeCutoffFilter", "after_knowledge_cutoff"]


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
