"""Leakage audits as the user asks for them: of how datasets were built (named as every command
names them) and of what agents saw in a run (its log read once, its dataset and corpus opened
from their specs)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pastcast.app._corpus import corpus_documents
from pastcast.app._datasets import open_dataset
from pastcast.app._errors import AppError
from pastcast.app._reading import RunsRead, check_dataset, read_runs
from pastcast.dataset import Dataset

if TYPE_CHECKING:
    from pastcast.audit import ConstructionAudit, LeakageCard, RunAudit, TextAudit
    from pastcast.records import Document

__all__ = [
    "RunAuditRead",
    "audit_dataset_texts",
    "audit_datasets",
    "audit_run_log",
    "run_leakage_cards",
]


def _schedule_options(specs: Sequence[str | Path]) -> dict[str, Any]:
    """The import options a dataset directory was built with (they apply to every schedule)."""
    from pastcast.dataset import read_metadata

    for spec in specs:
        path = Path(spec)
        if path.is_dir():
            try:
                config = read_metadata(path).get("schedule_config") or {}
            except ValueError:
                continue
            if "start_at_first_belief" in config:
                return {"start_at_first_belief": bool(config["start_at_first_belief"])}
    return {}


def audit_datasets(
    datasets: Sequence[str | Path],
    *,
    schedules: Sequence[str] | None = None,
    dataset_only: bool = False,
    folds: int = 5,
    draws: int = 2000,
    seed: int = 0,
    permutations: int = 500,
    alpha: float = 0.05,
) -> ConstructionAudit:
    """The construction audit of ``datasets`` (specs ``open_dataset`` reads; several are pooled,
    each event kept apart): their own steps and those of each of ``schedules`` (default: every
    registered one; none with ``dataset_only``) rebuilt on the same events, each judged against
    ``permutations`` draws of its permutation null at level ``alpha``."""
    from pastcast.audit import audit_construction

    if not datasets:
        raise AppError("datasets", "no dataset given")
    loaded = [open_dataset(spec, field=f"datasets[{i}]") for i, spec in enumerate(datasets)]
    try:
        return audit_construction(
            loaded,
            [] if dataset_only else schedules,
            schedule_options=_schedule_options(datasets),
            folds=folds,
            draws=draws,
            seed=seed,
            permutations=permutations,
            alpha=alpha,
        )
    except ValueError as exc:  # an unknown schedule, or options it cannot take
        raise AppError("schedules", str(exc)) from None


def audit_dataset_texts(dataset: str | Path | Dataset) -> TextAudit:
    """The question-text audit of ``dataset`` (a spec ``open_dataset`` reads): dated edits left
    out of the steps, steps shown an undated edit taken after their cutoff, and steps naming the
    answer of another event still open at their cutoff."""
    from pastcast.audit import audit_texts

    ds = dataset if isinstance(dataset, Dataset) else open_dataset(dataset)
    return audit_texts(ds)


@dataclass(frozen=True)
class RunAuditRead:
    """A run's audit and the log as read (each step once)."""

    audit: RunAudit
    read: RunsRead


def audit_run_log(
    run_log: str | Path,
    *,
    dataset: str | Path | None = None,
    corpus: str | None = None,
) -> RunAuditRead:
    """The audit of the run log ``run_log``: ``dataset`` (a spec; default: the embedded world
    the log names) for post-cutoff prices and the question's wording, ``corpus`` (an index
    directory or a ``KIND:PATH`` source, see ``corpus_documents``; default: the embedded world's
    documents when the log or ``dataset`` names it) for document dates, the content screen and
    verbatim post-cutoff text."""
    from pastcast.audit import audit_run
    from pastcast.world import is_world_spec, world_from_spec, world_named_by

    read = read_runs([run_log], require_steps=False)
    log = read.logs[0]
    world = world_named_by(log.header.dataset_id)
    data: Dataset | None = None
    if dataset is not None and is_world_spec(str(dataset)):  # its documents too
        try:
            world = world_from_spec(str(dataset))
        except ValueError as exc:
            raise AppError("dataset", str(exc)) from None
        data = world.dataset
    elif dataset is not None:
        data = open_dataset(dataset)
    if data is not None and dataset is not None:
        check_dataset(read.logs, data, dataset)
    elif world is not None:
        data = world.dataset
    documents: Iterable[Document] | None = (
        corpus_documents(corpus) if corpus else (world.documents if world else None)
    )
    try:
        audit = audit_run(log, documents=documents, dataset=data)
    except (OSError, ValueError) as exc:  # a corpus that fails while it is read
        raise AppError("corpus", f"{corpus!r}: {exc}") from None
    return RunAuditRead(audit, read)


def run_leakage_cards(read: RunsRead) -> tuple[LeakageCard, ...]:
    """The leakage card of each run read: its dataset (the one given, or the embedded world the
    log names; a log of another dataset without it has no card), the corpus of its header and
    the knowledge cutoffs it recorded for its models."""
    from pastcast.audit import leakage_card
    from pastcast.models import knowledge_cutoff
    from pastcast.world import world_named_by

    cards = []
    for log in read.logs:
        data = read.dataset
        if data is None:
            world = world_named_by(log.header.dataset_id)
            data = world.dataset if world is not None else None
        if data is None:
            continue
        models: dict[str, Any] = {}
        for spec in log.header.agents:
            model = spec.args.get("model")
            if isinstance(model, str):
                models[model] = log.header.knowledge_cutoffs.get(model) or knowledge_cutoff(model)
        cards.append(
            leakage_card(data, corpus=log.header.corpus, models=models, run_id=log.header.run_id)
        )
    return tuple(cards)
