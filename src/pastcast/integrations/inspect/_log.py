"""An Inspect log of ``pastcast/forecast`` as a pastcast run log (schema 2), from what the
solver stored in each sample and the task in the eval's metadata; docs/integrations.md
("Import")."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inspect_ai.log import EvalLog, EvalSample, read_eval_log
from pydantic import ValidationError

from pastcast.agents import agent_info
from pastcast.errors import FieldError
from pastcast.integrations.inspect._task import STORE_KEY
from pastcast.records import EpisodeRecord, Forecast
from pastcast.runlog import AgentSpec, Grading, RunHeader, RunLogWriter, StepRecord
from pastcast.runner import RunConfig
from pastcast.scoring import score_forecast
from pastcast.validation import first_problem


@dataclass(frozen=True)
class InspectImport:
    path: Path
    run_id: str
    written: int
    skipped: int
    """Samples without a forecast (an error or a cancellation ended them before the solver)."""


def _read(path: Path) -> EvalLog:
    if not path.is_file():
        raise FieldError("", f"{path}: no such Inspect log")
    try:
        return read_eval_log(str(path))
    except Exception as exc:  # Inspect's readers raise many kinds; the message names it
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise FieldError("", f"{path}: not a readable Inspect log ({first})") from None


def _played(path: Path, sample: EvalSample) -> tuple[AgentSpec, Forecast, EpisodeRecord] | None:
    stored = sample.store.get(STORE_KEY)
    if stored is None:
        return None
    try:
        return (
            AgentSpec.model_validate(stored["agent"]),
            Forecast.model_validate(stored["forecast"]),
            EpisodeRecord.model_validate(stored["episode"]),
        )
    except (KeyError, TypeError, ValidationError) as exc:
        why = first_problem(exc) if isinstance(exc, ValidationError) else exc
        raise FieldError("", f"{path}: sample {sample.id} epoch {sample.epoch}: {why}") from None


def _grading(path: Path, sample: EvalSample) -> Grading | None:
    for score in (sample.scores or {}).values():
        found = (score.metadata or {}).get("grading")
        if found is not None:
            try:
                return Grading.model_validate(found)
            except ValidationError as exc:
                raise FieldError(
                    "",
                    first_problem(exc, f"{path}: sample {sample.id} epoch {sample.epoch}: grading"),
                ) from None
    return None


def _header(path: Path, log: EvalLog, meta: dict[str, Any], spec: AgentSpec) -> RunHeader:
    config = RunConfig(
        agents=(spec,),
        rollouts=max(1, log.eval.config.epochs or 1),
        env=meta["env"],
        fallback=meta["fallback"],
        split=meta["split"],
        max_events=meta["max_events"],
    )
    try:
        return RunHeader(
            run_id=_run_id(log, meta),
            created_at=log.eval.created,
            dataset_id=meta["dataset_id"],
            config=config.model_dump(mode="json"),
            agents=(spec,),
            prompts=meta["prompts"],
            code_version=meta["code_version"],
            corpus=meta["corpus"],
        )
    except (KeyError, ValidationError) as exc:
        why = first_problem(exc) if isinstance(exc, ValidationError) else f"missing {exc}"
        raise FieldError("", f"{path}: eval metadata {STORE_KEY}: {why}") from None


def _run_id(log: EvalLog, meta: dict[str, Any]) -> str:
    """The pastcast run an exported log came from (``pastcast export inspect``), else the
    evaluation's own id."""
    return str(meta.get("run_id") or log.eval.eval_id)


def import_inspect_log(log_path: str | Path, out: str | Path) -> InspectImport:
    """Write the run log ``out`` (its header beside it) from the Inspect log ``log_path``.

    Writing to an existing run log appends the steps it lacks, as a resumed run does, and
    refuses a log of another definition (``FieldError``). Raises ``FieldError`` for a log
    that is not one of ``pastcast/forecast``.
    """
    path = Path(log_path)
    log = _read(path)
    meta = (log.eval.metadata or {}).get(STORE_KEY)
    if not isinstance(meta, dict):
        raise FieldError(
            "",
            f"{path}: not a pastcast/forecast evaluation (task {log.eval.task}; its metadata has "
            f"no {STORE_KEY!r} entry)",
        )
    records: list[StepRecord] = []
    skipped = 0
    spec: AgentSpec | None = None
    for sample in log.samples or []:
        played = _played(path, sample)
        grading = _grading(path, sample)
        if played is None or grading is None:
            skipped += 1
            continue
        spec, forecast, episode = played
        step = sample.metadata
        records.append(
            StepRecord(
                run_id=_run_id(log, meta),
                agent=spec.name,
                role=agent_info(spec).role,
                setting=spec.setting,
                event_id=step["event_id"],
                step_index=step["step_index"],
                cutoff=step["cutoff"],
                rollout=sample.epoch - 1,
                split=step.get("split", ""),
                category=step.get("category", ""),
                forecast=forecast,
                episode=episode,
                grading=grading,
                scores=score_forecast(forecast, grading, fallback=meta.get("fallback", "uniform")),
            )
        )
    if spec is None:
        raise FieldError("", f"{path}: no sample with a forecast (status {log.status})")
    with RunLogWriter(out, _header(path, log, meta, spec)) as writer:
        before = len(writer.done)
        for record in records:
            writer.write(record)
        return InspectImport(writer.path, writer.header.run_id, len(writer.done) - before, skipped)
