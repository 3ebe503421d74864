"""The dataset and corpus specs every entry point must accept, made once per test session.

A case names what a user types: a world spec with a field, a dataset directory, a Forecast-Dojo
release folder; and a corpus: none, or an index directory (of the world's own news, so that it
is accepted with the world too). Entry points are tested over ``DATASET_CASES`` x
``CORPUS_CASES``; a new command adds its own entry point to the tests that use them.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from types import ModuleType
from typing import Any

from pastcast.corpus.embedded import EmbeddedIndex
from pastcast.dataset import save_dataset
from pastcast.world import world_from_spec

TESTS = Path(__file__).resolve().parents[1]
WORLD = "world:1,hindsight_fraction=0.2,n_events=6,n_documents=400"
"""The embedded world with planted rewritten documents (screened out of its corpus)."""


def _release_factories() -> ModuleType:
    """``tests/markets/release_factories.py``, the writer of release folders the tests use."""
    path = TESTS / "markets" / "release_factories.py"
    spec = importlib.util.spec_from_file_location("release_factories", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _release(root: Path) -> str:
    factories: Any = _release_factories()
    train = [
        factories.release_row("r-1", resolved_label="Yes"),
        factories.release_row("r-2", close_date=date(2025, 8, 20)),
    ]
    held_out = [factories.release_row("r-3", forecast_dates=[date(2025, 7, 10)],
                                      crowd_probabilities=[[0.7, 0.3]])]  # fmt: skip
    return str(factories.write_release(root / "release", train, held_out))


def _dataset_dir(root: Path) -> str:
    save_dataset(world_from_spec(WORLD).dataset, root / "dataset")
    return str(root / "dataset")


@dataclass(frozen=True)
class DatasetCase:
    """A dataset spec as typed, made under a folder (``make``), and the split its events are
    in (for entry points that select by split)."""

    name: str
    make: Callable[[Path], str]
    split: str


DATASET_CASES = (
    DatasetCase("world-spec", lambda _root: WORLD, "unsplit"),
    DatasetCase("dataset-dir", _dataset_dir, "unsplit"),
    DatasetCase("dojo-release", _release, "train"),
)
CORPUS_CASES = ("no-corpus", "index-dir")


@dataclass(frozen=True)
class Made:
    """The specs of the session, by case name."""

    datasets: dict[str, str]
    index_dir: str

    def corpus(self, case: str) -> str | None:
        return None if case == "no-corpus" else self.index_dir


def make_specs(root: Path) -> Made:
    index = root / "index"
    EmbeddedIndex.build(world_from_spec(WORLD).corpus_documents, index)
    return Made({c.name: c.make(root) for c in DATASET_CASES}, str(index))


DATASET_SPECS = [c.name for c in DATASET_CASES]
"""The dataset cases by name, as parametrize values of the commands that read a dataset."""


def materialize(name: str, root: Path) -> str:
    """The spec of the dataset case ``name`` as a command takes it, made under ``root``."""
    return next(c for c in DATASET_CASES if c.name == name).make(root)
