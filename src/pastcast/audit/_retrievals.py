"""How often the documents a run served reveal the future: a judge model's verdicts on a
stratified sample of them (source x closeness to the cutoff, ``BUCKETS``), corrected for the
judge's errors measured on documents of known status (Rogan-Gladen); docs/audits.md, "pastcast
audit retrievals", states the method.

The judge is sent the question as the step showed it, the cutoff and the document, never the
outcome: no function here reads a ``Resolution`` of the run's dataset.
"""

from __future__ import annotations

import random
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Literal

from pastcast import safejson
from pastcast.agents import load_prompt
from pastcast.atomic import write_atomic
from pastcast.audit._grounded import NOT_STATED, extraction_schema, grounded_decision
from pastcast.curate import Judge, Judgement, question_text
from pastcast.cutoff import is_visible
from pastcast.dataset import Dataset
from pastcast.progress import ProgressReporter
from pastcast.records import Document, Event, Record, UtcDatetime
from pastcast.runlog import StepColumns
from pastcast.safejson import canonical_json
from pastcast.scoring import clopper_pearson, corrected_rate, wilson

RETRIEVAL_AUDIT_VERSION = "1"
"""How the sample is drawn and the rates estimated; recorded in every result."""
RETRIEVAL_PROMPT = "audit_retrieval.v3"
Decision = Literal["verdict", "grounded"]
RETRIEVAL_PROMPTS: dict[str, Decision] = {
    "audit_retrieval.v1": "verdict",
    "audit_retrieval.v2": "verdict",
    "audit_retrieval.v3": "grounded",
}
"""The judge prompts and how each reply is decided (docs/audits.md, step 3)."""
TEXT_CHARS = 1500
"""Characters of a document's text the judge is shown (a served snippet is shorter)."""
EXCERPT_CHARS = 240

Bucket = Literal["last_day", "last_week", "last_month", "older", "after_cutoff"]
BUCKETS: tuple[Bucket, ...] = ("last_day", "last_week", "last_month", "older", "after_cutoff")
"""How long before the cutoff a document is dated: within a day, a week, 30 days, earlier; or
not before it at all (which ``audit run`` reports as a finding on its own)."""


def closeness(timestamp: datetime, cutoff: datetime) -> Bucket:
    """The bucket of a document dated ``timestamp`` served at ``cutoff``."""
    if not is_visible(timestamp, cutoff):
        return "after_cutoff"
    age = cutoff - timestamp
    if age <= timedelta(days=1):
        return "last_day"
    if age <= timedelta(days=7):
        return "last_week"
    if age <= timedelta(days=30):
        return "last_month"
    return "older"


class ServedDocument(Record):
    """One document served at one step's cutoff of one event."""

    event_id: str
    cutoff: UtcDatetime
    doc_id: str
    source: str
    timestamp: UtcDatetime
    bucket: Bucket
    servings: int = 1
    """Steps (agents, rollouts) that were shown it at this cutoff."""

    @property
    def stratum(self) -> tuple[str, Bucket]:
        return self.source, self.bucket


def served_documents(
    log: StepColumns, documents: Iterable[Document]
) -> tuple[tuple[ServedDocument, ...], dict[str, Document], tuple[str, ...]]:
    """Every (event, cutoff, document) a run served, the served documents by id (the corpus is
    read once, streamed) and the served ids the corpus does not hold."""
    counts: dict[tuple[str, datetime, str], int] = defaultdict(int)
    for rec in log.stream():
        for doc_id in {d for call in rec.episode.tool_calls for d in call.doc_ids}:
            counts[(rec.event_id, rec.cutoff, doc_id)] += 1
    wanted = {doc_id for _, _, doc_id in counts}
    docs = {d.id: d for d in documents if d.id in wanted}
    out: list[ServedDocument] = []
    for (event_id, cutoff, doc_id), n in sorted(counts.items()):
        doc = docs.get(doc_id)
        if doc is None:
            continue
        out.append(
            ServedDocument(
                event_id=event_id,
                cutoff=cutoff,
                doc_id=doc_id,
                source=doc.source or "unknown",
                timestamp=doc.timestamp,
                bucket=closeness(doc.timestamp, cutoff),
                servings=n,
            )
        )
    return tuple(out), docs, tuple(sorted(wanted - docs.keys()))


