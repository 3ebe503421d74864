"""The dataset a string names: the embedded world, a dataset directory or a Forecast-Dojo
release, opened the same way by every entry point."""

from __future__ import annotations

import warnings
from collections import Counter
from pathlib import Path

from pastcast.app._fields import as_field
from pastcast.cutoff import DayConvention
from pastcast.dataset import Dataset
from pastcast.errors import FieldError
from pastcast.world import WORLD_SPEC, is_world_spec, world_from_spec

__all__ = ["DATASET_SPEC_HELP", "DatasetNote", "open_dataset"]

DATASET_SPEC_HELP = (
    f"{WORLD_SPEC!r} (the embedded world, docs/world.md), a dataset directory, or a "
    "Forecast-Dojo release folder (questions/train.parquet, questions/eval.parquet)"
)


class DatasetNote(UserWarning):
    """What reading a dataset dropped or assumed (a release's forecast dates before the question
    opened, ...), one warning per reason with its count, when the caller passes no ``notes``
    to count them itself. The CLI prints them as ``note:`` lines."""


def open_dataset(
    spec: str | Path | Dataset,
    *,
    convention: DayConvention = DayConvention.START_OF_DAY,
    field: str = "dataset",
    notes: Counter[str] | None = None,
) -> Dataset:
    """The dataset ``spec`` names: ``world[:SEED][,FIELD=VALUE...]``, a dataset directory, or
    a Forecast-Dojo release (its forecast dates read as cutoffs under ``convention``, which only
    a release takes). ``FieldError`` naming ``field`` when it is none of these or cannot be
    read. What reading a release drops is counted in ``notes``, or warned of (``DatasetNote``)
    when none is given. A dataset given is returned as it is."""
    if isinstance(spec, Dataset):
        return spec
    text = str(spec)
    if is_world_spec(text):
        if convention is not DayConvention.START_OF_DAY:
            raise FieldError(
                "day_convention", f"{convention.value} is only for a Forecast-Dojo release"
            )
        with as_field(field):
            return world_from_spec(text).dataset
    path = Path(text)
    if not path.is_dir():
        raise FieldError(field, f"{text!r} is not a dataset directory (give {DATASET_SPEC_HELP})")
    from pastcast.markets import is_release, load_benchmark  # only for a dataset directory

    if convention is not DayConvention.START_OF_DAY and not is_release(path):
        raise FieldError(
            "day_convention",
            f"{convention.value}: {text} is a dataset directory whose cutoffs are fixed (choose "
            "the convention when importing it)",
        )
    counted: Counter[str] = Counter() if notes is None else notes
    try:
        dataset = load_benchmark(path, convention=convention, notes=counted)
    except (OSError, ValueError) as exc:
        raise FieldError(field, f"{text}: {exc}") from None
    if notes is None:
        for reason, count in counted.items():
            warnings.warn(f"{text}: {reason}: {count}", DatasetNote, stacklevel=2)
    return dataset
