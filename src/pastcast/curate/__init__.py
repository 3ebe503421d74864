"""Curation: fair questions, answerable from the archive, with no hint of the answer.

Corpus quality filters for ``pastcast corpus build`` (language ID, the Gopher, C4 and FineWeb
rules); and for datasets, query decomposition, the evidence sufficiency and leakage judge, the
coverage probe and balancing, each judgement cached and recorded (``pastcast data curate``).
See docs/curation.md.
"""

from pastcast.curate._analysis import coverage_label_summary, coverage_labels, read_curation
from pastcast.curate._judge import Judge, question_text
from pastcast.curate._pipeline import (
    CurationConfig,
    CurationResult,
    curate_dataset,
    judging_date,
    save_curation,
)
from pastcast.curate._quality import (
    QualityFilter,
    build_quality_filters,
    quality_filters,
    with_quality,
)
from pastcast.curate._records import EventCuration, Judgement
from pastcast.curate._retrieve import Retriever
from pastcast.markets import too_few_dates

__all__ = [
    "CurationConfig",
    "CurationResult",
    "EventCuration",
    "Judge",
    "Judgement",
    "QualityFilter",
    "Retriever",
    "build_quality_filters",
    "coverage_label_summary",
    "coverage_labels",
    "curate_dataset",
    "judging_date",
    "quality_filters",
    "question_text",
    "read_curation",
    "save_curation",
    "too_few_dates",
    "with_quality",
]
