"""The dataset and the corpus a string names, opened the same way by every entry point: the
embedded world, a dataset directory or a Forecast-Dojo release (``open_dataset``); an index
directory or a database URL (``open_corpus``, the application's face of
``pastcast.corpus.open_backend``, which imports only the backend it opens)."""

from __future__ import annotations

import warnings
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pastcast.app._fields import as_field
from pastcast.corpus import OpenedCorpus, is_database_url, open_backend, retrieval_modes
from pastcast.cutoff import DayConvention
from pastcast.errors import FieldError, within
from pastcast.world import WORLD_SPEC, is_world_spec, world_from_spec

if TYPE_CHECKING:  # pyarrow and the dataset layer: not imported to open a corpus
    from pastcast.dataset import Dataset

DATASET_SPEC_HELP = (
    f"{WORLD_SPEC!r} (the embedded world, docs/world.md), a dataset directory, or a "
    "Forecast-Dojo release folder (questions/train.parquet, questions/eval.parquet)"
)


class DatasetNote(UserWarning):
    """What reading a dataset dropped or assumed (a release's forecast dates before the question
    opened, ...), one warning per reason with its count. The CLI prints them as ``note:``
    lines."""


def open_dataset(
    spec: str | Path | Dataset,
    *,
    convention: DayConvention = DayConvention.START_OF_DAY,
    field: str = "dataset",
) -> Dataset:
    """The dataset ``spec`` names: ``world[:SEED][,FIELD=VALUE...]``, a dataset directory, or
    a Forecast-Dojo release (its forecast dates read as cutoffs under ``convention``, which only
    a release takes). ``FieldError`` naming ``field`` when it is none of these or cannot be
    read. What reading a release drops is warned of (``DatasetNote``). A dataset given is
    returned as it is."""
    from pastcast.dataset import Dataset

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
    counted: Counter[str] = Counter()
    try:
        dataset = load_benchmark(path, convention=convention, notes=counted)
    except (OSError, ValueError) as exc:
        raise FieldError(field, f"{text}: {exc}") from None
    for reason, count in counted.items():
        warnings.warn(f"{text}: {reason}: {count}", DatasetNote, stacklevel=2)
    return dataset


def check_search_options(retrieval: str, **options: Any) -> dict[str, Any]:
    """The ``options`` of ``open_corpus`` that are given (not None), once ``retrieval`` is
    known and no dense-only option goes with bm25: checked before anything is built for them
    (``FieldError`` naming the field)."""
    if retrieval not in retrieval_modes():
        raise FieldError(
            "retrieval", f"expected one of {', '.join(retrieval_modes())}, got {retrieval!r}"
        )
    given = {k: v for k, v in options.items() if v is not None}
    for dense_only in ("embedder", "nprobe", "vectors"):
        if dense_only in given and retrieval == "bm25":
            raise FieldError(dense_only, "is only for retrieval dense or hybrid")
    name = given.get("embedder")
    if isinstance(name, str):
        # An embedder served elsewhere (a paper's Qwen3, an OpenAI-compatible one) is built,
        # which sends nothing, so that a missing address is refused before any index is built
        # or embedded; a local model is only loaded when the corpus opens.
        from pastcast.corpus.dense import embedders, resolve_embedder

        kind = name if name in embedders else name.partition(":")[0]
        if kind in embedders and embedders.get(kind).meta.get("takes_spec"):
            with within("embedder"):
                built = resolve_embedder(name)
            close = getattr(built, "close", None)
            if callable(close):
                close()
    return given


def open_corpus(
    spec: str | Path, retrieval: str = "bm25", *, field: str = "corpus", **options: Any
) -> OpenedCorpus:
    """The corpus at ``spec`` (an index directory or a database URL) for ``retrieval``;
    ``options`` (``embedder``, ``nprobe``, ``schema``) that are None are left out, and
    ``schema`` is dropped for a directory. ``FieldError`` naming ``retrieval`` or ``field``."""
    given = check_search_options(retrieval, **options)
    if not is_database_url(spec):
        given.pop("schema", None)  # a directory has no schema
    with within(field):
        return open_backend(spec, retrieval, **given)
