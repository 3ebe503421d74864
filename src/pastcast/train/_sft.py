"""``export_sft``: the model conversations of chosen forecast steps as chat fine-tuning records,
in two shapes (``SftRecord``, ``OpenAiRecord``). Which steps and conversations, and the shapes:
docs/training.md ("pastcast export sft")."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import ValidationError

from pastcast.dataset import Dataset
from pastcast.errors import FieldError
from pastcast.records import Message, Notebook, Record, Setting, UtcDatetime
from pastcast.runlog import Probabilities, StepColumns, StepRecord
from pastcast.textfiles import read_text_file
from pastcast.train._chat import (
    ChatMessage,
    OpenAiMessage,
    OpenAiTool,
    chat_message,
    conversations,
    from_chat_message,
    from_openai_messages,
    openai_message,
    tool_definitions,
)
from pastcast.train._guard import SplitPolicy
from pastcast.train._manifest import ExportManifest, RowSource, write_export
from pastcast.train._rewards import RewardMetric, StepRewards, step_rewards
from pastcast.train._source import Selected, StepRow, select_steps, step_keys
from pastcast.validation import first_problem

SftShape = Literal["messages", "openai"]
Keep = Literal["best", "all"]


class SftRecord(Record):
    """One conversation in the ``messages`` shape (TRL's SFT trainer, ``datasets``), with the
    step it came from."""

    messages: tuple[ChatMessage, ...]
    tools: str = "[]"
    """The tools offered natively, as JSON text of OpenAI-style definitions (TRL decodes it);
    ``[]`` in JSON action mode, where the actions' schema is in the prompt."""
    run_id: str
    agent: str
    setting: Setting
    event_id: str
    step_index: int
    rollout: int
    split: str
    cutoff: UtcDatetime
    conversation: int
    final: bool
    """The conversation that gave the final answer (the last of the step)."""
    forecast: Probabilities
    notebook_in: str | None = None
    """The notebook carried in, as the prompt showed it (``Notebook.text``)."""
    notebook_out: str | None = None
    rewards: StepRewards


class OpenAiRecord(Record):
    """One conversation in OpenAI's chat fine-tuning format: nothing but messages and tools
    (the source of each line is in the manifest)."""

    messages: tuple[OpenAiMessage, ...]
    tools: tuple[OpenAiTool, ...] | None = None


_RECORDS: dict[SftShape, type[SftRecord] | type[OpenAiRecord]] = {
    "messages": SftRecord,
    "openai": OpenAiRecord,
}


def sft_schema(shape: SftShape = "messages") -> dict[str, Any]:
    """The JSON Schema every line of an SFT export of ``shape`` satisfies."""
    return _RECORDS[shape].model_json_schema(mode="serialization")


def _text(notebook: Notebook | None) -> str | None:
    return None if notebook is None else notebook.text()


_Candidate = tuple[int, StepColumns, StepRow, tuple[str, str, str, int], StepRewards, float]
"""An admitted step kept: its position among them, its log and step (as the manifest reads
it), its (agent, setting, event, step), its rewards and its score."""


def _candidates(
    selected: Selected, score: RewardMetric, min_score: float | None
) -> tuple[list[_Candidate], dict[str, int]]:
    out: list[_Candidate] = []
    skipped = {"unusable": 0, "no_model_calls": 0, "no_score": 0, "below_min_score": 0}
    records = selected.runs.records()  # one full record at a time
    for n, ((log, row), step) in enumerate(zip(selected.steps, records, strict=True)):
        if not step.forecast.usable or step.scores.fallback_used:
            skipped["unusable"] += 1
            continue
        if not conversations(step.episode):
            skipped["no_model_calls"] += 1
            continue
        rewards = step_rewards(step.forecast, step.grading)
        value = rewards.value(score)
        if value is None:
            skipped["no_score"] += 1
            continue
        if min_score is not None and not value > min_score:
            skipped["below_min_score"] += 1
            continue
        key = (step.agent, step.setting, step.event_id, step.step_index)
        out.append((n, log, row, key, rewards, value))
    return out, {k: v for k, v in skipped.items() if v}


def _best(cands: list[_Candidate]) -> tuple[list[_Candidate], int]:
    """The best rollout of each (agent, setting, event, step); the first one on a tie."""
    best: dict[tuple[str, str, str, int], int] = {}
    for i, (_, _, _, key, _, value) in enumerate(cands):
        if key not in best or value > cands[best[key]][5]:
            best[key] = i
    chosen = sorted(best.values())
    return [cands[i] for i in chosen], len(cands) - len(chosen)


def _rows(
    shape: SftShape, step: StepRecord, rewards: StepRewards
) -> list[tuple[dict[str, Any], RowSource]]:
    rows = []
    for conv in conversations(step.episode):
        tools = tool_definitions(conv.call.tools)
        record: SftRecord | OpenAiRecord
        if shape == "openai":
            record = OpenAiRecord(
                messages=tuple(openai_message(m) for m in conv.messages), tools=tools or None
            )
            obj = record.model_dump(mode="json", exclude_none=True)
        else:
            record = SftRecord(
                messages=tuple(chat_message(m) for m in conv.messages),
                tools=json.dumps([t.model_dump(mode="json") for t in tools], ensure_ascii=False),
                **step_keys(step, SftRecord),
                conversation=conv.index,
                final=conv.final,
                forecast=step.forecast.probs,
                notebook_in=_text(step.episode.notebook_in),
                notebook_out=_text(step.episode.notebook_out),
                rewards=rewards,
            )
            obj = record.model_dump(mode="json")
        rows.append((obj, RowSource(**step_keys(step, RowSource), conversation=conv.index)))
    return rows


def export_sft(
    run_logs: Sequence[str | Path | StepColumns],
    out: str | Path,
    *,
    shape: SftShape = "messages",
    keep: Keep = "best",
    score: RewardMetric = "neg_brier",
    min_score: float | None = None,
    policy: SplitPolicy | None = None,
    datasets: Sequence[Dataset] = (),
) -> ExportManifest:
    """Write the chosen conversations of ``run_logs`` to ``out`` (JSONL) and its manifest.

    Raises ``FieldError`` for an unreadable log and ``FieldError`` when the guard refuses or
    nothing is left to export."""
    if shape not in _RECORDS:
        raise FieldError("", f"shape {shape!r}: expected one of {', '.join(_RECORDS)}")
    if keep not in ("best", "all"):
        raise FieldError("", f"keep {keep!r}: expected 'best' or 'all'")
    policy = policy or SplitPolicy()
    selected = select_steps(run_logs, policy, datasets)
    cands, skipped = _candidates(selected, score, min_score)
    if keep == "best":
        cands, not_best = _best(cands)
        if not_best:
            skipped["not_best"] = not_best
    if not cands:  # a kept step has a conversation, so a row: none kept is nothing to export
        found = ", ".join(f"{n} {why}" for why, n in skipped.items()) or "no steps"
        raise FieldError("", f"nothing to export: every admitted step was left out ({found})")
    sources: list[RowSource] = []  # filled as the rows are written, read by the manifest after

    def write(path: Path) -> int:  # a record at a time: memory bounded however long the logs
        keep = np.zeros(len(selected.runs), dtype=bool)
        keep[[c[0] for c in cands]] = True
        with path.open("w", encoding="utf-8") as fh:
            for step, cand in zip(selected.runs.where(keep).records(), cands, strict=True):
                for obj, source in _rows(shape, step, cand[4]):
                    fh.write(json.dumps(obj, ensure_ascii=False) + "\n")
                    sources.append(source)
        return len(sources)

    options: dict[str, Any] = {"keep": keep, "score": score, "min_score": min_score}
    return write_export(
        out,
        write,
        kind="sft",
        shape=shape,
        selected=selected,
        policy=policy,
        chosen=[(log, row) for _, log, row, _, _, _ in cands],
        options=options,
        skipped=skipped,
        sources=sources,
    )


def read_sft(path: str | Path) -> list[SftRecord | OpenAiRecord]:
    """Read and validate an SFT export (either shape: a line with ``run_id`` is a ``messages``
    record). Raises ``FieldError`` naming the file, line and field."""
    p = Path(path)
    out: list[SftRecord | OpenAiRecord] = []
    try:
        lines = read_text_file(p).splitlines()
    except OSError as exc:
        raise FieldError("", f"{p}: unreadable ({exc.strerror})") from None
    for lineno, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
            kind = SftRecord if isinstance(obj, dict) and "run_id" in obj else OpenAiRecord
            out.append(kind.model_validate(obj))
        except ValueError as exc:
            if isinstance(exc, ValidationError):
                raise FieldError("", first_problem(exc, f"{p}:{lineno}")) from None
            raise FieldError("", f"{p}:{lineno}: not valid JSON ({exc})") from None
    return out


def sft_messages(record: SftRecord | OpenAiRecord) -> tuple[Message, ...]:
    """The record's conversation as pastcast messages (as the run log has them)."""
    if isinstance(record, SftRecord):
        return tuple(from_chat_message(m) for m in record.messages)
    return from_openai_messages(record.messages)
