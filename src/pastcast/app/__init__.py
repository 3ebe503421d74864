"""The application layer: every name a user types and every workflow, as Python functions.

The CLI, the integrations (Inspect, verifiers) and the Gymnasium environment sit on top of it:
they parse their own inputs, call a function here and present its result. Problems are raised
as ``FieldError``, one line naming the field (``dataset``, ``corpus``, ``agents[1].model``),
never a command-line flag.
"""

from __future__ import annotations

from pastcast.lazy import lazy_exports

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pastcast.app._agents import (
        AGENT_FORM,
        AGENT_GRAMMAR,
        Terminated,
        check_agents,
        models_session,
        parse_agent_option,
        split_agent_option,
    )
    from pastcast.app._audits import (
        DEFAULT_CALIBRATION,
        ProbedCutoff,
        RetrievalAuditRead,
        RunAuditRead,
        audit_dataset_texts,
        audit_datasets,
        audit_run_log,
        audit_run_retrievals,
        probe_model_cutoff,
    )
    from pastcast.app._compare import Compared, compare_runs
    from pastcast.app._corpus import (
        CorpusBuild,
        build_corpus,
        corpus_documents,
    )
    from pastcast.app._corpus_append import (
        append_corpus,
        check_feed_index,
        fetch_feeds,
        follow_feeds,
        index_feed,
        index_feed_round,
    )
    from pastcast.app._corpus_plan import CorpusBuildPlan, PathText
    from pastcast.app._datasets import (
        Curated,
        DatasetSummary,
        Imported,
        curate_dataset,
        dataset_question,
        describe_dataset,
        filter_values,
        import_forecastbench,
        import_polymarket,
    )
    from pastcast.app._exports import AgentRun, Exported, export_runs, runs_by_agent
    from pastcast.app._finetune import Finetuned, FinetunePlan, finetune
    from pastcast.app._open import DATASET_SPEC_HELP, DatasetNote, open_corpus, open_dataset
    from pastcast.app._plans import (
        CURATION_LEGS,
        ConstructionAuditPlan,
        CurationPlan,
        ForecastBenchImport,
        MarketImport,
        PolymarketImport,
        RunAuditPlan,
    )
    from pastcast.app._reading import RunsRead, read_runs, runs_frame
    from pastcast.app._replays import Replay, open_replay, shared_replay
    from pastcast.app._reports import (
        MARKET_AGE_WARNING,
        REPORTS_EXTRA_HINT,
        TABLE_COLUMNS,
        Dashboard,
        Report,
        Scored,
        dashboard,
        group_columns,
        report_runs,
        report_sections,
        score_runs,
    )
    from pastcast.app._runs import (
        Demo,
        plan_estimate,
        plan_from_agents,
        preset_settings,
        read_plan,
        run_demo,
        run_plan,
        serve_episode,
        write_plan,
    )
    from pastcast.app._stats import (
        Statistics,
        coverage_bins,
        longitudinal,
        memory_costs,
        recoveries,
    )
    from pastcast.runner import with_preset

__getattr__, __dir__ = lazy_exports(__name__)
