"""pastcast: replay resolved prediction markets to benchmark forecasting agents without leaking
the future.

The public API is re-exported here; each concept lives in its own package (see ARCHITECTURE.md).

Names are imported on first use (``pastcast.lazy``): ``import pastcast`` loads none of the
packages below, nor numpy, pydantic or the CLI's libraries, so the package and the CLI start fast.
"""

from __future__ import annotations

from pastcast.lazy import lazy_exports

TYPE_CHECKING = False  # not typing's: importing typing is a measurable part of the start-up
if TYPE_CHECKING:
    from pastcast.agents import Agent, agent_spec, build_agent, list_agents, register_agent
    from pastcast.corpus import (
        CorpusBackend,
        DocumentNotVisible,
        SearchHit,
        check_as_of_equivalence,
        check_no_leakage,
    )
    from pastcast.corpus.embedded import EmbeddedIndex
    from pastcast.corpus.sources import read_jsonl_documents
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
]

_WHERE: dict[str, str] = {
    "Agent": "pastcast.agents",
    "AgentRole": "pastcast.records",
    "ChatRequest": "pastcast.models",
    "ChatResponse": "pastcast.models",
    "CorpusBackend": "pastcast.corpus",
    "DailyBelief": "pastcast.records",
    "Dataset": "pastcast.dataset",
    "DayConvention": "pastcast.cutoff",
    "Document": "pastcast.records",
    "DocumentNotVisible": "pastcast.corpus",
    "EmbeddedIndex": "pastcast.corpus.embedded",
    "EnvConfig": "pastcast.env",
    "Episode": "pastcast.env",
    "EpisodeRecord": "pastcast.records",
    "Event": "pastcast.records",
    "FAILURE_REASONS": "pastcast.records",
    "FailureReason": "pastcast.records",
    "Forecast": "pastcast.records",
    "ForecastEnv": "pastcast.env",
    "Model": "pastcast.models",
    "Resolution": "pastcast.records",
    "RunConfig": "pastcast.runner",
    "RunHeader": "pastcast.runlog",
    "RunLog": "pastcast.runlog",
    "RunResult": "pastcast.runner",
    "ScriptedModel": "pastcast.models",
    "SearchHit": "pastcast.corpus",
    "Setting": "pastcast.records",
    "StepKey": "pastcast.records",
    "StepRecord": "pastcast.runlog",
    "StepSpec": "pastcast.records",
    "World": "pastcast.world",
    "accuracy": "pastcast.scoring",
    "agent_spec": "pastcast.agents",
    "brier": "pastcast.scoring",
    "build_agent": "pastcast.agents",
    "build_world": "pastcast.world",
    "check_as_of_equivalence": "pastcast.corpus",
    "check_env": "pastcast.env",
    "check_no_leakage": "pastcast.corpus",
    "info_alpha": "pastcast.scoring",
    "is_visible": "pastcast.cutoff",
    "list_agents": "pastcast.agents",
    "log_loss": "pastcast.scoring",
    "parse_cutoff": "pastcast.cutoff",
    "read_jsonl_documents": "pastcast.corpus.sources",
    "read_run_log": "pastcast.runlog",
    "register_agent": "pastcast.agents",
    "run_benchmark": "pastcast.runner",
    "score_forecast": "pastcast.scoring",
    "summarize": "pastcast.scoring",
}


__getattr__, __dir__ = lazy_exports(__name__, _WHERE)
