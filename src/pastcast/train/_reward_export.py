"""``export_rewards``: one record per forecast step with its outcome feedback, the final
conversation split into TRL's prompt and completion, unusable forecasts kept (the format penalty
is their signal); docs/training.md ("pastcast export rewards")."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pastcast.dataset import Dataset
from pastcast.records import AgentRole, FailureReason, Record, Setting, Termination, UtcDatetime
from pastcast.runlog import Probabilities, StepColumns, StepRecord
from pastcast.scoring import Fallback
from pastcast.train._chat import ChatMessage, chat_message, conversations, tool_definitions
from pastcast.train._guard import SplitPolicy
from pastcast.train._manifest import ExportManifest, write_export
from pastcast.train._rewards import RewardMetric, step_rewards
from pastcast.train._source import select_steps, step_keys


class RewardRecord(Record):
    run_id: str
    agent: str
    role: AgentRole
    setting: Setting
    event_id: str
    step_index: int
    rollout: int
    split: str
    category: str
    cutoff: UtcDatetime
    prompt: tuple[ChatMessage, ...]
    """The final conversation up to its first model turn (empty for agents without a model)."""
    completion: tuple[ChatMessage, ...]
    tools: str = "[]"
    forecast: Probabilities
    usable: bool
    failure_reason: FailureReason | None = None
    termination: Termination
    truth: str
    labels: tuple[str, ...]
    market_probs: Probabilities | None = None
    neg_brier: float
    log_score: float
    accuracy: float
    info_alpha: float | None = None
    format_penalty: float
    metric: RewardMetric
    reward: float | None
    """``metric`` plus the format penalty (None: information-alpha without a market)."""


def reward_schema() -> dict[str, Any]:
    """The JSON Schema every line of a reward export satisfies."""
    return RewardRecord.model_json_schema(mode="serialization")


def _record(
    step: StepRecord, metric: RewardMetric, fallback: Fallback, penalty: float
) -> RewardRecord:
    convs = conversations(step.episode)
    messages = convs[-1].messages if convs else ()
    first = next((i for i, m in enumerate(messages) if m.role == "assistant"), len(messages))
    rewards = step_rewards(step.forecast, step.grading, fallback=fallback, format_penalty=penalty)
    tools = tool_definitions(convs[-1].call.tools) if convs else ()
    return RewardRecord(
        **step_keys(step, RewardRecord),
        prompt=tuple(chat_message(m) for m in messages[:first]),
        completion=tuple(chat_message(m) for m in messages[first:]),
        tools=json.dumps([t.model_dump(mode="json") for t in tools], ensure_ascii=False),
        forecast=step.forecast.probs,
        usable=not rewards.fallback_used,
        failure_reason=step.forecast.failure_reason,
        termination=step.episode.termination,
        truth=step.grading.truth,
        labels=step.grading.labels,
        market_probs=step.grading.market_probs,
        **rewards.model_dump(exclude={"fallback_used"}),
        metric=metric,
        reward=rewards.reward(metric),
    )


def export_rewards(
    run_logs: Sequence[str | Path | StepColumns],
    out: str | Path,
    *,
    metric: RewardMetric = "neg_brier",
    format_penalty: float = 1.0,
    fallback: Fallback = "uniform",
    policy: SplitPolicy | None = None,
    datasets: Sequence[Dataset] = (),
) -> ExportManifest:
    """Write a reward record per admitted step of ``run_logs`` to ``out`` (JSONL) and its
    manifest. Raises ``FieldError`` for an unreadable log and ``FieldError`` when the guard
    refuses or no step is admitted."""
    policy = policy or SplitPolicy()
    selected = select_steps(run_logs, policy, datasets)

    def write(path: Path) -> int:  # a record at a time: memory bounded however long the logs
        rows = 0
        with path.open("w", encoding="utf-8") as fh:
            for step in selected.runs.records():
                fh.write(_record(step, metric, fallback, format_penalty).model_dump_json() + "\n")
                rows += 1
        return rows

    return write_export(
        out,
        write,
        kind="rewards",
        selected=selected,
        policy=policy,
        options={"metric": metric, "format_penalty": format_penalty, "fallback": fallback},
    )
