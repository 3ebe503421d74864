"""``check_deterministic``: two runs of one agent on a step's event must write the same run log,
step by step, except for run ids, timestamps and durations. It runs the whole runner twice, so it
lives with the runner; ``pastcast.env.check_env`` checks the environment's own contract."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from pastcast.agents import clear_models
from pastcast.env import EnvCheckError, EnvCheckReport, ForecastEnv
from pastcast.records import StepSpec
from pastcast.runlog import AgentSpec, read_run_log
from pastcast.runner._config import RunConfig
from pastcast.runner._plan_file import pruned
from pastcast.runner._run import run_benchmark
from pastcast.safejson import canonical_json

DETERMINISM_CHECK = "deterministic runs"
"""The check's name in the report (``EnvCheckReport.passed``, and the prefix of its problems)."""

_VOLATILE = frozenset({"run_id", "created_at", "elapsed_s", "wall_s"})


def _volatile(key: str, _: Any) -> bool:
    """Run ids, timestamps and durations differ between identical runs."""
    return key in _VOLATILE or key.endswith(("_at", "_s", "_ms")) or "latency" in key


def _first_difference(a: Any, b: Any, path: str = "") -> str:
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            if a.get(key) != b.get(key):
                return _first_difference(a.get(key), b.get(key), f"{path}.{key}")
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            if x != y:
                return _first_difference(x, y, f"{path}[{i}]")
    return path or "(the record)"


def _differences(env: ForecastEnv, step: StepSpec, agent: AgentSpec, root: Path) -> list[str]:
    dataset = env.dataset.with_steps(env.dataset.steps_of(step.event_id))
    config = RunConfig(agents=(agent,), env=env.config)
    logs: list[dict[Any, dict[str, Any]]] = []
    for name in ("first.jsonl", "second.jsonl"):
        log = root / name
        log.unlink(missing_ok=True)
        clear_models()  # each run builds its models afresh, as a new process would
        run_benchmark(
            dataset, env.backend, config, log, progress=False, python_runner=env.python_runner
        )
        logs.append(
            {r.key: pruned(r.model_dump(mode="json"), _volatile) for r in read_run_log(log).steps}
        )
    clear_models()
    first, second = logs
    if set(first) != set(second):
        return [f"the two runs recorded different steps ({len(first)} and {len(second)})"]
    out = []
    for key in sorted(first):
        a, b = first[key], second[key]
        if canonical_json(a) != canonical_json(b):
            where = _first_difference(a, b)
            out.append(f"step {key[2]}#{key[3]} differs between two identical runs at {where}")
    return out


def check_deterministic(
    env: ForecastEnv,
    step: StepSpec,
    agent: AgentSpec,
    *,
    workdir: str | Path | None = None,
    strict: bool = True,
) -> EnvCheckReport:
    """Two runs of ``agent`` on ``step``'s event must log the same steps (docs/models.md); logs
    in ``workdir`` (a temporary folder by default); ``EnvCheckError`` unless ``strict`` is False."""
    with tempfile.TemporaryDirectory(prefix="pastcast-check-") as tmp:
        root = Path(workdir) if workdir is not None else Path(tmp)
        root.mkdir(parents=True, exist_ok=True)
        try:
            found = _differences(env, step, agent, root)
        except Exception as exc:  # a run that cannot even finish is not deterministic either
            found = [f"raised {type(exc).__name__}: {exc}"]
    report = EnvCheckReport(
        event_id=step.event_id,
        step_index=step.step_index,
        passed=() if found else (DETERMINISM_CHECK,),
        problems=tuple(f"{DETERMINISM_CHECK}: {p}" for p in found),
    )
    if strict and found:
        raise EnvCheckError(report)
    return report
