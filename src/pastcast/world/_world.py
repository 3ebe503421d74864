"""The ``World``: a seeded, fully simulated benchmark dataset with its dated news corpus."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pastcast.atomic import atomic_path
from pastcast.corpus import content_digest
from pastcast.corpus.sources import ContentScreen
from pastcast.dataset import Dataset
from pastcast.records import Document
from pastcast.scoring import brier
from pastcast.world._config import WorldConfig


@dataclass(frozen=True)
class World:
    """A simulated world: the dataset, its news corpus and the ids of planted hindsight articles.

    ``evidence`` maps each event id to the ids of the articles carrying its signals (including
    re-publications), for analysis; agents never see it. ``canary_ids`` are documents dated after
    their event's resolution that state the outcome: they must never reach an agent.
    ``hindsight_ids`` (only with ``WorldConfig.hindsight_fraction``) are rewrites dated *before*
    the resolution that state it: the cutoff lets them through, the content screen must not.
    """

    seed: int
    config: WorldConfig
    dataset: Dataset
    documents: tuple[Document, ...]
    canary_ids: frozenset[str]
    evidence: Mapping[str, tuple[str, ...]]
    hindsight_ids: frozenset[str] = frozenset()

    @property
    def corpus_documents(self) -> tuple[Document, ...]:
        """What a corpus of this world holds: the documents the content screen passes, as
        ``pastcast corpus build world:...`` keeps them. The screen flags the planted hindsight
        rewrites and nothing else of the world, so this is ``documents`` unless
        ``hindsight_fraction`` planted some."""
        if not self.hindsight_ids:
            return self.documents
        return tuple(ContentScreen().screen(self.documents))

    def holds_its_documents(self, content_sha256: str) -> bool:
        """Whether a corpus with this content hash is this world's: its screened documents, or
        all of them (built with ``--include-flagged``, to show the planted rewrites leaking)."""
        return content_sha256 in {
            content_digest(self.corpus_documents),
            content_digest(self.documents),
        }

    def write_jsonl(self, path: str | Path) -> Path:
        """Write the corpus as generic JSONL documents (atomically); return the path."""
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(target) as tmp, tmp.open("w", encoding="utf-8") as fh:
            for d in self.documents:
                row = {
                    "id": d.id,
                    "timestamp": d.timestamp.isoformat().replace("+00:00", "Z"),
                    "title": d.title,
                    "text": d.text,
                    "url": d.url,
                    "source": d.source,
                }
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")
        return target

    def market_brier(self) -> tuple[float, float, int]:
        """Mean Brier of the market's latest visible belief at each step, of the uniform
        forecast at the same steps, and the number of steps (a step with no visible belief is
        scored as uniform)."""
        ds = self.dataset
        market = uniform = 0.0
        for step in ds.steps:
            event = ds.event(step.event_id)
            truth = ds.resolutions[event.id].label
            flat = {lab: 1 / len(event.labels) for lab in event.labels}
            belief = ds.market_at(event.id, step.cutoff)
            market += brier(belief.probs if belief else flat, truth)  # unpriced legs count as 0
            uniform += brier(flat, truth)
        n = len(ds.steps)
        return (market / n, uniform / n, n) if n else (float("nan"), float("nan"), 0)

    def summary(self) -> dict[str, Any]:
        """Counts by kind, category and resolved label; corpus make-up; market quality."""
        ds = self.dataset
        binary_labels = Counter(ds.resolutions[e.id].label for e in ds.events if e.kind == "binary")
        early = sum(ds.resolutions[e.id].resolved_at < e.close_time for e in ds.events)
        n_evidence = sum(len(v) for v in self.evidence.values())
        market, uniform, n_steps = self.market_brier()
        return {
            "dataset_id": ds.id,
            "seed": self.seed,
            "config_overrides": self.config.overrides(),
            "events": len(ds.events),
            "by_kind": dict(sorted(Counter(e.kind for e in ds.events).items())),
            "by_category": dict(sorted(Counter(e.category for e in ds.events).items())),
            "binary_labels": dict(sorted(binary_labels.items())),
            "multi_options": dict(
                sorted(Counter(len(e.labels) for e in ds.events if e.kind == "multi").items())
            ),
            "resolved_early": early,
            "steps": n_steps,
            "belief_days": sum(len(v) for v in ds.beliefs.values()),
            "documents": len(self.documents),
            "evidence_documents": n_evidence,
            "other_documents": len(self.documents)
            - n_evidence
            - len(self.canary_ids)
            - len(self.hindsight_ids),
            "canaries": len(self.canary_ids),
            "market_brier_at_steps": round(market, 4),
            "uniform_brier_at_steps": round(uniform, 4),
        }
