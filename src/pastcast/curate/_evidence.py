"""The evidence sufficiency and leakage judge (Forecast-Dojo, A.2).

At the judging date t* (the close minus two days, never after the event's last forecast date),
every query of the event's plan is run on every retrieval leg, the lists are fused by reciprocal
rank and the 15 best unique documents are shown to the judge, which answers Sufficient, Partial
or Insufficient and flags leakage. An event is kept iff the verdict is Sufficient and nothing
leaks. The judge is given the question view and the documents: never the outcome, the market's
prices or their trajectory.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, get_args

from pastcast.curate._judge import Judge, question_text, reply_schema
from pastcast.curate._records import EvidenceDoc, EvidenceVerdict, QueryPlan, Sufficiency
from pastcast.curate._retrieve import Retriever
from pastcast.records import Event

PROMPT = "curate_evidence"
KEEP_DOCS = 15


def judge_evidence(
    judge: Judge,
    retriever: Retriever,
    event: Event,
    plan: QueryPlan,
    judged_at: datetime,
    keep_docs: int = KEEP_DOCS,
) -> tuple[EvidenceVerdict | None, str]:
    """The verdict on the best documents for ``plan`` before ``judged_at`` (None when the
    judge's reply is unusable) and, then, why."""
    best = retriever.best(plan.queries, judged_at, keep_docs)
    shown = [(hit, score, retriever.read(hit, judged_at)) for hit, score in best]
    docs = tuple(
        EvidenceDoc(id=h.id, timestamp=h.timestamp, title=h.title, score=s) for h, s, _ in shown
    )
    if not shown:  # nothing to judge: no call, the archive holds nothing in the window
        return EvidenceVerdict(
            judged_at=judged_at,
            documents=(),
            verdict="Insufficient",
            leakage=False,
            rationale="no document in the retrieval window",
        ), ""
    blocks = "\n\n".join(
        f"[{i}] {doc.timestamp:%Y-%m-%d} | {doc.title}\n{retriever.excerpt(doc)}"
        for i, (_, _, doc) in enumerate(shown, start=1)
    )

    def parse(data: dict[str, Any]) -> EvidenceVerdict:
        numbers = data.get("leak_documents") or []
        if not isinstance(numbers, list) or not all(isinstance(n, int) for n in numbers):
            raise ValueError("leak_documents: expected a list of document numbers")
        leaked = tuple(docs[n - 1].id for n in numbers if 1 <= n <= len(docs))
        return EvidenceVerdict.model_validate(
            {
                "judged_at": judged_at,
                "documents": docs,
                "verdict": data.get("verdict"),
                "leakage": data.get("leakage"),
                "leak_documents": leaked,
                "rationale": str(data.get("rationale") or ""),
            }
        )

    fields = {"question": question_text(event, judged_at), "documents": blocks}
    schema = reply_schema(
        PROMPT,
        {
            "verdict": {"type": "string", "enum": list(get_args(Sufficiency))},
            "leakage": {"type": "boolean"},
            "leak_documents": {"type": "array", "items": {"type": "integer"}},
            "rationale": {"type": "string"},
        },
    )
    verdict, judgement = judge.ask("evidence", event.id, PROMPT, fields, schema, parse)
    return verdict, judgement.error or ""
