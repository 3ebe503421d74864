"""Leakage audits as the user asks for them: of how datasets were built (named as every command
names them), of what agents saw in a run (its log read once, its dataset and corpus opened
from their specs), and of what a model remembers: its knowledge cutoff measured from what it
recalls of a dated corpus (``pastcast models probe-cutoff``), kept in the knowledge-cutoff
registry with its provenance. The judge models they use are cached (``cached_model``)."""

from __future__ import annotations

import errno
import hashlib
import re
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pastcast.app._corpus import corpus_documents
from pastcast.app._fields import as_field
from pastcast.app._open import open_corpus, open_dataset
from pastcast.app._plans import ConstructionAuditPlan, RunAuditPlan
from pastcast.app._reading import RunsRead, check_dataset, read_runs
from pastcast.dataset import Dataset
from pastcast.errors import FieldError
from pastcast.owned import cache_root
from pastcast.safejson import canonical_json

if TYPE_CHECKING:
    from pastcast.audit import (
        ConstructionAudit,
        CutoffProbe,
        LeakageCard,
        RetrievalAudit,
        RunAudit,
        TextAudit,
    )
    from pastcast.models import CachedModel, MeasuredCutoff
    from pastcast.records import Document
    from pastcast.world import World


def _schedule_options(specs: Sequence[str | Path]) -> dict[str, Any]:
    """The import options a dataset directory was built with (they apply to every schedule)."""
    from pastcast.dataset import read_metadata

    for spec in specs:
        path = Path(spec)
        if path.is_dir():
            try:
                config = read_metadata(path).get("schedule_config") or {}
            except ValueError:
                continue
            if "start_at_first_belief" in config:
                return {"start_at_first_belief": bool(config["start_at_first_belief"])}
    return {}


def audit_datasets(plan: ConstructionAuditPlan) -> ConstructionAudit:
    """The construction audit ``plan`` declares: its datasets' own steps and those of each of
    its schedules rebuilt on the same events, each judged against its permutation null."""
    from pastcast.audit import audit_construction

    datasets = plan.datasets
    if not datasets:
        raise FieldError("datasets", "no dataset given")
    loaded = [open_dataset(spec, field=f"datasets[{i}]") for i, spec in enumerate(datasets)]
    with as_field("schedules"):  # an unknown schedule, or options it cannot take
        return audit_construction(
            loaded,
            [] if plan.dataset_only else plan.schedules,
            schedule_options=_schedule_options(datasets),
            **plan.model_dump(include={"folds", "draws", "seed", "permutations", "alpha"}),
        )


def audit_dataset_texts(dataset: str | Path | Dataset) -> TextAudit:
    """The question-text audit of ``dataset`` (a spec ``open_dataset`` reads): dated edits left
    out of the steps, steps shown an undated edit taken after their cutoff, and steps naming the
    answer of another event still open at their cutoff."""
    from pastcast.audit import audit_texts

    return audit_texts(open_dataset(dataset))


def _run_and_data(
    read: RunsRead, dataset: str | Path | None
) -> tuple[World | None, Dataset | None]:
    """The embedded world that ``dataset`` or else the run log names (its documents too), and
    the dataset the run used: ``dataset`` (checked against the log), else that world's; None
    where neither names one."""
    from pastcast.world import is_world_spec, world_from_spec, world_named_by

    world = world_named_by(read.logs[0].header.dataset_id)
    data: Dataset | None = None
    if dataset is not None and is_world_spec(str(dataset)):
        with as_field("dataset"):
            world = world_from_spec(str(dataset))
        data = world.dataset
    elif dataset is not None:
        data = open_dataset(dataset)
    elif world is not None:
        data = world.dataset
    if data is not None and dataset is not None:
        check_dataset(read.logs, data, dataset)
    return world, data


@dataclass(frozen=True)
class RunAuditRead:
    """A run's audit and the log as read (each step once)."""

    audit: RunAudit
    read: RunsRead
    """The log read through its step columns; the audit streams each record by offset."""


