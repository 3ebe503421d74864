"""The two-stage retrieval agent (after Hindcast): research rounds, an evidence report, then a
forecasting stage that anchors a prior by question category and adjusts by evidence asymmetry.

Research stage: the model writes diverse seed queries; each query is searched and the
highest-ranked new hits are read in full (hit expansion); after each round the model reflects
on the evidence (a confidence between 0 and 1, what is missing, follow-up queries). The loop
stops when the confidence reaches ``stop_confidence``, when a round finds nothing new, when no
new query is proposed, when the tool budget is spent, or after ``rounds`` rounds. The model then
writes an evidence report (key facts, evidence for and against each outcome, uncertainty).
Forecasting stage: one call turns the report into probabilities.

Every model call asks for JSON under a schema except the report, so small local models work.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pastcast.agents._answer import Decoding, finish_answer, view_fields
from pastcast.agents._jsonish import find_blocks, load_object, strip_thinking
from pastcast.agents._prompts import load_prompt
from pastcast.env import BudgetExceeded, Episode, ToolError
from pastcast.models import Model
from pastcast.records import Forecast, Message

__all__ = ["TWO_STAGE_PROMPTS", "TwoStageAgent"]

QUERIES, REFLECT, REPORT, FORECAST = (
    "research_queries.v1",
    "research_reflect.v1",
    "research_report.v1",
    "forecast_stage.v2",
)
TWO_STAGE_PROMPTS = (QUERIES, REFLECT, REPORT, FORECAST)

_QUERIES_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"queries": {"type": "array", "items": {"type": "string"}}},
    "required": ["queries"],
}
_REFLECT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "confidence": {"type": "number"},
        "missing": {"type": "string"},
        "queries": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["confidence", "missing", "queries"],
}
_NO_ARCHIVE = "(No archive is available at this step: there is no evidence. Keep the prior.)"


@dataclass
class _Doc:
    id: str
    date: str
    title: str
    text: str
    read: bool = False


def _json_reply(text: str) -> dict[str, Any]:
    for block in reversed(find_blocks(strip_thinking(text))):
        obj, _ = load_object(block.text)
        if obj is not None:
            return obj
    return {}


def _strings(value: Any) -> list[str]:
    if not isinstance(value, list):
        return []
    return [v.strip() for v in value if isinstance(v, str) and v.strip()]


class TwoStageAgent:
    """Research stage (rounds with reflection and a confidence stop), then forecast stage."""

    def __init__(
        self,
        model: Model,
        *,
        rounds: int = 3,
        seed_queries: int = 6,
        followup_queries: int = 4,
        top_k: int = 10,
        expand: int = 5,
        stop_confidence: float = 0.7,
        max_evidence_chars: int = 12_000,
        doc_chars: int = 600,
        normalize_typography: bool = False,
        decoding: Decoding | None = None,
    ) -> None:
        if rounds < 1:
            raise ValueError("rounds must be at least 1")
        self.model = model
        self.rounds = rounds
        self.seed_queries = seed_queries
        self.followup_queries = followup_queries
        self.top_k = top_k
        self.expand = expand
        self.stop_confidence = stop_confidence
        self.max_evidence_chars = max_evidence_chars
        self.doc_chars = doc_chars
        self.normalize_typography = normalize_typography
        self.decoding = decoding or Decoding()

    def forecast(self, episode: Episode) -> Forecast:
        has_search = any(s.name == "search" for s in episode.tools.specs())
        report = self._research(episode) if has_search else _NO_ARCHIVE
        fields = view_fields(episode.question) | {"report": report}
        messages = list(load_prompt(FORECAST).render(fields).messages())
        reply = episode.chat(self.model, self.decoding.request(messages)).content
        messages.append(Message(role="assistant", content=reply))
        return finish_answer(
            episode,
            self.model,
            self.decoding,
            messages,
            reply,
            normalize_typography=self.normalize_typography,
        )

    def _ask(self, episode: Episode, prompt: str, fields: dict[str, str], **kw: Any) -> str:
        messages = load_prompt(prompt).render(fields).messages()
        return episode.chat(self.model, self.decoding.request(messages, **kw)).content

    def _research(self, episode: Episode) -> str:
        q = episode.question
        base = view_fields(q)
        reply = self._ask(
            episode,
            QUERIES,
            base | {"n_queries": str(self.seed_queries)},
            response_schema=_QUERIES_SCHEMA,
        )
        queries = _strings(_json_reply(reply).get("queries"))[: self.seed_queries]
        if not queries:  # an unusable reply still gets a research round
            queries = [q.title, *(f"{q.title} {lb}" for lb in q.labels if q.kind == "multi")]
        docs: dict[str, _Doc] = {}
        asked: set[str] = set()
        for round_no in range(1, self.rounds + 1):
            try:
                new = self._round(episode, queries, asked, docs)
            except BudgetExceeded:
                break
            if not new or round_no == self.rounds:
                break
            fields = base | {
                "evidence": self._digest(docs),
                "round": str(round_no),
                "rounds": str(self.rounds),
                "n_queries": str(self.followup_queries),
            }
            reflection = _json_reply(
                self._ask(episode, REFLECT, fields, response_schema=_REFLECT_SCHEMA)
            )
            confidence = reflection.get("confidence")
            if isinstance(confidence, int | float) and confidence >= self.stop_confidence:
                break
            queries = [x for x in _strings(reflection.get("queries")) if x.casefold() not in asked][
                : self.followup_queries
            ]
            if not queries:
                break
        if not docs:
            return "(The archive returned no documents for these queries.)"
        return self._ask(episode, REPORT, base | {"evidence": self._digest(docs)}).strip()

    def _round(
        self, episode: Episode, queries: list[str], asked: set[str], docs: dict[str, _Doc]
    ) -> int:
        """Search every new query, read the best new hits; the number of new documents."""
        fresh: list[tuple[float, str]] = []
        for query in queries:
            if query.casefold() in asked:
                continue
            asked.add(query.casefold())
            try:
                hits = episode.tools.search(query, top_k=self.top_k)
            except ToolError:
                continue
            for h in hits:
                if h.id not in docs:
                    docs[h.id] = _Doc(h.id, h.date, h.title, h.snippet)
                    fresh.append((h.score, h.id))
        for _, doc_id in sorted(fresh, key=lambda t: (-t[0], t[1]))[: self.expand]:
            try:
                full = episode.tools.read(doc_id)
            except ToolError:
                continue
            docs[doc_id].text, docs[doc_id].read = full.text, True
        return len(fresh)

    def _digest(self, docs: dict[str, _Doc]) -> str:
        """Read documents first, then snippets, newest first, within the character budget."""
        ordered = sorted(docs.values(), key=lambda d: d.date, reverse=True)
        ordered = sorted(ordered, key=lambda d: not d.read)
        lines: list[str] = []
        used = 0
        for d in ordered:
            line = f"[{d.id}] {d.date} - {d.title}: {d.text[: self.doc_chars]}"
            if used + len(line) > self.max_evidence_chars:
                break
            lines.append(line)
            used += len(line) + 1
        return "\n".join(lines)
