"""The coverage probe (Hindcast, 4.1): does the archive hold evidence for what actually happened?

Per side (outcome), judged queries and labelled blocks of documents give a side score; the
realised side's score minus the best other side's gives the contrastive score and its label,
by the arithmetic rule or, with ``final="judge"``, a last judge call reading both tallies
(docs/curation.md, step 4, states both). The judge labels each side without knowing which one
came true: the outcome enters only after the calls.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, get_args

from pastcast.curate._judge import Judge, question_text, reply_schema
from pastcast.curate._records import (
    BLOCK_VALUES,
    BlockLabel,
    CoverageLabel,
    CoverageResult,
    SideCoverage,
)
from pastcast.curate._retrieve import Retriever
from pastcast.records import Event

CoverageFinal = Literal["arithmetic", "judge"]
"""How the probe turns the sides' labels into a score and label: the arithmetic rule, or a
final judge step reading both tallies (Hindcast 4.1)."""

QUERIES_PROMPT = "curate_coverage_queries"
LABELS_PROMPT = "curate_coverage_labels"
FINAL_PROMPT = "curate_coverage_final"
COVERAGE_ORDER: tuple[CoverageLabel, ...] = ("none", "weak", "strong")


def side_score(labels: Sequence[BlockLabel]) -> float:
    """``(sum of label values + n) / 3n``: 0 when every block is contra, 1 when all are strong."""
    if not labels:
        return 0.0
    n = len(labels)
    return (sum(BLOCK_VALUES[label] for label in labels) + n) / (3 * n)


def contrastive_score(scores: Mapping[str, float], realised: str) -> float:
    """The realised side's score minus the best other side's (in [-1, 1])."""
    others = [s for side, s in scores.items() if side != realised]
    return scores[realised] - (max(others) if others else 0.0)


def coverage_label(score: float, strong_at: float = 0.2) -> CoverageLabel:
    if score >= strong_at:
        return "strong"
    return "weak" if score > 0 else "none"


@dataclass
class CoverageProbe:
    """Probes every side of an event with ``n_queries`` queries and blocks of ``block_docs``."""

    judge: Judge
    retriever: Retriever
    n_queries: int = 5
    block_docs: int = 3
    strong_at: float = 0.2
    final: CoverageFinal = "arithmetic"

    def side_queries(
        self, event: Event, judged_at: datetime
    ) -> tuple[dict[str, tuple[str, ...]] | None, str]:
        n = self.n_queries

        def parse(data: dict[str, Any]) -> dict[str, tuple[str, ...]]:
            out: dict[str, tuple[str, ...]] = {}
            for side in event.labels:
                raw = data.get(side)
                if not isinstance(raw, list) or not all(isinstance(q, str) for q in raw):
                    raise ValueError(f"{side}: expected a list of queries")
                queries = tuple(" ".join(q.split()) for q in raw if q.strip())
                if len(queries) != n:
                    raise ValueError(f"{side}: expected {n} queries, got {len(queries)}")
                out[side] = queries
            return out

        template = "{" + ", ".join(f'"{side}": ["<query>", ...]' for side in event.labels) + "}"
        fields = {
            "question": question_text(event, judged_at),
            "n_queries": str(n),
            "sides": "\n".join(f"- {side}" for side in event.labels),
            "sides_template": template,
        }
        group = {
            "type": "array",
            "items": {"type": "string", "minLength": 1},  # no maxLength: see queries_schema
            "minItems": n,
            "maxItems": n,
        }
        schema = reply_schema(QUERIES_PROMPT, dict.fromkeys(event.labels, group))
        value, judgement = self.judge.ask(
            "coverage_queries", event.id, QUERIES_PROMPT, fields, schema, parse
        )
        return value, judgement.error or ""

    def probe_side(
        self, event: Event, side: str, queries: Sequence[str], judged_at: datetime
    ) -> tuple[SideCoverage | None, str]:
        blocks: list[tuple[str, ...]] = []
        texts: list[str] = []
        for i, query in enumerate(queries, start=1):
            best = self.retriever.best([query], judged_at, self.block_docs)
            docs = [self.retriever.read(hit, judged_at) for hit, _ in best]
            blocks.append(tuple(d.id for d in docs))
            body = "\n".join(
                f"- {d.timestamp:%Y-%m-%d} | {d.title}: {self.retriever.excerpt(d)}" for d in docs
            )
            texts.append(f"Block {i} (query: {query})\n{body or '(no documents)'}")

        def parse(data: dict[str, Any]) -> tuple[BlockLabel, ...]:
            raw = data.get("labels")
            allowed = get_args(BlockLabel)
            if not isinstance(raw, list) or len(raw) != len(queries):
                raise ValueError(f"labels: expected {len(queries)} labels")
            if any(label not in allowed for label in raw):
                raise ValueError(f"labels: each must be one of {', '.join(allowed)}")
            # A block with no documents bears on nothing, whatever the reply says.
            return tuple(
                "irrelevant" if not block else label
                for label, block in zip(raw, blocks, strict=True)
            )

        fields = {
            "question": question_text(event, judged_at),
            "side": side,
            "blocks": "\n\n".join(texts),
            "n_blocks": str(len(queries)),
        }
        n = len(queries)
        item = {"type": "string", "enum": list(get_args(BlockLabel))}
        labels_of = {"type": "array", "items": item, "minItems": n, "maxItems": n}
        schema = reply_schema(LABELS_PROMPT, {"labels": labels_of})
        labels, judgement = self.judge.ask(
            "coverage_labels", event.id, LABELS_PROMPT, fields, schema, parse
        )
        if labels is None:
            return None, judgement.error or ""
        return SideCoverage(
            side=side,
            queries=tuple(queries),
            blocks=tuple(blocks),
            labels=labels,
            score=side_score(labels),
        ), ""

    def probe(
        self, event: Event, realised: str, judged_at: datetime
    ) -> tuple[CoverageResult | None, str]:
        """The event's coverage (None when a reply is unusable) and, then, why. ``realised`` is
        the outcome that came true: used for the contrastive score only, never sent."""
        queries, error = self.side_queries(event, judged_at)
        if queries is None:
            return None, error
        sides = []
        for side in event.labels:
            side_cov, error = self.probe_side(event, side, queries[side], judged_at)
            if side_cov is None:
                return None, error
            sides.append(side_cov)
        scores = {s.side: s.score for s in sides}
        judged: dict[str, Any] = {}
        if self.final == "judge":
            final, error = self.final_judgement(event, sides, judged_at)
            if final is None:
                return None, error
            scores, quality = final
            support = tuple((side, scores[side]) for side in event.labels)
            judged = {"final": "judge", "support": support, "quality": quality}
        score = min(1.0, max(-1.0, contrastive_score(scores, realised)))
        label = coverage_label(score, self.strong_at)
        if judged:  # the judge's quality, where the realised side leads
            label = quality if score > 0 else "none"
        return CoverageResult(
            probed_at=judged_at, sides=tuple(sides), score=score, label=label, **judged
        ), ""

    def final_judgement(
        self, event: Event, sides: Sequence[SideCoverage], judged_at: datetime
    ) -> tuple[tuple[dict[str, float], CoverageLabel] | None, str]:
        """The final step: both sides' labelled blocks and tallies read together, blind to the
        outcome; each side's support in [0, 1] and the overall evidence quality."""
        lines = []
        for cov in sides:
            counts = {label: cov.labels.count(label) for label in get_args(BlockLabel)}
            tally = 2 * counts["strong"] + counts["weak"] - counts["contra"]
            lines.append(
                f"Outcome {cov.side}: "
                + ", ".join(f"{n} {label}" for label, n in counts.items())
                + f"; tally {tally}"
            )
            for query, block, label in zip(cov.queries, cov.blocks, cov.labels, strict=True):
                lines.append(f"- query {query!r}: {len(block)} documents, {label}")
        template = (
            '{"support": {'
            + ", ".join(f'"{side}": <0-1>' for side in event.labels)
            + '}, "evidence_quality": "strong" | "weak" | "none"}'
        )
        fields = {
            "question": question_text(event, judged_at),
            "tallies": "\n".join(lines),
            "support_template": template,
        }
        number = {"type": "number", "minimum": 0, "maximum": 1}
        support = {
            "type": "object",
            "properties": dict.fromkeys(event.labels, number),
            "required": list(event.labels),
        }
        quality = {"type": "string", "enum": list(COVERAGE_ORDER)}
        schema = reply_schema(FINAL_PROMPT, {"support": support, "evidence_quality": quality})

        def parse(data: dict[str, Any]) -> tuple[dict[str, float], CoverageLabel]:
            raw = data.get("support")
            if not isinstance(raw, dict):
                raise ValueError("support: expected an object of outcomes")
            support: dict[str, float] = {}
            for side in event.labels:
                v = raw.get(side)
                if isinstance(v, bool) or not isinstance(v, int | float) or not 0 <= v <= 1:
                    raise ValueError(f"support.{side}: expected a number in [0, 1]")
                support[side] = float(v)
            quality = data.get("evidence_quality")
            if quality not in COVERAGE_ORDER:
                raise ValueError(f"evidence_quality: one of {', '.join(COVERAGE_ORDER)}")
            return support, quality

        value, judgement = self.judge.ask(
            "coverage_final", event.id, FINAL_PROMPT, fields, schema, parse
        )
        return value, judgement.error or ""
