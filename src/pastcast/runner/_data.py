"""The dataset a plan names, and its forecast dates under another schedule."""

from __future__ import annotations

from pathlib import Path

from pastcast.dataset import Dataset, load_dataset
from pastcast.markets import make_schedule
from pastcast.records import StepSpec

__all__ = ["open_dataset", "reschedule"]


def open_dataset(spec: str) -> Dataset:
    """``world[:SEED][,FIELD=VALUE...]`` (the embedded world's dataset) or a dataset
    directory; ``ValueError`` with one line otherwise."""
    from pastcast.world import WORLD_SPEC, is_world_spec, world_from_spec

    if is_world_spec(spec):
        try:
            return world_from_spec(spec).dataset
        except ValueError as exc:
            raise ValueError(f"dataset {exc}") from None
    path = Path(spec)
    if not path.is_dir():
        raise ValueError(f"dataset {spec!r}: not a dataset directory (or {WORLD_SPEC!r})")
    return load_dataset(path)


def reschedule(dataset: Dataset, schedule: str | None) -> Dataset:
    """The dataset with its forecast steps made by ``schedule`` (a registered schedule:
    ``causal-dojo``, ``dojo``, ...) from each resolved event's beliefs; unchanged for None. The
    dataset id names the schedule, so a run log's header (and a resume) tells the two apart."""
    if schedule is None:
        return dataset
    make = make_schedule(schedule)
    steps: list[StepSpec] = []
    for event in dataset.events:
        resolution = dataset.resolutions.get(event.id)
        if resolution is not None:
            steps.extend(make(event, dataset.beliefs.get(event.id, ()), resolution))
    return Dataset(
        f"{dataset.id}+schedule={schedule}",
        dataset.events,
        dataset.resolutions,
        dataset.beliefs,
        tuple(steps),
        dataset.splits,
        dataset.texts,
    )