def _allocate(sizes: Mapping[tuple[str, Bucket], int], n: int) -> dict[tuple[str, Bucket], int]:
    """Documents to draw per stratum (docs/audits.md, step 2), never more than it holds."""
    keys = sorted(sizes, key=lambda k: (-sizes[k], k))
    alloc = {k: 0 for k in keys}
    for k in keys[:n]:
        alloc[k] = 1
    left = min(n, sum(sizes.values())) - sum(alloc.values())
    while left > 0:
        room = {k: sizes[k] - alloc[k] for k in keys if sizes[k] > alloc[k]}
        total = sum(sizes[k] for k in room)
        shares = {k: left * sizes[k] / total for k in room}
        whole = {k: min(room[k], int(shares[k])) for k in room}
        if not any(whole.values()):  # fewer left than strata with room: largest remainders
            for k in sorted(room, key=lambda k: (-(shares[k] - int(shares[k])), k))[:left]:
                whole[k] = 1
        for k, m in whole.items():
            alloc[k] += m
            left -= m
    return alloc


def stratified_sample(
    served: Sequence[ServedDocument], n: int, seed: int = 0
) -> tuple[ServedDocument, ...]:
    """``n`` served documents (all of them when fewer), stratified (docs/audits.md, step 2)."""
    by_stratum: dict[tuple[str, Bucket], list[ServedDocument]] = defaultdict(list)
    for s in served:
        by_stratum[s.stratum].append(s)
    alloc = _allocate({k: len(v) for k, v in by_stratum.items()}, max(0, n))
    out: list[ServedDocument] = []
    for key in sorted(by_stratum):
        items = sorted(by_stratum[key], key=lambda s: (s.event_id, s.cutoff, s.doc_id))
        rng = random.Random(f"retrieval-sample:{seed}:{key[0]}:{key[1]}")
        out += rng.sample(items, alloc[key])
    return tuple(sorted(out, key=lambda s: (s.source, BUCKETS.index(s.bucket), s.doc_id)))


def retrieval_schema() -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"reveals_later": {"type": "boolean"}, "reason": {"type": "string"}},
        "required": ["reveals_later", "reason"],
        "additionalProperties": False,
    }


def _verdict(data: dict[str, Any]) -> tuple[bool, str]:
    value = data.get("reveals_later")
    if not isinstance(value, bool):
        raise ValueError("reveals_later: expected true or false")
    return value, " ".join(str(data.get("reason", "")).split())


def _when(instant: datetime) -> str:
    """A cutoff as the agents' prompts write it: the day, with the time when not midnight."""
    if (instant.hour, instant.minute, instant.second) == (0, 0, 0):
        return instant.date().isoformat()
    return f"{instant:%Y-%m-%d %H:%M} UTC"


def _judge_one(
    judge: Judge, event: Event, cutoff: datetime, doc: Document, prompt: str = RETRIEVAL_PROMPT
) -> tuple[tuple[bool, str] | None, Judgement]:
    """The judge's verdict on ``doc`` served at ``cutoff`` for ``event``: built from the event
    (the question as shown at the step), the cutoff and the document only."""
    shown = doc.text[:TEXT_CHARS]
    fields = {
        "question": question_text(event, cutoff),
        "cutoff_date": _when(cutoff),
        "document_date": f"{doc.timestamp:%Y-%m-%d %H:%M} UTC",
        "document_source": doc.source or "unknown",
        "document_title": doc.title,
        "document_text": shown,
        "outcomes": ", ".join(f'"{label}"' for label in (*event.labels, NOT_STATED)),
    }
    if RETRIEVAL_PROMPTS[prompt] == "grounded":
        labels = event.labels

        def decide(data: dict[str, Any]) -> tuple[bool, str]:
            return grounded_decision(data, f"{doc.title}\n{shown}", cutoff, labels)

        return judge.ask("retrieval", event.id, prompt, fields, extraction_schema(labels), decide)
    value, judgement = judge.ask(
        "retrieval", event.id, prompt, fields, retrieval_schema(), _verdict
    )
    if value is None:  # a reply cut short after its verdict still gives the verdict
        m = _CUT_SHORT.match(judgement.output)
        if m is not None:
            value = (m.group(1) == "true", "(the reply was cut short after its verdict)")
    return value, judgement


_CUT_SHORT = re.compile(r'\s*\{\s*"reveals_later"\s*:\s*(true|false)\b')


