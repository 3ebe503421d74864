"""The records curation writes: every judgement as sent and received, and what each stage
decided about each event."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, JsonValue

from pastcast.records import Message, Record, Usage, UtcDatetime

Sufficiency = Literal["Sufficient", "Partial", "Insufficient"]
"""The evidence judge's verdict on the documents retrieved at the judging date."""

BlockLabel = Literal["strong", "weak", "irrelevant", "contra"]
"""How a block retrieved for one side of a question bears on that side."""

BLOCK_VALUES: dict[str, int] = {"strong": 2, "weak": 1, "irrelevant": 0, "contra": -1}

CoverageLabel = Literal["strong", "weak", "none"]
"""How well the archive covers the realised outcome (the coverage probe's label)."""


class Judgement(Record):
    """One model call of curation, kept so a curated benchmark can be audited and re-derived."""

    kind: str
    """Which judgement: queries, evidence, coverage_queries, coverage_labels, topic."""
    event_id: str
    prompt: str
    """The versioned prompt, ``name.vN``."""
    prompt_sha256: str
    version: str
    """The curation code's version of how outputs are read and scored."""
    model: str
    messages: tuple[Message, ...]
    """The request exactly as sent."""
    response_schema: str
    """The JSON schema the reply had to satisfy, as JSON text."""
    output: str = ""
    """The model's reply as received ("" when the call failed)."""
    parsed: dict[str, JsonValue] | None = None
    error: str | None = None
    """Why the judgement could not be used (a failed call, invalid JSON, a reply off the
    schema): the event is removed at that stage with this reason."""
    cached: bool = False
    """Served by the judgement cache rather than a new model call."""
    usage: Usage = Usage()


class QueryPlan(Record):
    """The decomposition of an event into search queries (none may target the outcome)."""

    predictive: tuple[str, ...]
    background: tuple[str, ...]
    dropped: tuple[str, ...] = ()
    """Queries the model wrote that ask for the outcome itself: never searched."""

    @property
    def queries(self) -> tuple[str, ...]:
        return (*self.predictive, *self.background)


class EvidenceDoc(Record):
    """A document shown to the evidence judge, with its fused rank score."""

    id: str
    timestamp: UtcDatetime
    title: str
    score: float


class EvidenceVerdict(Record):
    """The evidence judge's reading of the best documents before the judging date."""

    judged_at: UtcDatetime
    documents: tuple[EvidenceDoc, ...]
    verdict: Sufficiency
    leakage: bool
    leak_documents: tuple[str, ...] = ()
    rationale: str = ""

    @property
    def keep(self) -> bool:
        return self.verdict == "Sufficient" and not self.leakage


class SideCoverage(Record):
    """The probe of one outcome: its queries, the documents each found and their labels."""

    side: str
    queries: tuple[str, ...]
    blocks: tuple[tuple[str, ...], ...]
    """Document ids retrieved for each query."""
    labels: tuple[BlockLabel, ...]
    score: float = Field(ge=0.0, le=1.0)
    """(sum of label values + n) / 3n: 0 when every block is contra, 1 when every one is strong."""


class CoverageResult(Record):
    """The coverage probe of an event: per-side scores, the contrastive score and its label."""

    probed_at: UtcDatetime
    sides: tuple[SideCoverage, ...]
    score: float = Field(ge=-1.0, le=1.0)
    """The realised side's score minus the best other side's."""
    label: CoverageLabel
    final: Literal["arithmetic", "judge"] = "arithmetic"
    """How score and label were reached: the arithmetic rule, or the final judge step."""
    support: tuple[tuple[str, float], ...] = ()
    """The final judge's support of each side in [0, 1], in label order (judge step only)."""
    quality: CoverageLabel | None = None
    """The final judge's overall evidence quality (judge step only)."""


class EventCuration(Record):
    """What curation found for one event, and the stage that removed it (if any)."""

    event_id: str
    kept: bool
    stage: str | None = None
    reason: str | None = None
    topic: str | None = None
    queries: QueryPlan | None = None
    evidence: EvidenceVerdict | None = None
    coverage: CoverageResult | None = None
