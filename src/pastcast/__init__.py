"""pastcast: replay resolved prediction markets to benchmark forecasting agents without leaking
the future.

The public API is re-exported here; each concept lives in its own package (see ARCHITECTURE.md).
"""

from pastcast.agents import Agent, agent_spec, build_agent, list_agents, register_agent
from pastcast.corpus import (
    CorpusBackend,
    DocumentNotVisible,
    EmbeddedIndex,
    SearchHit,
    check_as_of_equivalence,
    check_no_leakage,
    read_jsonl_documents,
)
from pastcast.cutoff import DayConvention, is_visible, parse_cutoff
from pastcast.dataset import Dataset
from pastcast.env import EnvConfig, Episode, ForecastEnv, check_env
from pastcast.models import ChatRequest, ChatResponse, Model, ScriptedModel
from pastcast.records import (
    FAILURE_REASONS,
    AgentRole,
    DailyBelief,
    Document,
    EpisodeRecord,
    Event,
    FailureReason,
    Forecast,
    Resolution,
    Setting,
    StepKey,
    StepSpec,
)
from pastcast.reports import write_report
from pastcast.runlog import RunHeader, RunLog, StepRecord, read_run_log
from pastcast.runner import RunConfig, RunResult, run_benchmark
from pastcast.scoring import accuracy, brier, info_alpha, log_loss, score_forecast, summarize
from pastcast.world import World, build_world

__version__ = "0.1.0"

__all__ = [
    "FAILURE_REASONS",
    "Agent",
    "AgentRole",
    "ChatRequest",
    "ChatResponse",
    "CorpusBackend",
    "DailyBelief",
    "Dataset",
    "DayConvention",
    "Document",
    "DocumentNotVisible",
    "EmbeddedIndex",
    "EnvConfig",
    "Episode",
    "EpisodeRecord",
    "Event",
    "FailureReason",
    "Forecast",
    "ForecastEnv",
    "Model",
    "Resolution",
    "RunConfig",
    "RunHeader",
    "RunLog",
    "RunResult",
    "ScriptedModel",
    "SearchHit",
    "Setting",
    "StepKey",
    "StepRecord",
    "StepSpec",
    "World",
    "__version__",
    "accuracy",
    "agent_spec",
    "brier",
    "build_agent",
    "build_world",
    "check_as_of_equivalence",
    "check_env",
    "check_no_leakage",
    "info_alpha",
    "is_visible",
    "list_agents",
    "log_loss",
    "parse_cutoff",
    "read_jsonl_documents",
    "read_run_log",
    "register_agent",
    "run_benchmark",
    "score_forecast",
    "summarize",
    "write_report",
]
