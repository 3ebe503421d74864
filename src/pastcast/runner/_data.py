"""A dataset's forecast dates under another schedule."""

from __future__ import annotations

from dataclasses import replace

from pastcast.dataset import Dataset
from pastcast.markets import make_schedule
from pastcast.records import StepSpec


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
    return replace(dataset, id=f"{dataset.id}+schedule={schedule}", steps=tuple(steps))
