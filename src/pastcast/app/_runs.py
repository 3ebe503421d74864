"""The one run path: an experiment plan (from a file, or from ``pastcast run``'s options) checked
in full before any work, then run with its models' lifetime owned here.

``run_plan`` checks everything that can be checked without running (the out path and resume,
the agents by the registry with their argument types, every model loaded, the sandbox for the
python tool, the executor, the dataset and corpus, the schedule, the step selection) and raises
``FieldError`` naming the field of the first problem; then it runs, and stops every local model
server started for the run however the run ends.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar, overload

from pydantic import ValidationError

from pastcast.app._agents import check_agents, models_session, parse_agent_options
from pastcast.app._fields import as_field
from pastcast.app._open import open_dataset
from pastcast.app._replays import open_replay
from pastcast.corpus import CorpusBackend
from pastcast.dataset import Dataset
from pastcast.env import EnvConfig
from pastcast.errors import FieldError, within
from pastcast.records import Record, Setting
from pastcast.runlog import header_path
from pastcast.runner import (
    ExperimentPlan,
    PlanEstimate,
    Preset,
    RunResult,
    estimate_plan,
    executors,
    load_plan,
    load_record,
    preset_names,
    reschedule,
    run_benchmark,
    with_preset,
    write_record,
)
from pastcast.runner import preset as get_preset
from pastcast.validation import field_path, first_error

__all__ = [
    "check_sandbox",
    "plan_estimate",
    "plan_from_agents",
    "preset_settings",
    "read_plan",
    "run_plan",
    "with_preset",
    "write_plan",
]

_log = logging.getLogger("pastcast")


R = TypeVar("R", bound=Record)


@overload
def read_plan(path: str | Path) -> ExperimentPlan: ...
@overload
def read_plan(path: str | Path, kind: type[R]) -> R: ...
def read_plan(path: str | Path, kind: type[Record] = ExperimentPlan) -> Record:
    """The record ``kind`` (a workflow's: ``ExperimentPlan``, ``CurationPlan``, ...) in the file
    at ``path`` (TOML, YAML or JSON); ``FieldError`` (field ``plan``) naming the file and the
    field of the first problem."""
    with within("plan"):
        if kind is ExperimentPlan:  # its agents are checked by the registry too
            return load_plan(path)
        return load_record(kind, path)


def write_plan(record: Record, path: str | Path) -> Path:
    """``record`` written to the new file ``path`` (JSON, YAML, else TOML by its suffix), which
    ``read_plan`` reads back as the same record; ``FieldError`` (field ``plan``) otherwise."""
    with as_field("plan", OSError), within("plan"):
        return write_record(record, path)


def plan_from_agents(
    agents: Sequence[str], /, *, setting: Setting = "memory_free", **fields: Any
) -> ExperimentPlan:
    """The plan that ``agents`` (each ``NAME[:key=value,...][@SETTING]``, ``setting`` for those
    without one; given, they replace the ``agents`` of ``fields``) and ``fields`` (any of
    ``ExperimentPlan``: ``dataset``, ``corpus``, ``budgets``, ``preset``, ...) declare: what
    ``pastcast run``'s options build (a ``preset`` fills the fields not given). ``FieldError``
    naming the field (``budgets.max_tool_calls``) of the first problem."""
    if agents:
        parsed = parse_agent_options(agents, setting)
        fields["agents"] = [
            {"name": p.name, "label": p.label, "setting": p.setting, "args": p.args} for p in parsed
        ]
    try:
        return ExperimentPlan.model_validate(fields)
    except ValidationError as exc:
        loc, msg = first_error(exc)
        raise FieldError(field_path(loc) or "plan", f"is invalid: {msg}") from None


def preset_settings(name: str | None = None) -> tuple[Preset, ...]:
    """Every registered preset, or the one named (``FieldError`` field ``preset`` if unknown)."""
    if name is None:
        return tuple(get_preset(n) for n in preset_names())
    if name not in preset_names():
        raise FieldError("preset", f"unknown {name!r} (one of {', '.join(preset_names())})")
    return (get_preset(name),)


def check_sandbox(env: EnvConfig, field: str = "budgets.python_tool") -> None:
    """An isolating sandbox is needed for the python tool unless it is allowed unsafe."""
    if not env.python_tool or env.unsafe_python:
        return
    from pastcast.sandbox import sandbox_available

    ok, why = sandbox_available()
    if not ok:
        raise FieldError(
            field,
            f"needs an isolating sandbox and there is none here ({why}): install bubblewrap, "
            "or allow unsafe python for trusted agents only",
        )


def _check_out(log: Path, resume: bool) -> None:
    if (log.exists() or log.is_symlink()) and (not log.is_file() or log.is_symlink()):
        raise FieldError("out", f"{log}: exists and is not a regular file (a run log is one)")
    if resume and not (header_path(log).is_file() or (log.is_file() and log.stat().st_size)):
        raise FieldError("resume", f"finds no run log at {log} to resume")


def _rescheduled(dataset: Dataset, schedule: str | None) -> Dataset:
    with as_field("schedule"):
        return reschedule(dataset, schedule)


def steps_to_play(
    dataset: Dataset,
    backend: CorpusBackend | None,
    *,
    covered_only: bool = False,
    coverage_days: int = 7,
    notes: Callable[[str], None],
) -> Dataset:
    """``dataset`` with only the steps the corpus covers (a document in the ``coverage_days``
    before the cutoff) when ``covered_only``; a ``warning: ...`` line to ``notes`` per split
    with uncovered steps either way."""
    if backend is None:
        if covered_only:
            raise FieldError("covered_only", "needs a corpus (coverage is measured against one)")
        return dataset
    from pastcast.markets import step_coverage

    report = step_coverage(dataset, backend, window_days=coverage_days)
    hint = "" if covered_only else " (covered_only leaves them out)"
    for line in report.warnings():
        notes(f"warning: {line}{hint}")
    if not covered_only:
        return dataset
    kept = [s for s in dataset.steps if report.is_covered(s)]
    if not kept:
        raise FieldError(
            "covered_only", "leaves nothing: no step of the dataset is covered by the corpus"
        )
    notes(f"covered_only: {len(kept)} of {len(dataset.steps)} steps kept")
    return dataset.with_steps(kept)


def run_plan(
    plan: ExperimentPlan,
    out: str | Path | None = None,
    *,
    resume: bool = False,
    retry_failed: bool = False,
    progress: bool = True,
    notes: Callable[[str], None] | None = None,
) -> RunResult:
    """Run ``plan``, writing its run log to ``out`` (default: the plan's ``out``; resumed when
    present: ``resume`` requires one), checked first as the module says. ``notes`` gets the
    lines worth showing before the run (coverage warnings; default: the ``pastcast`` logger).
    Errors of the run itself propagate (``ValueError``, ``RuntimeError``)."""
    log = Path(out if out is not None else plan.out)
    tell = notes or _log.warning
    _check_out(log, resume)
    with as_field("agents", FieldError, ValidationError):
        config = plan.run_config()
    with as_field("concurrency.executor", RuntimeError, ValueError):
        executor = executors.build(plan.concurrency.executor, **plan.concurrency.executor_args)
    check_sandbox(config.env)
    with models_session():
        check_agents(config.agents)
        corpus = plan.corpus
        with open_replay(
            plan.dataset,
            corpus.spec,
            corpus.retrieval,
            corpus.embedder,
            index_dir=log.parent / "index",
            convention=plan.day_convention,
            nprobe=corpus.nprobe,
        ) as replay:
            dataset = _rescheduled(replay.dataset, plan.schedule)
            dataset = steps_to_play(
                dataset,
                replay.backend,
                covered_only=plan.covered_only,
                coverage_days=plan.coverage_days,
                notes=tell,
            )
            return run_benchmark(
                dataset,
                replay.backend,
                config,
                log,
                progress=progress,
                execution=plan.execution(),
                executor=executor,
                corpus_ref=replay.corpus_ref,
                retry_failed=retry_failed,
                knowledge_cutoffs=plan.knowledge_cutoffs(),
                # the header says where this log is, not the plan's default
                plan={**plan.model_dump(mode="json"), "out": str(log)},
            )


def plan_estimate(plan: ExperimentPlan) -> PlanEstimate:
    """What ``plan`` will run and cost, on its dataset as the run opens it (a world, a dataset
    directory or a Forecast-Dojo release, rescheduled); ``FieldError`` naming the field."""
    dataset = _rescheduled(
        open_dataset(plan.dataset, convention=plan.day_convention), plan.schedule
    )
    with as_field("prices"):  # a price file that cannot be read
        return estimate_plan(plan, dataset)