def audit_run_log(plan: RunAuditPlan) -> RunAuditRead:
    """The audit of the run log ``plan`` names: its dataset for post-cutoff prices and the
    question's wording, its corpus for document dates, the content screen and verbatim
    post-cutoff text. Every finding is counted; ``examples`` of each check are kept, so memory
    is bounded however many there are."""
    from pastcast.audit import EXAMPLES, audit_run

    keep = EXAMPLES if plan.examples is None else plan.examples
    corpus = plan.corpus
    read = read_runs([plan.run_log], columns=(), require_steps=False)
    world, data = _run_and_data(read, plan.dataset)
    log = read.logs[0]
    documents: Iterable[Document] | None = (
        corpus_documents(corpus) if corpus else (world.documents if world else None)
    )
    try:
        audit = audit_run(log, documents=documents, dataset=data, examples=keep)
    except (OSError, ValueError) as exc:  # a corpus that fails while it is read
        raise FieldError("corpus", f"{corpus!r}: {exc}") from None
    return RunAuditRead(audit, read)


def _served_leakage(run_log: Path) -> tuple[float | None, str]:
    """The corrected served-document leakage rate of the retrieval audit kept beside the log
    (``pastcast audit retrievals``), with its interval and judge as a note; none if never
    audited, or if the judge was no better than chance (then the note says so)."""
    from pastcast.audit import read_retrieval_audit

    try:
        audit = read_retrieval_audit(run_log)
    except ValueError as exc:
        return None, f"retrieval audit unreadable: {exc}"
    if audit is None:
        return None, ""
    rate = audit.overall
    if rate.corrected is None:
        return None, f"judge {audit.judge} no better than chance: no corrected rate"
    return rate.corrected, (
        f"{rate.corrected_low:.1%}-{rate.corrected_high:.1%}, {rate.judged} documents judged "
        f"by {audit.judge}, corrected for its measured errors"
    )


def run_leakage_cards(read: RunsRead) -> tuple[LeakageCard, ...]:
    """The leakage card of each run read: its dataset (the one given, or the embedded world the
    log names; a log of another dataset without it has no card), the corpus of its header and
    the knowledge cutoffs it recorded for its models."""
    from pastcast.audit import leakage_card
    from pastcast.models import knowledge_cutoff
    from pastcast.world import world_named_by

    cards = []
    for log in read.logs:
        data = read.dataset
        if data is None:
            world = world_named_by(log.header.dataset_id)
            data = world.dataset if world is not None else None
        if data is None:
            continue
        models: dict[str, Any] = {}
        for spec in log.header.agents:
            model = spec.args.get("model")
            if isinstance(model, str):
                models[model] = log.header.knowledge_cutoffs.get(model) or knowledge_cutoff(model)
        served, note = _served_leakage(log.path)
        cards.append(
            leakage_card(
                data,
                corpus=log.header.corpus,
                models=models,
                run_id=log.header.run_id,
                served_leakage=served,
                served_leakage_note=note,
            )
        )
    return tuple(cards)


DEFAULT_CALIBRATION = "world:0,hindsight_fraction=0.5"
"""The world whose planted hindsight rewrites (known positives) and evidence articles (known
negatives) measure the retrieval judge."""


@dataclass(frozen=True)
class RetrievalAuditRead:
    """A run's retrieval audit, where it was written, the judgement cache and the log as read."""

    audit: RetrievalAudit
    written: Path
    cache: Path
    read: RunsRead
    """The log read through its step columns; the audit streams each record by offset."""

    def as_dict(self) -> dict[str, Any]:
        """The audit as JSON, with where it was written."""
        return {**self.audit.model_dump(mode="json"), "written": str(self.written)}


