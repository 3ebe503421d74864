"""`pastcast run --config FILE`: run an experiment plan (see `pastcast plan FILE`).

The plan declares the run; the options that would declare it again (agents, dataset, budgets,
...) are refused next to ``--config``. ``--out`` may put the log elsewhere than the plan's
``out``; ``--resume`` and ``--retry-failed`` work as without a plan.
"""

from __future__ import annotations

from pathlib import Path

import typer
from pydantic import ValidationError

from pastcast.agents import clear_models
from pastcast.cli._common import EXIT_FAILED, fail
from pastcast.cli._plan import load_checked_plan
from pastcast.cli._run import CorpusChoice, _check_sandbox, _load, check_resume, report
from pastcast.cli._steps import StepChoice, select_steps
from pastcast.registry import RegistryError
from pastcast.runlog import RunLogError
from pastcast.runner import (
    CorpusRef,
    NothingToRun,
    PlanError,
    executors,
    reschedule,
    run_benchmark,
)

__all__ = ["run_plan"]

# Options that say how to run a plan, not what to run.
_WITH_CONFIG = frozenset({"config", "out", "resume", "retry_failed", "as_json", "ctx"})


def _given(ctx: typer.Context, name: str) -> bool:
    source = ctx.get_parameter_source(name)
    return source is not None and source.name == "COMMANDLINE"


def run_plan(
    ctx: typer.Context,
    path: Path,
    out: Path,
    *,
    resume: bool,
    retry_failed: bool,
    as_json: bool,
) -> None:
    plan = load_checked_plan(path)
    for param in ctx.command.params:
        if param.name not in _WITH_CONFIG and param.name and _given(ctx, param.name):
            fail(f"{param.opts[0]}: not with --config (the plan {path} declares the run)")
    log = out if _given(ctx, "out") else Path(plan.out)
    check_resume(log, resume)
    try:
        config = plan.run_config()
        executor = executors.build(plan.concurrency.executor, **plan.concurrency.executor_args)
    except (PlanError, ValidationError, RegistryError, RuntimeError) as exc:
        fail(f"{path}: {exc}")
    _check_sandbox(config.env)
    choice = CorpusChoice(plan.corpus.spec, plan.corpus.retrieval, plan.corpus.embedder)
    index_dir = log.parent / "index"
    loaded = _load(plan.dataset, choice, index_dir)
    try:
        dataset = reschedule(loaded.dataset, plan.schedule)
    except ValueError as exc:
        fail(f"{path}: schedule: {exc}")
    dataset = select_steps(dataset, loaded.backend, StepChoice(), as_json)  # coverage warnings
    # Executors in other processes open the corpus themselves, from where it lies.
    ref = None
    if loaded.backend is not None:
        ref = CorpusRef(
            spec=plan.corpus.spec or str(index_dir),
            retrieval=plan.corpus.retrieval,
            embedder=plan.corpus.embedder,
        )
    try:
        result = run_benchmark(
            dataset,
            loaded.backend,
            config,
            log,
            execution=plan.execution(),
            executor=executor,
            corpus_ref=ref,
            retry_failed=retry_failed,
            knowledge_cutoffs=plan.knowledge_cutoffs(),
        )
    except (RunLogError, NothingToRun) as exc:  # a log in use or of another run; no steps
        fail(str(exc))
    except (ValueError, RuntimeError) as exc:
        fail(str(exc), EXIT_FAILED)
    finally:
        clear_models()
    report(result, as_json)
