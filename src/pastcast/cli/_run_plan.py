"""`pastcast run --config FILE`: run an experiment plan (see `pastcast plan FILE`).

The plan declares the run; the options that would declare it again (agents, dataset, budgets,
...) are refused next to ``--config``. ``--out`` may put the log elsewhere than the plan's
``out``, ``--max-steps`` set the plan's ``max_steps``; ``--resume`` and ``--retry-failed``
work as without a plan.
"""

from __future__ import annotations

from pathlib import Path

import typer

from pastcast.app import read_plan
from pastcast.cli._common import fail, given_options
from pastcast.cli._run import execute, report
from pastcast.errors import FieldError

__all__ = ["run_plan_file"]

# Options that say how to run a plan, not what to run.
_WITH_CONFIG = frozenset({"config", "out", "resume", "retry_failed", "max_steps", "as_json"})


def run_plan_file(
    ctx: typer.Context,
    path: Path,
    out: Path,
    *,
    resume: bool,
    retry_failed: bool,
    max_steps: int | None,
    as_json: bool,
) -> None:
    try:
        plan = read_plan(path)
    except FieldError as exc:
        fail(exc.reason)
    given = given_options(ctx)
    for param in ctx.command.params:
        if param.name not in _WITH_CONFIG and param.name in given:
            fail(f"{param.opts[0]}: not with --config (the plan {path} declares the run)")
    log = out if "out" in given else None
    if max_steps is not None:
        plan = plan.model_copy(update={"max_steps": max_steps})
    result = execute(plan, log, resume=resume, retry_failed=retry_failed, where=str(path))
    report(result, as_json)