def audit_run_retrievals(
    run_log: str | Path,
    judge: str,
    *,
    dataset: str | Path | None = None,
    corpus: str | None = None,
    sample: int = 200,
    seed: int = 0,
    calibration: str = DEFAULT_CALIBRATION,
    positives: int = 20,
    negatives: int = 20,
    cache: str | Path | None = None,
    draws: int = 4000,
    max_tokens: int = 160,
    prompt: str | None = None,
    progress: bool = False,
) -> RetrievalAuditRead:
    """The served-document leakage of ``run_log`` as `pastcast audit retrievals` measures it
    (docs/audits.md; the options are its parameters): judged by ``judge`` (a model spec), the
    rate corrected for the judge's errors measured on the world ``calibration``, written beside
    the log; judgements cached in ``cache``, so a rerun makes no new calls."""
    from pastcast.audit import (
        RETRIEVAL_PROMPT,
        RETRIEVAL_PROMPTS,
        audit_served,
        calibration_items,
        served_documents,
        write_retrieval_audit,
    )
    from pastcast.curate import Judge
    from pastcast.models import check_model_spec
    from pastcast.world import is_world_spec, world_from_spec

    with as_field("judge"):  # before anything is read
        check_model_spec(judge)
    prompt = RETRIEVAL_PROMPT if prompt is None else prompt
    if prompt not in RETRIEVAL_PROMPTS:
        raise FieldError("prompt", f"{prompt!r}: known: {', '.join(RETRIEVAL_PROMPTS)}")
    if not is_world_spec(calibration):
        raise FieldError("calibration", f"{calibration!r}: not an embedded world spec")
    with as_field("calibration"):
        known = world_from_spec(calibration)
    if not known.hindsight_ids:
        raise FieldError(
            "calibration", f"{calibration!r} plants no hindsight rewrite (set hindsight_fraction)"
        )
    if corpus is not None and not corpus.strip():
        raise FieldError("corpus", "empty: give an index directory or a database URL")
    log_path = Path(run_log)
    cache_dir = (
        Path(cache)
        if cache is not None
        else log_path.with_name(log_path.name.removesuffix(".jsonl") + ".retrieval-judge-cache")
    )
    if cache is not None:
        try:  # a file, a device, a name too long or a folder under a file: refused before work
            cache_dir.mkdir(parents=True, exist_ok=True)
            if not cache_dir.is_dir():
                raise NotADirectoryError(errno.ENOTDIR, "not a folder", str(cache_dir))
        except OSError as exc:
            raise FieldError("cache", f"{cache_dir}: {exc.strerror or exc}") from None
    read = read_runs([run_log], columns=(), require_steps=False)
    world, data = _run_and_data(read, dataset)
    log = read.logs[0]
    if data is None:
        raise FieldError("dataset", "the log names no embedded world: give the dataset it ran on")
    if corpus is None and world is None:
        raise FieldError("corpus", "the log names no embedded world: give the corpus it searched")
    if corpus:
        documents: Iterable[Document] = corpus_documents(corpus)
    else:
        assert world is not None  # checked above
        documents = world.documents
    items = calibration_items(
        known.dataset,
        known.documents,
        known.hindsight_ids,
        known.evidence,
        positives=positives,
        negatives=negatives,
        seed=seed,
    )
    with cached_model(judge, cache_dir) as cached:
        try:
            served, docs, unknown = served_documents(log, documents)
            audit = audit_served(
                served,
                docs,
                data,
                Judge(cached, max_tokens=max_tokens),
                items,
                run_log=str(log.path),
                unknown_documents=len(unknown),
                calibration_name=calibration,
                sample=sample,
                seed=seed,
                draws=draws,
                prompt=prompt,
                progress=progress,
            )
        except (OSError, ValueError) as exc:  # a corpus that fails while it is read
            raise FieldError("corpus", f"{corpus!r}: {exc}") from None
    written = write_retrieval_audit(audit, log_path)
    return RetrievalAuditRead(audit, written, cache_dir, read)


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
