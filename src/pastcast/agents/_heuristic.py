"""A non-LLM research agent that really uses the tools: search, read, weigh dated evidence.

It scores sentences with a small generic English cue lexicon (positive: "likely", "on track",
"confirmed"...; negative: "unlikely", "stalled", "setback"...), weights them by recency, and maps
the evidence balance to probabilities. Each relevant search hit is one vote per outcome: a full
vote for the ``max_reads`` most recent hits it reads, ``SNIPPET`` for one known only from its
search snippet, so reading less is knowing less. It exists so the whole tool path runs without a
model, and as a transparent non-LLM baseline. Where the hits carry no cue about the question's
subject (real questions over a general news archive, mostly) it says 0.5: a plumbing check there.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from datetime import datetime
from typing import ClassVar

from pastcast.cutoff import cutoff_for_day, parse_timestamp
from pastcast.env import BudgetExceeded, Episode, SearchResult, ToolError
from pastcast.records import Assessment, Forecast, LedgerEntry, Notebook

SNIPPET = 0.5
"""The vote of a document known only from its search snippet (a document read votes 1)."""

_POSITIVE = (
    r"likely|expected to|on track|momentum|favou?red|favorite|leads?|leading|confirmed|poised|"
    r"support|boost|ahead|surges?|wins?|approved?|succeeds?|advances?"
)
_NEGATIVE = (
    r"unlikely|doubts?|stalled|setback|trails?|trailing|losing ground|delayed|struggles?|"
    r"opposition|blow|fails?|behind|collapses?|rejected|cancell?ed|weak|slump"
)
_POS = re.compile(rf"\b(?:{_POSITIVE})\b", re.IGNORECASE)
_NEG = re.compile(rf"\b(?:{_NEGATIVE})\b", re.IGNORECASE)
_WORD = re.compile(r"[a-z0-9]+")
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_STOP_TEXT = (
    "will the a an of in on by to be is for and or before after at with than more less this "
    "that which who what when does do any its it as from end year month"
)
_STOP = frozenset(_STOP_TEXT.split())


def _terms(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP and len(w) > 2}


def _cue(sentence: str) -> int:
    # "unlikely" must not also count as "likely": \b handles that, the negatives are separate.
    return len(_POS.findall(sentence)) - len(_NEG.findall(sentence))


@dataclass
class _Evidence:
    doc_id: str
    when: datetime
    scores: dict[str, float]
    title: str = ""


@dataclass
class HeuristicResearchAgent:
    """Non-LLM research agent: search, read, weigh dated cue sentences."""

    max_reads: int = 8
    top_k: int = 20
    half_life_days: float = 7.0
    strength: float = 0.5
    relevance: float = 0.5
    clip: ClassVar[float] = 0.03

    def __post_init__(self) -> None:
        # budgets bounded as EnvConfig's are: a negative one would slice from the end
        if self.max_reads < 0 or self.top_k < 1 or not self.half_life_days > 0:
            raise ValueError(
                f"heuristic: max_reads must be >= 0, top_k >= 1 and half_life_days > 0 (got "
                f"max_reads={self.max_reads}, top_k={self.top_k}, "
                f"half_life_days={self.half_life_days})"
            )

    def forecast(self, episode: Episode) -> Forecast:
        q = episode.question
        subject = _terms(q.title)
        carried = _load_notes(episode.notebook_in, q.labels)
        evidence: dict[str, _Evidence] = {e.doc_id: e for e in carried}
        queries = [q.title] + ([f"{q.title} {lb}" for lb in q.labels] if q.kind == "multi" else [])
        hits: dict[str, SearchResult] = {}
        try:
            for query in queries:
                found = episode.tools.search(query, top_k=self.top_k)
                if not found:
                    continue
                best = max(h.score for h in found)
                for h in found:
                    # Keep clearly relevant hits only; weak matches are mostly distractors.
                    if h.score >= self.relevance * best:
                        hits.setdefault(h.id, h)
            # Titles and snippets are weak evidence; full texts of the most recent hits count whole.
            for doc_id, h in hits.items():
                if doc_id not in evidence:
                    evidence[doc_id] = self._weigh(
                        doc_id, h.date, h.title, h.snippet, q.labels, q.kind, subject, SNIPPET
                    )
            recent = sorted(hits, key=lambda d: (hits[d].date, d), reverse=True)
            for doc_id in recent[: self.max_reads]:
                doc = episode.tools.read(doc_id)
                evidence[doc_id] = self._weigh(
                    doc.id, doc.date, doc.title, doc.text, q.labels, q.kind, subject
                )
        except (BudgetExceeded, ToolError):
            pass  # forecast from what was gathered
        probs = self._combine(list(evidence.values()), q.labels, q.kind, q.cutoff)
        episode.notebook_out = _dump_notes(list(evidence.values()), probs)
        rationale = f"{len(evidence)} documents weighed ({len(carried)} carried from notes)"
        return Forecast(probs=probs, raw_text=json.dumps(probs), rationale=rationale)

    def _weigh(
        self,
        doc_id: str,
        day: str,
        title: str,
        body: str,
        labels: tuple[str, ...],
        kind: str,
        subject: set[str],
        weight: float = 1.0,
    ) -> _Evidence:
        text = f"{title}. {body}"
        scores = dict.fromkeys(labels, 0.0)
        for sentence in _SENTENCE.split(text):
            cue = _cue(sentence)
            if cue == 0:
                continue
            if kind == "binary":
                if len(_terms(sentence) & subject) >= min(2, len(subject)):
                    scores["Yes"] += cue
            else:
                for lb in labels:
                    if lb.lower() in sentence.lower():
                        scores[lb] += cue
        # Evidence is dated by its UTC day, as in the notebook ledger that carries it.
        when = cutoff_for_day(parse_timestamp(day.replace(" ", "T")).date())
        # One vote per document and label: repeated cues in one article are one piece of news.
        votes = {lb: weight * ((v > 0) - (v < 0)) for lb, v in scores.items()}
        return _Evidence(doc_id, when, votes, title)

    def _combine(
        self, evidence: list[_Evidence], labels: tuple[str, ...], kind: str, cutoff: datetime
    ) -> dict[str, float]:
        totals = dict.fromkeys(labels, 0.0)
        for ev in evidence:
            age = max((cutoff - ev.when).total_seconds() / 86400.0, 0.0)
            w = 0.5 ** (age / self.half_life_days)
            for lb, s in ev.scores.items():
                if lb in totals:
                    totals[lb] += w * s
        if kind == "binary":
            p = 1.0 / (1.0 + math.exp(-self.strength * totals["Yes"]))
            p = min(max(p, self.clip), 1.0 - self.clip)
            return {"Yes": p, "No": 1.0 - p}
        m = max(totals.values())
        ex = {lb: math.exp(self.strength * (v - m)) for lb, v in totals.items()}
        z = sum(ex.values())
        return {lb: v / z for lb, v in ex.items()}


def _dump_notes(evidence: list[_Evidence], probs: dict[str, float]) -> Notebook:
    """The evidence as a belief notebook (the same format model-driven agents write)."""
    ledger = [
        LedgerEntry(
            id=e.doc_id,
            claim=e.title or e.doc_id,
            date_observed=e.when.date(),
            source=e.doc_id,
            supports=tuple(lb for lb, v in e.scores.items() if v > 0),
            rules_out=tuple(lb for lb, v in e.scores.items() if v < 0),
        )
        for e in sorted(evidence, key=lambda e: (e.when, e.doc_id))
    ]
    summary = f"{len(ledger)} dated documents weighed by cue direction and recency"
    return Notebook(
        assessment=Assessment(probabilities=probs, summary=summary),
        evidence_ledger=tuple(ledger),
    )


def _load_notes(nb: Notebook | None, labels: tuple[str, ...]) -> list[_Evidence]:
    if nb is None:
        return []  # the first step: the agent researches afresh
    out = []
    for entry in nb.evidence_ledger:
        if entry.status != "active":
            continue
        scores = dict.fromkeys(labels, 0.0)
        for lb in entry.supports:
            scores[lb] = 1.0
        for lb in entry.rules_out:
            scores[lb] = -1.0
        when = cutoff_for_day(entry.date_observed)
        out.append(_Evidence(entry.source or entry.id, when, scores, entry.claim))
    return out
