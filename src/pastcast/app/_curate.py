"""Question curation as the user asks for it: a dataset and an archive named by their specs, a
judge by its model spec, the curated dataset written with its funnel and every judgement cached."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pastcast.app._datasets import open_dataset
from pastcast.app._open_corpus import open_corpus
from pastcast.corpus import OpenedCorpus
from pastcast.errors import FieldError
from pastcast.owned import check_replaceable

if TYPE_CHECKING:
    from pastcast.curate import CurationConfig, CurationResult

__all__ = ["CURATION_LEGS", "Curated", "curate_dataset"]

CURATION_LEGS = ("bm25", "dense")


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


def _legs(retrieval: str | Sequence[str]) -> list[str]:
    parts = retrieval.split(",") if isinstance(retrieval, str) else retrieval
    legs = [leg.strip() for leg in parts if leg.strip()]
    bad = [leg for leg in legs if leg not in CURATION_LEGS]
    if not legs or bad or len(set(legs)) != len(legs):
        raise FieldError(
            "retrieval",
            f"expected a comma-separated list of {', '.join(CURATION_LEGS)}, got {retrieval!r}",
        )
    return legs


def _check_output(path: Path, field: str, kind: str | None) -> None:
    """Refuse, before any work, a folder that cannot be written: one pastcast did not make (a
    dataset is replaced only when pastcast wrote it), a file, a name the file system refuses."""
    if kind is not None:
        try:
            check_replaceable(path, kind)
        except FileExistsError as exc:
            raise FieldError(field, str(exc)) from None
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


def curate_dataset(
    dataset: str | Path,
    corpus: str | Path,
    judge: str,
    out: str | Path,
    *,
    retrieval: str | Sequence[str] = CURATION_LEGS,
    embedder: str | None = None,
    window_days: int | None = None,
    config: CurationConfig | None = None,
    max_tokens: int = 512,
    cache: str | Path | None = None,
) -> Curated:
    """Curate ``dataset`` (a spec ``open_dataset`` reads) against the archive ``corpus`` (an
    index directory or a database URL) with the judge model ``judge`` (a model spec), retrieval
    legs ``retrieval`` fused by reciprocal rank, documents of the ``window_days`` before each
    judging date (None: no limit); write the curated dataset to ``out`` (a folder pastcast made,
    or a new one) unless no event is left. Judgements are cached in ``cache`` (default:
    ``OUT.judge-cache`` beside ``out``), so re-curating makes no new model calls."""
    from pastcast.curate import CurationConfig, Judge, Retriever, curate_dataset, save_curation
    from pastcast.models import CachedModel, ModelError, check_model_spec, resolve_model

    try:  # before the dataset and the corpus are read (minutes, for a large archive)
        check_model_spec(judge)
    except ValueError as exc:
        raise FieldError("judge", str(exc)) from None
    legs = _legs(retrieval)
    if embedder is not None and "dense" not in legs:
        raise FieldError("embedder", "only with a dense leg in the retrieval")
    target = Path(out)
    if Path(dataset).resolve() == target.resolve():
        raise FieldError(
            "out", f"{target}: is the dataset being curated; write the curated one elsewhere"
        )
    _check_output(target, "out", "dataset")
    cache_dir = Path(cache) if cache is not None else target.with_name(target.name + ".judge-cache")
    _check_output(cache_dir, "cache", None)
    data = open_dataset(dataset)
    settings_config = config or CurationConfig()
    opened: list[OpenedCorpus] = []
    try:
        for leg in legs:
            options = {"embedder": embedder} if leg == "dense" and embedder else {}
            opened.append(open_corpus(corpus, leg, **options))
        try:
            model = resolve_model(judge)
        except (ValueError, ModelError) as exc:
            raise FieldError("judge", str(exc)) from None
        cached = CachedModel(model, cache_dir, "auto", settings={"spec": judge})
        try:
            retriever = Retriever(opened, window_days=window_days or None)
            result = curate_dataset(
                data, retriever, Judge(cached, max_tokens=max_tokens), settings_config
            )
            settings = {
                "source_dataset": data.id,
                "judge": judge,
                "retrieval": legs,
                "window_days": window_days or None,
                "corpus": opened[0].identity().model_dump(mode="json"),
                "config": settings_config.model_dump(mode="json"),
            }
            written = None
            if result.dataset.events:  # an empty dataset is never written as if it were a result
                save_curation(result, target, metadata=_metadata(dataset), settings=settings)
                written = target
        finally:
            close = getattr(model, "close", None)
            if callable(close):  # a local model's server
                close()
    finally:
        for backend in opened:
            backend.close()
    return Curated(result, written, cache_dir)