@dataclass(frozen=True)
class CalibrationItem:
    """A document of known status shown as a served one: at ``cutoff`` for ``event``."""

    event: Event
    cutoff: datetime
    document: Document
    leaks: bool


def _step_after(dataset: Dataset, event_id: str, at: datetime, before: datetime) -> datetime:
    """The first forecast step of ``event_id`` at which a document dated ``at`` is visible and
    the event is unresolved; else the midpoint of ``at`` and ``before``."""
    for step in sorted(
        (s for s in dataset.steps if s.event_id == event_id), key=lambda s: s.cutoff
    ):
        if is_visible(at, step.cutoff) and step.cutoff < before:
            return step.cutoff
    return at + (before - at) / 2


def calibration_items(
    dataset: Dataset,
    documents: Sequence[Document],
    planted: Iterable[str],
    evidence: Mapping[str, Sequence[str]],
    *,
    positives: int = 20,
    negatives: int = 20,
    seed: int = 0,
) -> tuple[CalibrationItem, ...]:
    """Known positives (the ``planted`` hindsight rewrites) and negatives (``evidence``
    articles) of a world built with ``hindsight_fraction`` (docs/audits.md, step 4)."""
    by_id = {d.id: d for d in documents}
    rng = random.Random(f"retrieval-calibration:{seed}")
    pos: list[CalibrationItem] = []
    for doc_id in sorted(planted):
        doc = by_id[doc_id]
        for event in dataset.events:  # a rewrite quotes its question's title
            if f'"{event.title}"' in doc.text:
                resolved = dataset.resolutions[event.id].resolved_at
                cutoff = _step_after(dataset, event.id, doc.timestamp, resolved)
                pos.append(CalibrationItem(event, cutoff, doc, True))
                break
    neg: list[CalibrationItem] = []
    for event in dataset.events:
        resolved = dataset.resolutions[event.id].resolved_at
        ids = sorted(evidence.get(event.id, ()))
        for doc_id in rng.sample(ids, min(2, len(ids))):
            doc = by_id[doc_id]
            cutoff = _step_after(dataset, event.id, doc.timestamp, resolved)
            if is_visible(doc.timestamp, cutoff):
                neg.append(CalibrationItem(event, cutoff, doc, False))
    return (*rng.sample(pos, min(positives, len(pos))), *rng.sample(neg, min(negatives, len(neg))))


class JudgeAccuracy(Record):
    """The judge measured on documents of known status."""

    calibration: str
    """Where the known documents came from (a world spec)."""
    positives: int
    true_positives: int
    negatives: int
    true_negatives: int
    errors: int = 0
    """Calibration documents without a usable verdict (left out of both counts)."""
    sensitivity: float | None
    specificity: float | None
    sensitivity_wilson: tuple[float, float]
    sensitivity_exact: tuple[float, float]
    """Clopper-Pearson."""
    specificity_wilson: tuple[float, float]
    specificity_exact: tuple[float, float]
    informative: bool
    """Whether Se + Sp > 1: otherwise the judge is no better than chance, and no corrected
    rate is given."""


class LeakRate(Record):
    """A leakage rate: apparent (the judge's verdicts, stratum-weighted) and corrected."""

    served: int
    judged: int
    flagged: int
    apparent: float | None
    apparent_low: float
    apparent_high: float
    corrected: float | None
    """Rogan-Gladen, clipped to [0, 1]; None when the judge is no better than chance."""
    corrected_low: float
    corrected_high: float
    uninformative_draws: float
    """Share of the interval's draws in which the judge was no better than chance."""


class StratumRate(Record):
    source: str
    bucket: Bucket
    served: int
    sampled: int
    judged: int
    flagged: int
    weight: float
    """The stratum's share of what was served."""


class SourceRate(Record):
    source: str
    rate: LeakRate


class FlaggedDocument(Record):
    """A served document the judge says reveals the future: for a human to look at."""

    doc_id: str
    event_id: str
    source: str
    date: UtcDatetime
    cutoff: UtcDatetime
    bucket: Bucket
    excerpt: str
    reason: str


