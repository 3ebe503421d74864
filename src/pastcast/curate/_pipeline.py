"""Curating a dataset: forecast dates, query decomposition, the evidence judge, the coverage
probe and balancing, in that order (cheap stages first, so the judge is only asked about events
that can still be kept), with a funnel of what each stage removed and why. The result is a new
dataset named ``<name>-curated:<hash>``; ``save_curation`` writes it with the curation files
(docs/curation.md).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from pastcast.curate._balance import balance_outcomes, classify_topic, source_topic
from pastcast.curate._coverage import COVERAGE_ORDER, CoverageFinal, CoverageProbe
from pastcast.curate._evidence import KEEP_DOCS, judge_evidence
from pastcast.curate._judge import CURATION_VERSION, Judge
from pastcast.curate._queries import decompose
from pastcast.curate._records import CoverageLabel, EventCuration, Judgement
from pastcast.curate._retrieve import Retriever
from pastcast.dataset import Dataset, save_dataset, with_content_id
from pastcast.markets import FunnelStage, too_few_dates
from pastcast.records import Event, Record

TopicSource = Literal["source", "judge", "auto"]


class CurationConfig(Record):
    """Every setting that changes which events a curation keeps (recorded with the dataset)."""

    judge_days_before_close: int = Field(default=2, ge=0)
    keep_docs: int = Field(default=KEEP_DOCS, ge=1)
    coverage: bool = True
    coverage_queries: int = Field(default=5, ge=1)
    block_docs: int = Field(default=3, ge=1)
    keep_coverage: CoverageLabel = "strong"
    """The weakest coverage label kept."""
    strong_at: float = Field(default=0.2, gt=0.0, le=1.0)
    balance: bool = True
    topics: TopicSource = "auto"
    """Where topics come from: the source's category or tag, the judge, or the source where it
    has one and the judge otherwise."""
    seed: int = 0
    min_dates: int = Field(default=3, ge=0)
    coverage_final: CoverageFinal = "arithmetic"
    """The coverage probe's score and label: the arithmetic rule over the sides' labels, or a
    final judge step reading both tallies (``judge``: Hindcast 4.1)."""
    coverage_at: Literal["judging_date", "close"] = "judging_date"
    """When the coverage probe queries the archive: at the judging date t* (the evidence
    judge's), or at the market's close date as Hindcast does (never after the event's last
    forecast date, so never after its resolution)."""


@dataclass(frozen=True)
class CurationResult:
    dataset: Dataset
    funnel: tuple[FunnelStage, ...]
    events: tuple[EventCuration, ...]
    judgements: tuple[Judgement, ...]


def judging_date(event: Event, last_step: datetime | None, days_before_close: int = 2) -> datetime:
    """t*: the close minus ``days_before_close`` days, never after the event's last forecast date
    (steps precede the resolution, so an early-resolved event is judged before it resolved)."""
    t = event.close_time - timedelta(days=days_before_close)
    return min(t, last_step) if last_step is not None else t


class _Funnel:
    def __init__(self, events: Iterable[Event]) -> None:
        self.alive: dict[str, Event] = {e.id: e for e in events}
        self.stages = [FunnelStage("input", 0, len(self.alive), "events with forecast dates")]
        self.notes: dict[str, dict[str, Any]] = {e: {"event_id": e} for e in self.alive}

    def stage(self, name: str, removed: Mapping[str, str]) -> None:
        for eid, reason in removed.items():
            self.alive.pop(eid, None)
            self.notes[eid].update(kept=False, stage=name, reason=reason)
        counts = Counter(removed.values())
        note = "; ".join(f"{r}: {n}" for r, n in sorted(counts.items(), key=lambda kv: -kv[1]))
        self.stages.append(FunnelStage(name, len(removed), len(self.alive), note))


def _judge_stage(
    funnel: _Funnel,
    name: str,
    ask: Callable[[Event], tuple[Any, str]],
    store: str,
    verdict: Callable[[Any], str | None],
) -> None:
    """Ask about every live event; ``verdict`` gives a removal reason for a usable answer."""
    removed: dict[str, str] = {}
    for eid, event in list(funnel.alive.items()):
        value, error = ask(event)
        if value is None:
            removed[eid] = f"judge error: {error}"
            continue
        funnel.notes[eid][store] = value
        reason = verdict(value)
        if reason is not None:
            removed[eid] = reason
    funnel.stage(name, removed)


def curate_dataset(
    dataset: Dataset,
    retriever: Retriever,
    judge: Judge,
    config: CurationConfig | None = None,
) -> CurationResult:
    """Run every stage over ``dataset``'s events that have forecast dates."""
    cfg = config or CurationConfig()
    steps: dict[str, list[datetime]] = {}
    for s in dataset.steps:
        steps.setdefault(s.event_id, []).append(s.cutoff)
    events = [e for e in dataset.events if e.id in steps]
    funnel = _Funnel(events)
    when = {e.id: judging_date(e, max(steps[e.id]), cfg.judge_days_before_close) for e in events}

    funnel.stage(
        "forecast dates",
        too_few_dates(events, {k: len(v) for k, v in steps.items()}, dataset.splits, cfg.min_dates),
    )
    _judge_stage(
        funnel,
        "query decomposition",
        lambda e: decompose(judge, _shown(dataset, e, when[e.id]), when[e.id]),
        "queries",
        lambda plan: None,
    )
    _judge_stage(
        funnel,
        "evidence judge",
        lambda e: judge_evidence(
            judge,
            retriever,
            _shown(dataset, e, when[e.id]),
            funnel.notes[e.id]["queries"],
            when[e.id],
            cfg.keep_docs,
        ),
        "evidence",
        lambda v: None if v.keep else ("leakage" if v.leakage else v.verdict),
    )
    if cfg.coverage:
        probe = CoverageProbe(
            judge,
            retriever,
            cfg.coverage_queries,
            cfg.block_docs,
            cfg.strong_at,
            final=cfg.coverage_final,
        )
        probed = when
        if cfg.coverage_at == "close":
            probed = {e.id: judging_date(e, max(steps[e.id]), 0) for e in events}
        floor = COVERAGE_ORDER.index(cfg.keep_coverage)
        _judge_stage(
            funnel,
            "coverage probe",
            lambda e: _probe(probe, e, dataset, probed[e.id]),
            "coverage",
            lambda c: None if COVERAGE_ORDER.index(c.label) >= floor else f"coverage {c.label}",
        )
    if cfg.balance:
        # the topic needs no later context: each question as it read when its market opened
        at_open = [_shown(dataset, e, e.open_time) for e in funnel.alive.values()]
        topics = _topics(at_open, judge, cfg.topics)
        for eid, topic in topics.items():
            funnel.notes[eid]["topic"] = topic
        outcomes = {eid: dataset.resolutions[eid].label for eid in funnel.alive}
        removed = balance_outcomes(
            list(funnel.alive.values()), outcomes, topics, dataset.splits, cfg.seed
        )
        funnel.stage("outcome and topic balance", removed)

    kept = set(funnel.alive)
    records = []
    for e in events:
        note = funnel.notes[e.id]
        note.setdefault("kept", e.id in kept)
        records.append(EventCuration.model_validate(note))
    curated = Dataset(
        dataset.id,
        tuple(e for e in dataset.events if e.id in kept),
        {k: v for k, v in dataset.resolutions.items() if k in kept},
        {k: v for k, v in dataset.beliefs.items() if k in kept},
        tuple(s for s in dataset.steps if s.event_id in kept),
        {k: v for k, v in dataset.splits.items() if k in kept},
    )
    name = dataset.id.partition(":")[0].removesuffix("-curated") + "-curated"
    return CurationResult(
        with_content_id(curated, name),
        tuple(funnel.stages),
        tuple(records),
        tuple(judge.judgements),
    )


def _shown(dataset: Dataset, event: Event, at: datetime) -> Event:
    """The question as a step at ``at`` is shown it (``Dataset.screen_at``): a judge is a model
    too, and a text taken later must not tell it what happened after ``at``."""
    return dataset.screen_at(event.id, at)[0]


def _probe(probe: CoverageProbe, event: Event, dataset: Dataset, when: datetime) -> tuple[Any, str]:
    res = dataset.resolutions.get(event.id)
    if res is None:  # nothing to score the sides against
        return None, "no resolution to score coverage against"
    return probe.probe(_shown(dataset, event, when), res.label, when)


def _topics(events: list[Event], judge: Judge, source: TopicSource) -> dict[str, str]:
    out = {}
    for e in events:
        topic = source_topic(e) if source != "judge" else None
        if topic is None and source != "source":
            topic, _ = classify_topic(judge, e)  # an unusable reply leaves the topic "other"
        out[e.id] = topic or "other"
    return out


def _write_jsonl(path: Path, records: Iterable[Record]) -> None:
    with path.open("w", encoding="utf-8") as fh:
        for rec in records:
            fh.write(rec.model_dump_json() + "\n")


def save_curation(
    result: CurationResult,
    out: str | Path,
    *,
    metadata: Mapping[str, Any] | None = None,
    settings: Mapping[str, Any] | None = None,
) -> Path:
    """Write the curated dataset to ``out`` with the funnel (after the source's own, if
    ``metadata`` carries one) and the curation files beside its tables."""
    meta = dict(metadata or {})
    funnel = [
        {"stage": f.stage, "removed": f.removed, "remaining": f.remaining, "note": f.note}
        for f in result.funnel
    ]
    meta["funnel"] = [*meta.get("funnel", []), *[{**f, "curation": True} for f in funnel]]
    meta["curation"] = {
        "version": CURATION_VERSION,
        "kept": len(result.dataset.events),
        "judgements": len(result.judgements),
        "prompts": sorted({j.prompt for j in result.judgements}),
        **dict(settings or {}),
    }
    target = save_dataset(result.dataset, out, metadata=meta)
    folder = target / "curation"
    folder.mkdir(exist_ok=True)
    _write_jsonl(folder / "events.jsonl", result.events)
    _write_jsonl(folder / "judgements.jsonl", result.judgements)
    (folder / "funnel.json").write_text(json.dumps(funnel, indent=2) + "\n", encoding="utf-8")
    return target
