"""Run logs as Inspect eval logs (one per run, agent and setting), shaped as the task
``pastcast/forecast`` writes them, so ``pastcast import inspect-log`` reads each back into the
same forecasts and scores. The outcome appears only where Inspect expects it (the target and the
score); docs/integrations.md ("Export")."""

from __future__ import annotations

import contextlib
import hashlib
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inspect_ai.log import (
    EvalConfig,
    EvalDataset,
    EvalLog,
    EvalMetric,
    EvalResults,
    EvalSample,
    EvalScore,
    EvalSpec,
    EvalStats,
    write_eval_log,
)
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageTool,
    ChatMessageUser,
    ModelOutput,
)
from inspect_ai.tool import ToolCall as InspectToolCall

from pastcast.app import AgentRun, RunsRead, runs_by_agent
from pastcast.atomic import atomic_directory
from pastcast.dataset import Dataset
from pastcast.env import question_view
from pastcast.errors import FieldError
from pastcast.integrations.inspect._task import (
    SCORED,
    STORE_KEY,
    answer_text,
    last_conversation,
    scored_sample,
    stored,
)
from pastcast.owned import mark
from pastcast.runlog import StepRecord

INSPECT_LOGS = "inspect-logs"
"""The kind of folder the export writes (``pastcast.owned``)."""
TASK = "pastcast/forecast"
SCORER = "forecast_score"
NO_MODEL = "none/none"
"""Inspect's name for an evaluation without a model (baselines, the heuristic agent)."""


@dataclass(frozen=True)
class InspectExport:
    out: Path
    logs: tuple[Path, ...]
    """One eval log per run, agent and setting."""
    samples: int
    read: RunsRead


def _question(step: StepRecord, dataset: Dataset | None) -> str:
    """What the agent was asked: the question view as the task renders it (with the dataset),
    else the first prompt its model was sent, else the step's own words."""
    if dataset is not None:
        with contextlib.suppress(KeyError):  # an event the dataset does not hold
            event = dataset.event_at(step.event_id, step.cutoff)
            return question_view(event, step.cutoff, step.step_index).render()
    record = step.episode
    if record.model_calls:
        for m in record.messages_of(record.model_calls[0]):
            if m.role == "user":
                return m.content
    return (
        f"Forecast {step.event_id} (step {step.step_index}) as of {step.cutoff.isoformat()} "
        f"over {', '.join(step.grading.labels)}."
    )


def _messages(step: StepRecord, question: str) -> list[ChatMessage]:
    """The last model call's request and reply (the whole conversation of a tool agent), or
    for an agent without a model its tool calls and their results in order."""
    record = step.episode
    if record.model_calls:
        return last_conversation(record)
    out: list[ChatMessage] = [ChatMessageUser(content=question)]
    for i, call in enumerate(record.tool_calls):
        call_id = f"call-{i}"
        out.append(
            ChatMessageAssistant(
                content="",
                tool_calls=[
                    InspectToolCall(id=call_id, function=call.name, arguments=dict(call.arguments))
                ],
            )
        )
        out.append(ChatMessageTool(content=call.result, tool_call_id=call_id, function=call.name))
    out.append(ChatMessageAssistant(content=step.forecast.raw_text or answer_text(step.forecast)))
    return out


def _sample(step: StepRecord, group: AgentRun, model: str, dataset: Dataset | None) -> EvalSample:
    fallback = group.log.header.config.get("fallback", "uniform")
    question = _question(step, dataset)
    return EvalSample(
        id=f"{step.event_id}#{step.step_index}",
        epoch=step.rollout + 1,
        input=question,
        target=step.grading.truth,
        messages=_messages(step, question),
        output=ModelOutput.from_content(model=model, content=step.forecast.raw_text),
        scores={SCORER: scored_sample(step.forecast, step.grading, fallback)},
        metadata={
            "event_id": step.event_id,
            "step_index": step.step_index,
            "step_date": step.cutoff.date().isoformat(),
            "cutoff": step.cutoff.isoformat(),
            "setting": step.setting,
            "agent": step.agent,
            "split": step.split,
            "category": step.category,
        },
        store={STORE_KEY: stored(group.spec, step.forecast, step.episode)},
        total_time=step.episode.wall_s,
        working_time=step.episode.wall_s,
    )


