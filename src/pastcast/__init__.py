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

__getattr__, __dir__ = lazy_exports(__name__)
