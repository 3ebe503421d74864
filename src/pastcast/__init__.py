"""pastcast: replay resolved prediction markets to benchmark forecasting agents without leaking
the future.

The front door: the application layer's workflows (open a dataset, plan and run, score, report,
compare, read runs, build a corpus, import, curate, audit), each checking what it is given and
raising ``FieldError`` naming the field, and the records they take. The lower layers' names stay
in their packages (``pastcast.runner``, ``pastcast.corpus.embedded``, ...) for the code that
builds on them; see ARCHITECTURE.md.

Names are imported on first use (``pastcast.lazy``): ``import pastcast`` loads none of the
packages below, nor numpy, pydantic or the CLI's libraries, so the package and the CLI start fast.
"""

from __future__ import annotations

from pastcast.lazy import lazy_exports

TYPE_CHECKING = False  # not typing's: importing typing is a measurable part of the start-up
if TYPE_CHECKING:
    from pastcast.agents import Agent, agent_spec, register_agent
    from pastcast.app import (
        append_corpus,
        audit_datasets,
        audit_run_log,
        build_corpus,
        compare_runs,
        curate_dataset,
        dashboard,
        describe_dataset,
        export_runs,
        import_forecastbench,
        import_polymarket,
        open_corpus,
        open_dataset,
        plan_estimate,
        plan_from_agents,
        read_plan,
        read_runs,
        report_runs,
        run_demo,
        run_plan,
        runs_frame,
        score_runs,
    )
    from pastcast.dataset import Dataset
    from pastcast.errors import FieldError
    from pastcast.models import Model, ScriptedModel
    from pastcast.records import Document, Event, Forecast, Resolution, StepSpec
    from pastcast.runner import ExperimentPlan
    from pastcast.scoring import Metric, metrics

__version__ = "0.1.0"

_WHERE: dict[str, str] = {
    "Agent": "pastcast.agents",
    "Dataset": "pastcast.dataset",
    "Document": "pastcast.records",
    "Event": "pastcast.records",
    "ExperimentPlan": "pastcast.runner",
    "FieldError": "pastcast.errors",
    "Forecast": "pastcast.records",
    "Metric": "pastcast.scoring",
    "Model": "pastcast.models",
    "Resolution": "pastcast.records",
    "ScriptedModel": "pastcast.models",
    "StepSpec": "pastcast.records",
    "agent_spec": "pastcast.agents",
    "append_corpus": "pastcast.app",
    "audit_datasets": "pastcast.app",
    "audit_run_log": "pastcast.app",
    "build_corpus": "pastcast.app",
    "compare_runs": "pastcast.app",
    "curate_dataset": "pastcast.app",
    "dashboard": "pastcast.app",
    "describe_dataset": "pastcast.app",
    "export_runs": "pastcast.app",
    "import_forecastbench": "pastcast.app",
    "import_polymarket": "pastcast.app",
    "metrics": "pastcast.scoring",
    "open_corpus": "pastcast.app",
    "open_dataset": "pastcast.app",
    "plan_estimate": "pastcast.app",
    "plan_from_agents": "pastcast.app",
    "read_plan": "pastcast.app",
    "read_runs": "pastcast.app",
    "register_agent": "pastcast.agents",
    "report_runs": "pastcast.app",
    "run_demo": "pastcast.app",
    "run_plan": "pastcast.app",
    "runs_frame": "pastcast.app",
    "score_runs": "pastcast.app",
}

__all__ = [
    "Agent",
    "Dataset",
    "Document",
    "Event",
    "ExperimentPlan",
    "FieldError",
    "Forecast",
    "Metric",
    "Model",
    "Resolution",
    "ScriptedModel",
    "StepSpec",
    "__version__",
    "agent_spec",
    "append_corpus",
    "audit_datasets",
    "audit_run_log",
    "build_corpus",
    "compare_runs",
    "curate_dataset",
    "dashboard",
    "describe_dataset",
    "export_runs",
    "import_forecastbench",
    "import_polymarket",
    "metrics",
    "open_corpus",
    "open_dataset",
    "plan_estimate",
    "plan_from_agents",
    "read_plan",
    "read_runs",
    "register_agent",
    "report_runs",
    "run_demo",
    "run_plan",
    "runs_frame",
    "score_runs",
]

__getattr__, __dir__ = lazy_exports(__name__, _WHERE)