def _results(samples: Sequence[EvalSample]) -> EvalResults:
    """Means (and standard errors of the metrics) as the task's scorer reports them."""
    scores = []
    for name in (*SCORED, "usable"):
        values = [
            float(v)
            for s in samples
            for sc in (s.scores or {}).values()
            if isinstance(sc.value, dict) and isinstance((v := sc.value.get(name)), int | float)
        ]
        n = len(values)
        metrics = {
            "mean": EvalMetric(name="mean", value=statistics.fmean(values) if n else math.nan)
        }
        if name in SCORED:
            se = statistics.stdev(values) / math.sqrt(n) if n > 1 else math.nan
            metrics["stderr"] = EvalMetric(name="stderr", value=se)
        scores.append(EvalScore(name=name, scorer=SCORER, scored_samples=n, metrics=metrics))
    return EvalResults(total_samples=len(samples), completed_samples=len(samples), scores=scores)


def _eval_id(group: AgentRun) -> str:
    key = f"{group.log.header.run_id}\n{group.spec.name}\n{group.spec.setting}"
    return hashlib.sha256(key.encode()).hexdigest()[:22]


def _eval_log(group: AgentRun, dataset: Dataset | None) -> EvalLog:
    header = group.log.header
    config = header.config
    model = str(group.spec.args.get("model") or NO_MODEL)
    samples: list[EvalSample] = []
    starts = []
    for step in group.steps():  # each record read by offset; the eval log holds the samples
        samples.append(_sample(step, group, model, dataset))
        starts.append(step.cutoff)
    created = header.created_at.isoformat()
    meta: dict[str, Any] = {
        "run_id": header.run_id,
        "dataset_id": header.dataset_id,
        "corpus": None if header.corpus is None else header.corpus.model_dump(mode="json"),
        "env": config.get("env", {}),
        "fallback": config.get("fallback", "uniform"),
        "split": config.get("split"),
        "max_events": config.get("max_events"),
        "prompts": dict(header.prompts),
        "code_version": header.code_version,
        "setting": group.spec.setting,
    }
    ids = list(dict.fromkeys(s.id for s in samples))
    return EvalLog(
        status="success",
        eval=EvalSpec(
            eval_id=_eval_id(group),
            run_id=header.run_id,
            created=created,
            task=TASK,
            task_display_name=f"{group.spec.name}@{group.spec.setting}",
            task_args={"agent": group.spec.name, "setting": group.spec.setting},
            dataset=EvalDataset(name=header.dataset_id, samples=len(ids), sample_ids=ids),
            model=model,
            config=EvalConfig(epochs=int(config.get("rollouts", 1) or 1)),
            metadata={STORE_KEY: meta},
        ),
        results=_results(samples),
        stats=EvalStats(
            started_at=created, completed_at=max(starts).isoformat() if starts else created
        ),
        samples=samples,
    )


def _file_name(log: EvalLog, i: int) -> str:
    stamp = log.eval.created[:19].replace(":", "-")
    return f"{stamp}_pastcast-forecast_{i:03d}_{log.eval.eval_id}.eval"


def export_inspect_logs(
    run_logs: Sequence[str | Path],
    out: str | Path,
    *,
    dataset: str | Path | Dataset | None = None,
) -> InspectExport:
    """Write an Inspect eval log (``.eval``) per run, agent and setting of ``run_logs`` into the
    folder ``out``, replaced whole (only a folder pastcast made for them, or an empty one).
    ``dataset``: the one the runs used, for each sample's question as the agent saw it.
    ``FieldError`` naming ``run_logs``, ``dataset`` or ``out``."""
    split = runs_by_agent(run_logs, out, kind=INSPECT_LOGS, dataset=dataset)
    data = split.read.dataset
    logs = [_eval_log(g, data) for g in split.groups]
    target = split.out
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with atomic_directory(target) as tmp:
            mark(tmp, INSPECT_LOGS)
            for i, log in enumerate(logs):
                write_eval_log(log, str(tmp / _file_name(log, i)), format="eval")
    except OSError as exc:
        raise FieldError("out", f"{target}: cannot write ({exc.strerror or exc})") from None
    names = tuple(target / _file_name(log, i) for i, log in enumerate(logs))
    return InspectExport(target, names, sum(len(g.rows) for g in split.groups), split.read)
