"""The two-stage retrieval agent (after Hindcast, section 5.2 and appendix B): research rounds,
an evidence report and optional tally (``_tally``), then a forecasting stage; each stage with its
own request settings. The loop and its stop rules: docs/agents.md, "Two-stage research agent".
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import KW_ONLY, dataclass, field
from typing import Any, Literal

from pydantic import Field

from pastcast.agents._answer import (
    AnswerForm,
    Decoding,
    ParseFallback,
    ask_answer,
    form_schema,
    over,
    view_fields,
)
from pastcast.agents._answer_reader import read_answer
from pastcast.agents._prompts import load_prompt
from pastcast.agents._tally import read_tally, tally_schema, tally_sides, tally_text
from pastcast.corpus import DocType
from pastcast.env import TOOLS, BudgetExceeded, Episode, ToolError
from pastcast.models import ContextOverflow, Model
from pastcast.records import EvidenceTally, Forecast, Message, Record

QUERIES, REFLECT, REPORT, TALLY = (
    "research_queries.v1",
    "research_reflect.v1",
    "research_report.v1",
    "research_tally.v1",
)
FORECAST = {"probabilities": "forecast_stage.v2", "choice": "forecast_stage.v3"}

TwoStageStage = Literal[
    "queries", "reflect", "report", "tally", "forecast", "repair", "compact", "json_only"
]
"""The agent's model calls, each with its own request settings (Hindcast Table 4): query
generation, reflection, evidence report, evidence tally, final forecast and its retries."""

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
_NOTHING_FOUND = "(The archive returned no documents for these queries.)"
_AUTHOR_LIMIT: int = next(t for t in TOOLS if t.name == "author_posts").parameters["properties"][
    "limit"
]["maximum"]
_COMPACT_REPORT_CHARS = 1500


class TwoStageConfig(Record):
    """The research loop, the expansion of hits, and the forecast's answer object."""

    rounds: int = Field(default=3, ge=1, le=100)
    seed_queries: int = Field(default=6, ge=1, le=100)
    followup_queries: int = Field(default=4, ge=0, le=100)
    top_k: int = Field(default=10, ge=1, le=1000)
    expand: int = Field(default=5, ge=0, le=1000)
    """New hits expanded per round, highest-ranked first."""
    stop_confidence: float = Field(default=0.7, ge=0, le=1, allow_inf_nan=False)
    """A reflection at least this confident ends the research."""
    expand_threads: bool = False
    """Add each expanded hit's discussion thread (threaded corpora)."""
    thread_limit: int = Field(default=10, ge=1, le=1000)
    author_posts: int = Field(default=0, ge=0, le=_AUTHOR_LIMIT)
    """Recent posts (not comments) of each expanded hit's author (threaded corpora)."""
    author_comments: int = Field(default=0, ge=0, le=_AUTHOR_LIMIT)
    tally: bool = False
    doc_type: DocType | None = None
    """Search and read only this document type (Hindcast searches ``submission``s: every hit a
    whole post, read under the same filter; comments are still reached through the thread and
    author tools, which list them unfiltered)."""
    answer_form: AnswerForm = "probabilities"
    constrained: bool = False
    """Ask for the forecast under its answer schema too (small local models)."""
    fallback: ParseFallback = "repair"
    max_evidence_chars: int = Field(default=12_000, ge=1, le=10_000_000)
    doc_chars: int = Field(default=600, ge=1, le=10_000_000)
    normalize_typography: bool = False


def two_stage_prompts(config: TwoStageConfig) -> tuple[str, ...]:
    """The prompt files an agent with ``config`` sends."""
    research = (QUERIES, REFLECT, REPORT, *((TALLY,) if config.tally else ()))
    return (*research, FORECAST[config.answer_form])


@dataclass
class _Doc:
    id: str
    date: str
    title: str
    text: str
    read: bool = False
    context: str = ""
    """For a post found by expansion: where it came from ("in the thread of [id]", ...)."""


def _json_reply(text: str) -> dict[str, Any]:
    return next(read_answer(text).objects(), {})


def _strings(value: Any) -> list[str]:
    if not isinstance(value, list):
        return []
    return [v.strip() for v in value if isinstance(v, str) and v.strip()]


