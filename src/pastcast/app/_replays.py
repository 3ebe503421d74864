"""A replay: a dataset and the corpus its agents search, opened the same way by every entry
point (``pastcast run``, plans, arena replays, the Gymnasium environment, Inspect, verifiers).

The entry point owns its loop; the replay owns what an agent may see: each step's episode with
tools bound to its cutoff, and the grading, used only after the episode.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from pastcast.app._fields import as_field
from pastcast.app._open import check_search_options, open_corpus, open_dataset
from pastcast.corpus import OpenedCorpus, content_digest
from pastcast.cutoff import DayConvention
from pastcast.dataset import Dataset
from pastcast.env import EnvConfig, Episode, ForecastEnv
from pastcast.errors import FieldError
from pastcast.owned import check_replaceable
from pastcast.records import CorpusIdentity, Setting, StepSpec
from pastcast.retrying import redact_url
from pastcast.runlog import Grading
from pastcast.runner import CorpusRef, grade_step
from pastcast.world import is_world_spec, world_from_spec

if TYPE_CHECKING:
    from pastcast.world import World

WORLD_INDEX = "world-index"
"""The kind (``pastcast.owned``) of the index a replay builds of the embedded world's news."""


@dataclass(frozen=True)
class Replay:
    """The steps of a dataset, ready to play: ``episode`` for the agent, ``grading`` after.
    ``close`` (or a ``with`` block) releases the corpus."""

    dataset: Dataset
    backend: OpenedCorpus | None
    corpus_ref: CorpusRef | None = None
    """Where the corpus lies, for executors in other processes that open it themselves (None
    for none, or for an index held in memory)."""

    @property
    def corpus(self) -> CorpusIdentity | None:
        return None if self.backend is None else self.backend.identity()

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
            raise FieldError("step", f"dataset {self.dataset.id}: no step {event_id}#{step_index}")
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

    def close(self) -> None:
        if self.backend is not None:
            self.backend.close()

    def __enter__(self) -> Replay:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def open_replay(
    dataset: str | Path,
    corpus: str | Path | None = None,
    retrieval: str = "bm25",
    embedder: str | None = None,
    *,
    index_dir: Path | None = None,
    convention: DayConvention = DayConvention.START_OF_DAY,
    nprobe: int | None = None,
) -> Replay:
    """Open ``dataset`` (``world[:SEED][,FIELD=VALUE...]``, a dataset directory or a
    Forecast-Dojo release, see ``open_dataset``) with ``corpus`` (an index directory or a
    database URL) searched by ``retrieval``. The embedded world without a corpus searches its
    own news: indexed in ``index_dir`` (kept, and rebuilt only when it no longer holds the
    world's documents) or, without one, in memory (bm25 only); a corpus given with the world
    must hold exactly its documents. ``nprobe``: dense and hybrid search approximate, with
    lists trained before the cutoff (see ``pastcast.corpus.open_backend``). The caller closes the
    replay; ``FieldError`` names the field of any problem."""
    text = str(dataset)
    check_search_options(retrieval, embedder=embedder, nprobe=nprobe)  # before any index is built
    if is_world_spec(text) and convention is DayConvention.START_OF_DAY:
        with as_field("dataset"):
            world = world_from_spec(text)
        return _world_replay(text, world, corpus, retrieval, embedder, index_dir, nprobe)
    loaded = open_dataset(text, convention=convention)
    if corpus is None:
        if retrieval != "bm25" or embedder is not None:
            raise FieldError(
                "retrieval", f"{retrieval} needs a corpus with a dataset directory or a release"
            )
        return Replay(loaded, None)
    opened = open_corpus(corpus, retrieval, embedder=embedder, nprobe=nprobe)
    ref = CorpusRef(spec=str(corpus), retrieval=retrieval, embedder=embedder, nprobe=nprobe)
    return Replay(loaded, opened, ref)


