"""Curation: fair questions, answerable from the archive, with no hint of the answer.

Corpus quality filters for ``pastcast corpus build`` (language ID, the Gopher, C4 and FineWeb
rules); and for datasets, query decomposition, the evidence sufficiency and leakage judge, the
coverage probe and balancing, each judgement cached and recorded (``pastcast data curate``).
See docs/curation.md.
"""

from pastcast.curate._analysis import coverage_label_summary, coverage_labels, read_curation
from pastcast.curate._balance import (
    TAXONOMY,
    balance_outcomes,
    classify_topic,
    source_topic,
    too_few_dates,
)
from pastcast.curate._coverage import (
    CoverageProbe,
    contrastive_score,
    coverage_label,
    side_score,
)
from pastcast.curate._evidence import evidence_schema, judge_evidence
from pastcast.curate._judge import CURATION_VERSION, Judge, question_text
from pastcast.curate._pipeline import (
    CurationConfig,
    CurationResult,
    curate_dataset,
    judging_date,
    save_curation,
)
from pastcast.curate._quality import (
    QualityFilter,
    QualityReport,
    build_quality_filters,
    filter_quality,
    quality_filters,
    with_quality,
)
from pastcast.curate._queries import (
    MAX_QUERIES,
    MIN_QUERIES,
    decompose,
    queries_schema,
    targets_outcome,
)
from pastcast.curate._records import (
    BLOCK_VALUES,
    BlockLabel,
    CoverageLabel,
    CoverageResult,
    EventCuration,
    EvidenceDoc,
    EvidenceVerdict,
    Judgement,
    QueryPlan,
    SideCoverage,
    Sufficiency,
)
from pastcast.curate._retrieve import Retriever, fuse_rankings

__all__ = [
    "BLOCK_VALUES",
    "CURATION_VERSION",
    "MAX_QUERIES",
    "MIN_QUERIES",
    "TAXONOMY",
    "BlockLabel",
    "CoverageLabel",
    "CoverageProbe",
    "CoverageResult",
    "CurationConfig",
    "CurationResult",
    "EventCuration",
    "EvidenceDoc",
    "EvidenceVerdict",
    "Judge",
    "Judgement",
    "QualityFilter",
    "QualityReport",
    "QueryPlan",
    "Retriever",
    "SideCoverage",
    "Sufficiency",
    "balance_outcomes",
    "build_quality_filters",
    "classify_topic",
    "contrastive_score",
    "coverage_label",
    "coverage_label_summary",
    "coverage_labels",
    "curate_dataset",
    "decompose",
    "evidence_schema",
    "filter_quality",
    "fuse_rankings",
    "judge_evidence",
    "judging_date",
    "quality_filters",
    "queries_schema",
    "question_text",
    "read_curation",
    "save_curation",
    "side_score",
    "source_topic",
    "targets_outcome",
    "too_few_dates",
    "with_quality",
]
