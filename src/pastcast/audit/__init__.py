"""Leakage audits: of how a benchmark was built (can the metadata an agent sees predict the
outcome?), of what agents saw in a run (documents, prompts, outputs) and of how often the
documents a run served reveal the future (a calibrated judge); see docs/audits.md."""

from pastcast.audit._card import LeakageCard, leakage_card
from pastcast.audit._construction import ConstructionAudit, audit_construction
from pastcast.audit._cutoff_probe import (
    PROBE_METHOD,
    PROBE_VERSION,
    CutoffProbe,
    ProbeQuestions,
    change_point,
    probe_cutoff,
    probe_questions,
    read_probe_questions,
    render_options,
    write_probe_questions,
)
from pastcast.audit._features import FEATURES
from pastcast.audit._retrievals import (
    RETRIEVAL_PROMPT,
    RETRIEVAL_PROMPTS,
    RetrievalAudit,
    audit_served,
    calibration_items,
    read_retrieval_audit,
    served_documents,
    stratified_sample,
    write_retrieval_audit,
)
from pastcast.audit._runaudit import EXAMPLES, RunAudit, audit_run
from pastcast.audit._texts import TextAudit, audit_texts

__all__ = [
    "EXAMPLES",
    "FEATURES",
    "PROBE_METHOD",
    "PROBE_VERSION",
    "RETRIEVAL_PROMPT",
    "RETRIEVAL_PROMPTS",
    "ConstructionAudit",
    "CutoffProbe",
    "LeakageCard",
    "ProbeQuestions",
    "RetrievalAudit",
    "RunAudit",
    "TextAudit",
    "audit_construction",
    "audit_run",
    "audit_served",
    "audit_texts",
    "calibration_items",
    "change_point",
    "leakage_card",
    "probe_cutoff",
    "probe_questions",
    "read_probe_questions",
    "read_retrieval_audit",
    "render_options",
    "served_documents",
    "stratified_sample",
    "write_probe_questions",
    "write_retrieval_audit",
]
