"""A dataset and its corpus opened for replay by another framework's loop (Inspect, verifiers).

The framework owns the loop (samples, rollouts, its model clients); pastcast owns what the
agent may see: each step's episode with tools bound to its cutoff, and the grading, which
stays here and is used only after the episode.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

from pastcast.corpus import (
    CorpusBackend,
    EmbeddedIndex,
    OpenedCorpus,
    open_backend,
    redact_url,
)
from pastcast.dataset import Dataset, load_dataset
from pastcast.env import EnvConfig, Episode, ForecastEnv
from pastcast.records import CorpusIdentity, Setting, StepSpec
from pastcast.runlog import Grading
from pastcast.runner import grade_step

__all__ = ["Replay", "ReplayError", "open_replay"]


class ReplayError(ValueError):
    """A dataset or corpus option that cannot be opened; the message is one line naming it."""


@dataclass(frozen=True)
class Replay:
    """The steps of a dataset, ready to play: ``episode`` for the agent, ``grading`` after."""

    dataset: Dataset
    backend: CorpusBackend | None
    corpus: CorpusIdentity | None

    def steps(self, split: str | None = None, max_events: int | None = None) -> list[StepSpec]:
        """The forecast steps in the runner's order: events with steps (of ``split``), the first
        ``max_events`` of them, each event's steps in order."""
        ids = list(self.dataset.event_ids_with_steps())
        if split is not None:
            ids = [e for e in ids if self.dataset.splits.get(e) == split]
        if max_events is not None:
            ids = ids[:max_events]
        return [s for e in ids for s in self.dataset.steps_of(e)]

    def step(self, event_id: str, step_index: int) -> StepSpec:
        found = [s for s in self.dataset.steps_of(event_id) if s.step_index == step_index]
        if not found:
            raise ReplayError(f"dataset {self.dataset.id}: no step {event_id}#{step_index}")
        return found[0]

    def episode(
        self, step: StepSpec, config: EnvConfig, *, setting: Setting, rollout: int = 0
    ) -> Episode:
        """A fresh episode of ``step``: no corpus under ``no_tools``; no notebook carried (each
        step is played on its own)."""
        backend = None if setting == "no_tools" else self.backend
        return ForecastEnv(self.dataset, backend, config).reset(
            step, config=config, rollout=rollout
        )

    def grading(self, step: StepSpec) -> Grading:
        return grade_step(self.dataset, step)


_OPENED: dict[tuple[str, str | None, str], Replay] = {}
_LOCK = threading.Lock()


def open_replay(dataset: str, corpus: str | None = None, retrieval: str = "bm25") -> Replay:
    """Open ``dataset`` (``world[:SEED]`` or a dataset directory) with ``corpus`` (an index
    directory or a database URL; the embedded world indexes its own documents in memory when
    none is given). Opened once per process and shared: frameworks build their solvers, scorers
    and environments from these strings. Raises ``ReplayError`` in one line."""
    key = (dataset, corpus, retrieval)
    with _LOCK:
        if key not in _OPENED:
            _OPENED[key] = _open(dataset, corpus, retrieval)
        return _OPENED[key]


def _open(dataset: str, corpus: str | None, retrieval: str) -> Replay:
    from pastcast.world import WORLD_SPEC, is_world_spec, world_from_spec

    if is_world_spec(dataset):
        try:
            world = world_from_spec(dataset)
        except ValueError as exc:
            raise ReplayError(f"dataset {exc}") from None
        if corpus is None:
            index = EmbeddedIndex.in_memory(world.corpus_documents)
            return Replay(world.dataset, index, index.identity())
        opened = _open_corpus(corpus, retrieval)
        # Any other corpus would not match the world's events.
        if not world.holds_its_documents(opened.identity().content_sha256):
            raise ReplayError(
                f"corpus {redact_url(corpus)}: holds other documents than {dataset} (build one "
                f"with 'pastcast corpus build {dataset} --out DIR')"
            )
        return Replay(world.dataset, opened, opened.identity())
    if not Path(dataset).is_dir():
        raise ReplayError(f"dataset {dataset!r}: not a dataset directory (or {WORLD_SPEC!r})")
    try:
        loaded = load_dataset(dataset)
    except ValueError as exc:
        raise ReplayError(str(exc)) from None
    if corpus is None:
        return Replay(loaded, None, None)
    opened = _open_corpus(corpus, retrieval)
    return Replay(loaded, opened, opened.identity())


def _open_corpus(corpus: str, retrieval: str) -> OpenedCorpus:
    try:
        return open_backend(corpus, retrieval)
    except ValueError as exc:
        raise ReplayError(f"corpus {redact_url(corpus)}: {exc}") from None
