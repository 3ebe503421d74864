"""Question curation as the user asks for it: a dataset and an archive named by their specs, a
judge by its model spec, the curated dataset written with its funnel and every judgement cached."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pastcast.app._fields import as_field
from pastcast.app._models import cached_model
from pastcast.app._open import open_corpus, open_dataset
from pastcast.app._plans import CURATION_LEGS, CurationPlan
from pastcast.corpus import OpenedCorpus
from pastcast.errors import FieldError
from pastcast.owned import check_replaceable

if TYPE_CHECKING:
    from pastcast.curate import CurationResult

__all__ = ["Curated", "curate_dataset"]


@dataclass(frozen=True)
class Curated:
    """The curation, where it was written (None when no event was left: nothing is written)
    and the judgement cache."""

    result: CurationResult
    out: Path | None
    cache: Path

    @property
    def cached(self) -> int:
        """Judgements answered from the cache."""
        return sum(j.cached for j in self.result.judgements)


def _legs(retrieval: Sequence[str]) -> list[str]:
    legs = [leg.strip() for leg in retrieval if leg.strip()]
    bad = [leg for leg in legs if leg not in CURATION_LEGS]
    if not legs or bad or len(set(legs)) != len(legs):
        raise FieldError(
            "retrieval",
            f"expected a comma-separated list of {', '.join(CURATION_LEGS)}, "
            f"got {','.join(retrieval)!r}",
        )
    return legs


def _check_output(path: Path, field: str, kind: str | None) -> None:
    """Refuse, before any work, a folder that cannot be written: one pastcast did not make (a
    dataset is replaced only when pastcast wrote it), a file, a name the file system refuses."""
    if kind is not None:
        with as_field(field, FileExistsError):
            check_replaceable(path, kind)
    elif path.exists() and not path.is_dir():
        raise FieldError(field, f"{path}: exists and is not a directory")
    if path.exists():
        return
    try:  # made and removed again: the real one is written at the end
        path.mkdir(parents=True)
        path.rmdir()
    except OSError as exc:
        raise FieldError(field, f"{path}: cannot be created ({exc.strerror or exc})") from None


def _metadata(spec: str | Path) -> dict[str, Any]:
    """The source dataset's metadata (its import funnel, provenance), carried over."""
    from pastcast.world import is_world_spec

    if is_world_spec(str(spec)):
        return {"name": "world", "provenance": {"source": str(spec)}}
    from pastcast.dataset import read_metadata

    try:
        return read_metadata(spec)
    except ValueError:
        return {}


def curate_dataset(plan: CurationPlan) -> Curated:
    """Curate as ``plan`` says: its dataset against its archive with its judge, the curated
    dataset written to its ``out`` unless no event is left, the plan recorded with it.
    Judgements are cached (default: ``OUT.judge-cache`` beside ``out``), so re-curating makes
    no new model calls. ``FieldError`` naming the field before any work."""
    from pastcast.curate import Judge, Retriever, curate_dataset, save_curation
    from pastcast.models import check_model_spec

    judge, dataset, corpus, embedder = plan.judge, plan.dataset, plan.corpus, plan.embedder
    with as_field("judge"):  # before the dataset and the corpus are read (minutes, at scale)
        check_model_spec(judge)
    legs = _legs(plan.retrieval)
    if embedder is not None and "dense" not in legs:
        raise FieldError("embedder", "only with a dense leg in the retrieval")
    target = Path(plan.out)
    if Path(dataset).resolve() == target.resolve():
        raise FieldError(
            "out", f"{target}: is the dataset being curated; write the curated one elsewhere"
        )
    _check_output(target, "out", "dataset")
    cache = plan.cache
    cache_dir = Path(cache) if cache is not None else target.with_name(target.name + ".judge-cache")
    _check_output(cache_dir, "cache", None)
    data = open_dataset(dataset)
    opened: list[OpenedCorpus] = []
    try:
        for leg in legs:
            options = {"embedder": embedder} if leg == "dense" and embedder else {}
            opened.append(open_corpus(corpus, leg, **options))
        with cached_model(judge, cache_dir) as cached:
            retriever = Retriever(opened, window_days=plan.window_days or None)
            judging = Judge(cached, max_tokens=plan.max_tokens)
            result = curate_dataset(data, retriever, judging, plan.config)
            settings = {
                "source_dataset": data.id,
                "corpus": opened[0].identity().model_dump(mode="json"),
                "plan": plan.model_dump(mode="json"),
            }
            written = None
            if result.dataset.events:  # an empty dataset is never written as if it were a result
                save_curation(result, target, metadata=_metadata(dataset), settings=settings)
                written = target
    finally:
        for backend in opened:
            backend.close()
    return Curated(result, written, cache_dir)
