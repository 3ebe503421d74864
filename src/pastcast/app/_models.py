"""Models as the user asks about them: a model's knowledge cutoff measured from what it recalls
of a dated corpus (``pastcast models probe-cutoff``), kept in the knowledge-cutoff registry with
its provenance."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pastcast.app._corpus import corpus_documents
from pastcast.app._fields import as_field
from pastcast.app._open import open_corpus
from pastcast.errors import FieldError
from pastcast.owned import cache_root
from pastcast.safejson import canonical_json

if TYPE_CHECKING:
    from pastcast.audit import CutoffProbe
    from pastcast.models import CachedModel, MeasuredCutoff

__all__ = ["ProbedCutoff", "probe_model_cutoff"]

_MONTH = re.compile(r"^\d{4}-(0[1-9]|1[0-2])$")


@dataclass(frozen=True)
class ProbedCutoff:
    """The probe, the cutoff it measured (None: no recall detected, nothing registered) and
    where the questions, judgements and measurement were kept."""

    probe: CutoffProbe
    measured: MeasuredCutoff | None
    questions: Path
    cache: Path
    registry: Path | None

    def as_dict(self) -> dict[str, Any]:
        """The probe as JSON, with its questions file and the registry it was kept in."""
        return {
            **self.probe.model_dump(mode="json"),
            "questions_file": str(self.questions),
            "registered": None if self.registry is None else str(self.registry),
        }


@contextmanager
def cached_model(spec: str, cache: Path, field: str = "judge") -> Iterator[CachedModel]:
    """The model ``spec`` (``FieldError`` naming ``field``) answering from the cache folder
    ``cache`` what it answered before, so a rerun makes no new calls; a local model's server
    is stopped when the block ends."""
    from pastcast.models import CachedModel, ModelError, resolve_model

    with as_field(field, ValueError, ModelError):
        model = resolve_model(spec)
    try:
        yield CachedModel(model, cache, "auto", settings={"spec": spec})
    finally:
        close = getattr(model, "close", None)
        if callable(close):  # a local model's server
            close()


def _month(value: str | None, field: str) -> str | None:
    if value is not None and not _MONTH.match(value):
        raise FieldError(field, f"expected a month YYYY-MM, got {value!r}")
    return value


def probe_model_cutoff(
    model: str,
    corpus: str | Path,
    *,
    per_month: int = 20,
    since: str | None = None,
    until: str | None = None,
    seed: int = 0,
    cache: str | Path | None = None,
    draws: int = 1000,
    level: float = 0.95,
    register: bool = True,
    registry: str | Path | None = None,
    max_tokens: int = 32,
    progress: bool = False,
) -> ProbedCutoff:
    """Probe ``model`` (a model spec) with up to ``per_month`` questions per month of the
    corpus ``corpus`` (an index directory; months ``since`` .. ``until``), made once and cached
    under ``cache`` (default: ``cutoff-probe`` in pastcast's cache folder) with every answer;
    with ``register``, keep the measured cutoff in ``registry`` (default: the measured-cutoffs
    file ``plan`` and ``score`` read)."""
    from pastcast.audit import (
        PROBE_METHOD,
        PROBE_VERSION,
        probe_cutoff,
        probe_questions,
        read_probe_questions,
        write_probe_questions,
    )
    from pastcast.curate import Judge
    from pastcast.models import MeasuredCutoff, check_model_spec, save_measured_cutoff

    with as_field("model"):
        check_model_spec(model)
    first, last = _month(since, "since"), _month(until, "until")
    if first and last and first > last:
        raise FieldError("until", f"{last} is before {first}")
    opened = open_corpus(corpus)
    try:
        identity = opened.identity()
    finally:
        opened.close()
    root = Path(cache) if cache is not None else cache_root() / "cutoff-probe"
    settings = {
        "version": PROBE_VERSION,
        "corpus": identity.content_sha256,
        "per_month": per_month,
        "seed": seed,
        "since": first,
        "until": last,
    }
    digest = hashlib.sha256(canonical_json(settings).encode()).hexdigest()[:16]
    questions_file = root / "questions" / f"{digest}.json"
    corpus_name = f"{corpus} (sha256 {identity.content_sha256[:12]})"
    try:
        questions = read_probe_questions(questions_file)
    except ValueError:
        questions = None
    made = questions is None
    if questions is None:
        questions = probe_questions(
            corpus_documents(str(corpus)),
            corpus=corpus_name,
            per_month=per_month,
            seed=seed,
            since=first,
            until=last,
        )
    if len({q.month for q in questions.questions}) < 2:
        raise FieldError("corpus", f"{corpus}: fewer than two months with questions to compare")
    with cached_model(model, root / "judgements", "model") as cached:
        if made:  # kept once nothing refuses the probe
            write_probe_questions(questions, questions_file)
        probe = probe_cutoff(
            questions,
            Judge(cached, max_tokens=max_tokens),
            draws=draws,
            seed=seed,
            level=level,
            progress=progress,
        )
    measured = None
    saved = None
    if probe.knowledge_cutoff is not None and probe.low and probe.high:
        measured = MeasuredCutoff(
            model=model,
            knowledge_cutoff=probe.knowledge_cutoff,
            low=probe.low,
            high=probe.high,
            level=level,
            method=f"cutoff probe v{PROBE_VERSION}: {PROBE_METHOD}",
            corpus=corpus_name,
            measured_on=datetime.now(UTC).date(),
            questions=probe.questions,
            version=PROBE_VERSION,
        )
        if register:
            with as_field("registry", OSError, ValueError):
                saved = save_measured_cutoff(measured, registry)
    return ProbedCutoff(probe, measured, questions_file, root, saved)