def _world_replay(
    spec: str,
    world: World,
    corpus: str | Path | None,
    retrieval: str,
    embedder: str | None,
    index_dir: Path | None,
    nprobe: int | None = None,
) -> Replay:
    if corpus is not None:
        opened = open_corpus(corpus, retrieval, embedder=embedder, nprobe=nprobe)
        got = opened.identity().content_sha256
        if not world.holds_its_documents(got):  # any other corpus would not match its events
            opened.close()
            digest = content_digest(world.corpus_documents)
            raise FieldError(
                "corpus",
                f"{redact_url(str(corpus))}: holds other documents than {spec} (content hash "
                f"{got[:12]}..., the world's {digest[:12]}...); build one with 'pastcast corpus "
                f"build {spec} --out DIR'",
            )
        ref = CorpusRef(spec=str(corpus), retrieval=retrieval, embedder=embedder, nprobe=nprobe)
        return Replay(world.dataset, opened, ref)
    if index_dir is None:
        if retrieval != "bm25" or embedder is not None or nprobe is not None:
            raise FieldError(
                "retrieval",
                f"{retrieval} search of the embedded world needs its index on disk: build one "
                f"with 'pastcast corpus build {spec} --out DIR' and give it as the corpus",
            )
        # Opened once per process through ``shared_replay`` by the frameworks.
        from pastcast.corpus.embedded import EmbeddedIndex  # the world's own index: only here

        return Replay(world.dataset, EmbeddedIndex.in_memory(world.corpus_documents))
    _world_index(world, index_dir)
    opened = open_corpus(index_dir, retrieval, field="retrieval", embedder=embedder, nprobe=nprobe)
    ref = CorpusRef(spec=str(index_dir), retrieval=retrieval, embedder=embedder, nprobe=nprobe)
    return Replay(world.dataset, opened, ref)


def _world_index(world: World, index_dir: Path) -> None:
    """The world's own index in ``index_dir``, rebuilt whenever it does not hold the world's
    documents; only an index made for a world is replaced (``pastcast.owned``). Its dating
    provenance is counted as ``corpus build`` counts it (``dating.json``), so a run's header and
    its leakage card record which date the documents carry."""
    from pastcast.corpus.embedded import EmbeddedIndex  # the world's own index: only here
    from pastcast.corpus.sources import SourceRun, with_dating

    digest = content_digest(world.corpus_documents)
    try:
        current = EmbeddedIndex.open(index_dir).identity().content_sha256
    except (OSError, ValueError):  # none yet, or unreadable: rebuilt
        current = None
    if current == digest:
        return
    try:
        check_replaceable(index_dir, WORLD_INDEX)
    except FileExistsError as exc:
        raise FieldError("out", f"the world's index goes beside the run log: {exc}") from None
    dated: SourceRun = with_dating(SourceRun(iter(world.corpus_documents)))
    try:  # a sequence in memory, as before: the build needs no spool files
        documents = list(dated.documents)
        EmbeddedIndex.build(documents, index_dir, overwrite=True, progress=True, kind=WORLD_INDEX)
    except BaseException:
        dated.discard()
        raise
    dated.finish(index_dir)


_SHARED: dict[tuple[str, str | None, str, str | None], Replay] = {}
_SHARED_LOCK = threading.Lock()


def shared_replay(
    dataset: str | Path,
    corpus: str | Path | None = None,
    retrieval: str = "bm25",
    embedder: str | None = None,
) -> Replay:
    """``open_replay``, opened once per process and shared, never closed: frameworks (Inspect,
    verifiers, Gymnasium) rebuild their solvers, scorers and environments from these strings."""
    key = (str(dataset), None if corpus is None else str(corpus), retrieval, embedder)
    with _SHARED_LOCK:
        if key not in _SHARED:
            _SHARED[key] = open_replay(dataset, corpus, retrieval, embedder)
        return _SHARED[key]