class RetrievalAudit(Record):
    """The served-document leakage of one run (``RUN.retrieval-audit.json`` beside its log)."""

    version: str = RETRIEVAL_AUDIT_VERSION
    run_log: str
    judge: str
    prompt: str
    prompt_sha256: str
    decision: Decision = "verdict"
    """How the judge's replies were decided (``RETRIEVAL_PROMPTS``)."""
    seed: int
    sample: int
    """Documents asked for."""
    level: float
    draws: int
    served: int
    unknown_documents: int
    """Served ids the corpus does not hold (not judged; ``audit run`` names them)."""
    judged: int
    errors: int
    """Sampled documents without a usable verdict."""
    strata: tuple[StratumRate, ...]
    by_source: tuple[SourceRate, ...]
    overall: LeakRate
    judge_accuracy: JudgeAccuracy
    flagged: tuple[FlaggedDocument, ...]
    calls: int
    """Judge requests made (calibration included) ..."""
    cached: int
    """... of which answered from the cache."""
    method: str = (
        "stratified sample by source x closeness to the cutoff; apparent rate weighted by the "
        "strata's served shares; Rogan-Gladen correction with Se and Sp measured on planted "
        "hindsight rewrites and evidence articles; interval by drawing each stratum's rate "
        "and Se and Sp from Jeffreys Beta distributions, draws with Se+Sp<=1 counted as 0 for "
        "the lower and 1 for the upper bound, the upper bound at least that of apparent/Se"
    )


def _accuracy(
    calibration: str, verdicts: Sequence[tuple[CalibrationItem, bool | None]], level: float
) -> JudgeAccuracy:
    pos = [v for item, v in verdicts if item.leaks and v is not None]
    neg = [v for item, v in verdicts if not item.leaks and v is not None]
    tp, tn = sum(pos), sum(not v for v in neg)
    se = tp / len(pos) if pos else None
    sp = tn / len(neg) if neg else None
    return JudgeAccuracy(
        calibration=calibration,
        positives=len(pos),
        true_positives=tp,
        negatives=len(neg),
        true_negatives=tn,
        errors=sum(v is None for _, v in verdicts),
        sensitivity=se,
        specificity=sp,
        sensitivity_wilson=wilson(tp, len(pos), level),
        sensitivity_exact=clopper_pearson(tp, len(pos), level),
        specificity_wilson=wilson(tn, len(neg), level),
        specificity_exact=clopper_pearson(tn, len(neg), level),
        informative=se is not None and sp is not None and se + sp > 1,
    )


def _rate(
    strata: Sequence[StratumRate], acc: JudgeAccuracy, draws: int, seed: int, level: float
) -> LeakRate:
    served = sum(s.served for s in strata)
    cells = [(s.served / served if served else 0.0, s.flagged, s.judged) for s in strata]
    r = corrected_rate(
        cells,
        acc.true_positives,
        acc.positives,
        acc.true_negatives,
        acc.negatives,
        draws=draws,
        seed=seed,
        level=level,
    )
    informative = acc.informative and r.estimate is not None
    return LeakRate(
        served=served,
        judged=sum(s.judged for s in strata),
        flagged=sum(s.flagged for s in strata),
        apparent=r.apparent,
        apparent_low=r.apparent_low,
        apparent_high=r.apparent_high,
        corrected=r.estimate if informative else None,
        corrected_low=r.low if informative else 0.0,
        corrected_high=r.high if informative else 1.0,
        uninformative_draws=r.uninformative_draws,
    )


@contextmanager
def progress_bar(
    enabled: bool, total: int, what: str, unit: str = "docs"
) -> Iterator[Callable[[], None]]:
    """The progress of ``total`` judgements of ``unit`` (``pastcast.progress``)."""
    with ProgressReporter(unit, enabled=enabled) as bar:
        task = bar.add_task(what, total=total)
        yield lambda: bar.advance(task)


