"""Leakage audits: of how a benchmark was built (can the metadata an agent sees predict the
outcome?) and of what agents saw in a run (documents, prompts, outputs); see docs/audits.md."""

from pastcast.audit._card import CARD_PERMUTATIONS, LeakageCard, ModelMemory, leakage_card
from pastcast.audit._classify import (
    auc,
    auc_interval,
    event_folds,
    fit_logistic,
    out_of_fold_scores,
    permutation_null,
    predict_logistic,
)
from pastcast.audit._construction import (
    AS_BUILT,
    TOO_FEW_WIDTH,
    ConstructionAudit,
    ScheduleAudit,
    Verdict,
    audit_construction,
    late_closes,
)
from pastcast.audit._features import FEATURES, step_features
from pastcast.audit._runaudit import CHECKS, SHINGLE, Finding, RunAudit, audit_run
from pastcast.audit._texts import TextAudit, audit_texts

__all__ = [
    "AS_BUILT",
    "CARD_PERMUTATIONS",
    "CHECKS",
    "FEATURES",
    "SHINGLE",
    "TOO_FEW_WIDTH",
    "ConstructionAudit",
    "Finding",
    "LeakageCard",
    "ModelMemory",
    "RunAudit",
    "ScheduleAudit",
    "TextAudit",
    "Verdict",
    "auc",
    "auc_interval",
    "audit_construction",
    "audit_run",
    "audit_texts",
    "event_folds",
    "fit_logistic",
    "late_closes",
    "leakage_card",
    "out_of_fold_scores",
    "permutation_null",
    "predict_logistic",
    "step_features",
]
