"""The application layer: every name a user types and every workflow, as Python functions.

The CLI, the integrations (Inspect, verifiers) and the Gymnasium environment sit on top of it:
they parse their own inputs, call a function here and present its result. Problems are raised
as ``AppError``, one line naming the field (``dataset``, ``corpus``, ``agents[1].model``),
never a command-line flag.
"""

from pastcast.app._agents import (
    AGENT_FORM,
    AGENT_GRAMMAR,
    AgentOption,
    check_agent_args,
    check_agents,
    models_session,
    parse_agent_option,
    parse_agent_options,
    split_agent_option,
)
from pastcast.app._audits import (
    DEFAULT_CALIBRATION,
    RetrievalAuditRead,
    RunAuditRead,
    audit_dataset_texts,
    audit_datasets,
    audit_run_log,
    audit_run_retrievals,
    run_leakage_cards,
)
from pastcast.app._by_agent import AgentRun, RunsByAgent, runs_by_agent
from pastcast.app._compare import Compared, compare_runs, paired_comparisons
from pastcast.app._corpus import (
    CorpusBuild,
    StoreBackend,
    build_corpus,
    corpus_documents,
    open_corpus,
)
from pastcast.app._corpus_append import append_corpus, index_feed, index_feed_round
from pastcast.app._curate import CURATION_LEGS, Curated, curate
from pastcast.app._data_views import (
    DatasetSummary,
    dataset_coverage,
    dataset_leakage_card,
    dataset_question,
    describe_dataset,
)
from pastcast.app._datasets import DATASET_SPEC_HELP, DatasetNote, open_dataset
from pastcast.app._errors import AppError
from pastcast.app._exports import Exported, ExportTarget, export_runs
from pastcast.app._feeds import fetch_feeds, follow_feeds
from pastcast.app._frames import FRAMES_EXTRA_HINT, runs_frame
from pastcast.app._imports import (
    Imported,
    import_forecastbench,
    import_polymarket,
    market_filters,
)
from pastcast.app._models import ProbedCutoff, probe_model_cutoff
from pastcast.app._reading import ColumnsRead, RunsRead, read_run_columns, read_runs
from pastcast.app._replays import WORLD_INDEX, Replay, open_replay, shared_replay
from pastcast.app._reports import (
    REPORTS_EXTRA_HINT,
    TABLE_COLUMNS,
    Dashboard,
    Report,
    Scored,
    dashboard,
    group_columns,
    report_runs,
    score_runs,
)
from pastcast.app._runs import (
    check_sandbox,
    plan_estimate,
    plan_from_agents,
    preset_curation,
    preset_import,
    preset_rounds,
    preset_settings,
    read_plan,
    run_plan,
)
from pastcast.app._sections import report_sections
from pastcast.app._stats import (
    Statistics,
    coverage_bins,
    longitudinal,
    memory_costs,
    recoveries,
)
from pastcast.app._steps import select_steps

__all__ = [
    "AGENT_FORM",
    "AGENT_GRAMMAR",
    "CURATION_LEGS",
    "DATASET_SPEC_HELP",
    "DEFAULT_CALIBRATION",
    "FRAMES_EXTRA_HINT",
    "REPORTS_EXTRA_HINT",
    "TABLE_COLUMNS",
    "WORLD_INDEX",
    "AgentOption",
    "AgentRun",
    "AppError",
    "ColumnsRead",
    "Compared",
    "CorpusBuild",
    "Curated",
    "Dashboard",
    "DatasetNote",
    "DatasetSummary",
    "ExportTarget",
    "Exported",
    "Imported",
    "ProbedCutoff",
    "Replay",
    "Report",
    "RetrievalAuditRead",
    "RunAuditRead",
    "RunsByAgent",
    "RunsRead",
    "Scored",
    "Statistics",
    "StoreBackend",
    "append_corpus",
    "audit_dataset_texts",
    "audit_datasets",
    "audit_run_log",
    "audit_run_retrievals",
    "build_corpus",
    "check_agent_args",
    "check_agents",
    "check_sandbox",
    "compare_runs",
    "corpus_documents",
    "coverage_bins",
    "curate",
    "dashboard",
    "dataset_coverage",
    "dataset_leakage_card",
    "dataset_question",
    "describe_dataset",
    "export_runs",
    "fetch_feeds",
    "follow_feeds",
    "group_columns",
    "import_forecastbench",
    "import_polymarket",
    "index_feed",
    "index_feed_round",
    "longitudinal",
    "market_filters",
    "memory_costs",
    "models_session",
    "open_corpus",
    "open_dataset",
    "open_replay",
    "paired_comparisons",
    "parse_agent_option",
    "parse_agent_options",
    "plan_estimate",
    "plan_from_agents",
    "preset_curation",
    "preset_import",
    "preset_rounds",
    "preset_settings",
    "probe_model_cutoff",
    "read_plan",
    "read_run_columns",
    "read_runs",
    "recoveries",
    "report_runs",
    "report_sections",
    "run_leakage_cards",
    "run_plan",
    "runs_by_agent",
    "runs_frame",
    "score_runs",
    "select_steps",
    "shared_replay",
    "split_agent_option",
]