def audit_served(
    served: Sequence[ServedDocument],
    docs: Mapping[str, Document],
    dataset: Dataset,
    judge: Judge,
    calibration: Sequence[CalibrationItem],
    *,
    run_log: str,
    calibration_name: str,
    unknown_documents: int = 0,
    sample: int = 200,
    seed: int = 0,
    draws: int = 4000,
    level: float = 0.95,
    prompt: str = RETRIEVAL_PROMPT,
    progress: bool = False,
) -> RetrievalAudit:
    """Judge a stratified sample of ``sample`` of the ``served`` documents (``docs``: them by id,
    both from ``served_documents``) and the ``calibration`` documents of known status, and
    estimate the served-document leakage rate per source and overall; ``prompt`` one of
    ``RETRIEVAL_PROMPTS``. ``dataset`` gives each step's question (its events only: never its
    resolutions)."""
    if prompt not in RETRIEVAL_PROMPTS:
        raise ValueError(
            f"prompt {prompt!r}: not a retrieval judge prompt; known: "
            f"{', '.join(RETRIEVAL_PROMPTS)}"
        )
    picked = stratified_sample(served, sample, seed)
    events = {e.id: e for e in dataset.events}
    verdicts: dict[ServedDocument, tuple[bool, str] | None] = {}
    known: list[tuple[CalibrationItem, bool | None]] = []
    with progress_bar(progress, len(picked) + len(calibration), "judging documents") as advance:
        for item in calibration:
            value, _ = _judge_one(judge, item.event, item.cutoff, item.document, prompt)
            known.append((item, None if value is None else value[0]))
            advance()
        for s in picked:
            if s.event_id not in events:  # a log of another dataset: nothing to show the judge
                verdicts[s] = None
            else:
                event = dataset.event_at(s.event_id, s.cutoff)  # the text the step showed
                verdicts[s], _ = _judge_one(judge, event, s.cutoff, docs[s.doc_id], prompt)
            advance()
    acc = _accuracy(calibration_name, known, level)
    sizes = Counter(s.stratum for s in served)
    strata: list[StratumRate] = []
    for key in sorted(sizes, key=lambda k: (k[0], BUCKETS.index(k[1]))):
        mine = [v for s, v in verdicts.items() if s.stratum == key]
        usable = [v for v in mine if v is not None]
        strata.append(
            StratumRate(
                source=key[0],
                bucket=key[1],
                served=sizes[key],
                sampled=len(mine),
                judged=len(usable),
                flagged=sum(v[0] for v in usable),
                weight=sizes[key] / len(served),
            )
        )
    sources = sorted({s.source for s in strata})
    flagged = [
        FlaggedDocument(
            doc_id=s.doc_id,
            event_id=s.event_id,
            source=s.source,
            date=s.timestamp,
            cutoff=s.cutoff,
            bucket=s.bucket,
            excerpt=" ".join(f"{docs[s.doc_id].title}: {docs[s.doc_id].text}".split())[
                :EXCERPT_CHARS
            ],
            reason=v[1],
        )
        for s, v in verdicts.items()
        if v is not None and v[0]
    ]
    used = load_prompt(prompt)
    mine_calls = [j for j in judge.judgements if j.kind == "retrieval"]
    return RetrievalAudit(
        run_log=run_log,
        judge=judge.name,
        prompt=used.id,
        prompt_sha256=used.sha256,
        decision=RETRIEVAL_PROMPTS[prompt],
        seed=seed,
        sample=sample,
        level=level,
        draws=draws,
        served=len(served),
        unknown_documents=unknown_documents,
        judged=sum(v is not None for v in verdicts.values()),
        errors=sum(v is None for v in verdicts.values()),
        strata=tuple(strata),
        by_source=tuple(
            SourceRate(
                source=src,
                rate=_rate([s for s in strata if s.source == src], acc, draws, seed, level),
            )
            for src in sources
        ),
        overall=_rate(strata, acc, draws, seed, level),
        judge_accuracy=acc,
        flagged=tuple(flagged),
        calls=len(mine_calls),
        cached=sum(j.cached for j in mine_calls),
    )


def retrieval_audit_path(run_log: str | Path) -> Path:
    """``RUN.retrieval-audit.json`` beside the log ``RUN.jsonl``."""
    p = Path(run_log)
    return p.with_name(f"{p.name.removesuffix('.jsonl')}.retrieval-audit.json")


def write_retrieval_audit(audit: RetrievalAudit, run_log: str | Path) -> Path:
    """Write ``audit`` beside ``run_log`` (atomically, replacing an earlier audit)."""
    target = retrieval_audit_path(run_log)
    write_atomic(target, canonical_json(audit.model_dump(mode="json")) + "\n")
    return target


def read_retrieval_audit(run_log: str | Path) -> RetrievalAudit | None:
    """The retrieval audit kept beside ``run_log``, or None when it was never audited;
    ``ValueError`` (one line) for a file that is not one."""
    path = retrieval_audit_path(run_log)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    try:
        return RetrievalAudit.model_validate(safejson.loads(raw))
    except ValueError as exc:
        raise ValueError(
            f"{path}: not a retrieval audit: {' '.join(str(exc).split())[:200]}"
        ) from None