@dataclass
class TwoStageAgent:
    """Research stage (rounds with expansion, reflection and a confidence stop), report and
    tally, then forecast stage."""

    model: Model
    config: TwoStageConfig = field(default_factory=TwoStageConfig)
    _: KW_ONLY
    decoding: Decoding = field(default_factory=Decoding)
    stages: Mapping[str, Decoding] = field(default_factory=dict)

    def _settings(self, stage: str) -> Decoding:
        return over(self.decoding, self.stages.get(stage))

    def forecast(self, episode: Episode) -> Forecast:
        cfg = self.config
        has_search = any(s.name == "search" for s in episode.tools.specs())
        report, tally = self._research(episode) if has_search else (_NO_ARCHIVE, "")
        prompt = load_prompt(FORECAST[cfg.answer_form])
        base = view_fields(episode.question)

        def render(text: str) -> tuple[Message, Message]:
            return prompt.render(base | {"report": f"{text}\n\n{tally}".strip()}).messages()

        schema = form_schema(cfg.answer_form, episode.question.labels) if cfg.constrained else None
        return ask_answer(
            episode,
            self.model,
            self._settings("forecast"),
            render(report),
            schema=schema,
            compact=render(report[:_COMPACT_REPORT_CHARS]),  # it keeps the tally
            normalize_typography=cfg.normalize_typography,
            fallback=cfg.fallback,
            form=cfg.answer_form,
            stages=self.stages,
        )

    def _ask(
        self,
        episode: Episode,
        stage: str,
        prompt: str,
        fields: Callable[[int], dict[str, str]],
        **kw: Any,
    ) -> str:
        """One stage's call; ``fields(budget)`` renders the prompt with evidence of at most
        ``budget`` characters, halved while the prompt would overflow the model's context."""
        budget = self.config.max_evidence_chars
        while True:
            messages = load_prompt(prompt).render(fields(budget)).messages()
            request = self._settings(stage).request(messages, **kw)
            try:
                return episode.chat(self.model, request).content
            except ContextOverflow:
                if budget < 200:
                    raise
                budget //= 2

    def _research(self, episode: Episode) -> tuple[str, str]:
        """The evidence report and the tally ("" without one)."""
        cfg = self.config
        q = episode.question
        base = view_fields(q)
        reply = self._ask(
            episode,
            "queries",
            QUERIES,
            lambda _: base | {"n_queries": str(cfg.seed_queries)},
            response_schema=_QUERIES_SCHEMA,
        )
        queries = _strings(_json_reply(reply).get("queries"))[: cfg.seed_queries]
        if not queries:  # an unusable reply still gets a research round
            queries = [q.title, *(f"{q.title} {lb}" for lb in q.labels if q.kind == "multi")]
        docs: dict[str, _Doc] = {}
        asked: set[str] = set()
        authors: set[str] = set()
        for round_no in range(1, cfg.rounds + 1):
            try:
                new = self._round(episode, queries, asked, docs, authors)
            except BudgetExceeded:
                episode.stop_reason = "budget"
                break
            if not new:
                episode.stop_reason = "no_results"
                break
            if round_no == cfg.rounds:
                episode.stop_reason = "rounds"
                break

            def reflect_fields(budget: int, round_no: int = round_no) -> dict[str, str]:
                return base | {
                    "evidence": self._digest(docs, budget),
                    "round": str(round_no),
                    "rounds": str(cfg.rounds),
                    "n_queries": str(cfg.followup_queries),
                }

            reflection = _json_reply(
                self._ask(
                    episode, "reflect", REFLECT, reflect_fields, response_schema=_REFLECT_SCHEMA
                )
            )
            confidence = reflection.get("confidence")
            if isinstance(confidence, int | float) and confidence >= cfg.stop_confidence:
                episode.stop_reason = "confident"
                break
            queries = [x for x in _strings(reflection.get("queries")) if x.casefold() not in asked][
                : cfg.followup_queries
            ]
            if not queries:
                episode.stop_reason = "no_queries"
                break
        if not docs:
            if cfg.tally:  # nothing to label: the agent's own evidence is none
                episode.evidence_tally = EvidenceTally(quality="none")
            return _NOTHING_FOUND, ""
        report = self._ask(
            episode, "report", REPORT, lambda b: base | {"evidence": self._digest(docs, b)}
        ).strip()
        return report, self._tally(episode, docs) if cfg.tally else ""

    def _tally(self, episode: Episode, docs: dict[str, _Doc]) -> str:
        q = episode.question
        shown: list[str] = []

        def fields(budget: int) -> dict[str, str]:
            shown[:] = []
            return view_fields(q) | {
                "evidence": self._digest(docs, budget, shown),
                "tally_sides": tally_sides(q.labels),
            }

        reply = self._ask(episode, "tally", TALLY, fields, response_schema=tally_schema(q.labels))
        tally = read_tally(_json_reply(reply), q.labels, shown)
        episode.evidence_tally = tally  # the run log keeps it (Table 1's S/W/N)
        return tally_text(tally)

    def _round(
        self,
        episode: Episode,
        queries: list[str],
        asked: set[str],
        docs: dict[str, _Doc],
        authors: set[str],
    ) -> int:
        """Search every new query, expand the best new hits; the number of new documents."""
        fresh: list[tuple[float, str]] = []
        for query in queries:
            if query.casefold() in asked:
                continue
            asked.add(query.casefold())
            try:
                hits = episode.tools.search(
                    query, top_k=self.config.top_k, doc_type=self.config.doc_type
                )
            except ToolError:
                continue
            for h in hits:
                if h.id not in docs:
                    docs[h.id] = _Doc(h.id, h.date, h.title, h.snippet)
                    fresh.append((h.score, h.id))
        for _, doc_id in sorted(fresh, key=lambda t: (-t[0], t[1]))[: self.config.expand]:
            self._expand(episode, doc_id, docs, authors)
        return len(fresh)

    def _expand(
        self, episode: Episode, doc_id: str, docs: dict[str, _Doc], authors: set[str]
    ) -> None:
        """Read a hit in full; on a threaded corpus add its thread and its author's history."""
        cfg = self.config
        try:
            full = episode.tools.read(doc_id, doc_type=cfg.doc_type)  # the search's filter
        except ToolError:
            return
        docs[doc_id].text, docs[doc_id].read = full.text, True
        history = cfg.author_posts + cfg.author_comments
        threaded = any(t.name == "thread" for t in episode.tools.tools())
        if not threaded or not (cfg.expand_threads or history):
            return
        try:  # the thread listing also names the hit's author
            listing = episode.tools.thread(doc_id, limit=cfg.thread_limit)
        except ToolError:
            return
        author = next((p.author for p in listing if p.id == doc_id), None)
        if cfg.expand_threads:
            for p in listing:
                if p.id not in docs:
                    docs[p.id] = _Doc(
                        p.id, p.date, p.title, p.text, context=f"thread of [{doc_id}]"
                    )
        if not history or not author or author in authors:
            return
        authors.add(author)
        try:
            recent = episode.tools.author_posts(author, limit=_AUTHOR_LIMIT)
        except ToolError:
            return
        posts = [p for p in recent if p.parent_id is None][: cfg.author_posts]
        comments = [p for p in recent if p.parent_id is not None][: cfg.author_comments]
        for p in (*posts, *comments):
            if p.id not in docs:
                kind = "post" if p.parent_id is None else "comment"
                docs[p.id] = _Doc(p.id, p.date, p.title, p.text, context=f"{kind} by {author}")

    def _digest(self, docs: dict[str, _Doc], budget: int, shown: list[str] | None = None) -> str:
        """Read documents first, then posts found by expansion, then snippets, newest first,
        within ``budget`` characters; ``shown`` collects the ids written."""
        ordered = sorted(docs.values(), key=lambda d: d.date, reverse=True)
        ordered = sorted(ordered, key=lambda d: 0 if d.read else 1 if d.context else 2)
        lines: list[str] = []
        used = 0
        for d in ordered:
            where = f" ({d.context})" if d.context else ""
            line = f"[{d.id}] {d.date}{where} - {d.title}: {d.text[: self.config.doc_chars]}"
            if used + len(line) > budget:
                break
            lines.append(line)
            used += len(line) + 1
            if shown is not None:
                shown.append(d.id)
        return "\n".join(lines)
