"""Exports of run logs for training and analysis (``pastcast.train``): chat fine-tuning
records, per-step rewards and the Parquet table of forecasts, from the runs read once; and the
runs split by agent, for exports that write one file per agent (Inspect's eval logs)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pastcast.app._fields import as_field
from pastcast.app._open import open_dataset
from pastcast.app._reading import RunsRead, read_runs
from pastcast.dataset import Dataset
from pastcast.errors import FieldError, within
from pastcast.owned import check_makeable, check_replaceable
from pastcast.runlog import AgentSpec, StepColumns, StepRecord
from pastcast.scoring import Convention, Fallback

if TYPE_CHECKING:  # the training package loads with the first export
    from pastcast.train import ExportManifest, Keep, RewardMetric, SftShape

ExportTarget = Literal["sft", "rewards", "table"]


@dataclass(frozen=True)
class Exported:
    """The file written, its manifest and the runs it came from."""

    out: Path
    manifest: ExportManifest
    read: RunsRead
    """The runs read through their step columns (the chat and reward exports stream each full
    record they need by offset)."""

    @property
    def manifest_file(self) -> Path:
        from pastcast.train import manifest_path

        return manifest_path(self.out)


def export_runs(
    target: ExportTarget,
    run_logs: Sequence[str | Path],
    out: str | Path,
    *,
    datasets: Sequence[str | Path | Dataset] | None = (),
    splits: Sequence[str] | None = ("train",),
    force_eval: bool = False,
    fallback: Convention = "uniform",
    shape: SftShape = "messages",
    keep: Keep = "best",
    score: RewardMetric = "neg_brier",
    min_score: float | None = None,
    metric: RewardMetric = "neg_brier",
    format_penalty: float = 1.0,
) -> Exported:
    """Write ``target`` (``sft``, ``rewards`` or ``table``) of ``run_logs`` to ``out`` with its
    manifest beside it, as `pastcast export` does (docs/training.md; the options are its
    parameters). ``out`` may replace only a file an earlier export wrote."""
    from pastcast.train import SplitPolicy, export_rewards, export_sft, export_table, manifest_path

    policy = None
    if target != "table":
        with within("splits"):
            policy = SplitPolicy(splits=tuple(splits or ("train",)), force_eval=force_eval)
    if target == "rewards" and fallback == "exclude":
        raise FieldError("fallback", "a reward export scores every step: uniform or worst")
    opened = [open_dataset(d, field=f"datasets[{i}]") for i, d in enumerate(datasets or ())]
    # A file an earlier export wrote (its manifest beside it) may be replaced; nothing else.
    # Its folder is made only when the export is written (a refused export leaves none).
    path = Path(out)
    if path.exists() or path.is_symlink():
        if not path.is_file() or path.is_symlink():
            raise FieldError("out", f"{path}: exists and is not a regular file")
        if not manifest_path(path).is_file():
            raise FieldError(
                "out", f"{path}: exists and was not written by pastcast; not replacing it"
            )
    with as_field("out", NotADirectoryError):
        check_makeable(path)
    if target == "table":  # the step columns are enough
        from pastcast.train import TABLE_COLUMNS_READ

        columns = read_runs(run_logs, columns=TABLE_COLUMNS_READ, require_steps=False)
        with within("run_logs"):
            manifest = export_table(columns.logs, path, fallback=fallback, datasets=opened)
        return Exported(path, manifest, columns)
    from pastcast.train import SOURCE_COLUMNS

    # the guard and the manifest read the step columns; each record is streamed by offset
    read = read_runs(run_logs, columns=SOURCE_COLUMNS, require_steps=False)
    logs = list(read.logs)
    with within("run_logs"):
        if target == "sft":
            manifest = export_sft(
                logs,
                path,
                shape=shape,
                keep=keep,
                score=score,
                min_score=min_score,
                policy=policy,
                datasets=opened,
            )
        else:  # rewards
            reward_fallback: Fallback = "worst" if fallback == "worst" else "uniform"
            manifest = export_rewards(
                logs,
                path,
                metric=metric,
                format_penalty=format_penalty,
                fallback=reward_fallback,
                policy=policy,
                datasets=opened,
            )
    return Exported(path, manifest, read)


@dataclass(frozen=True)
class AgentRun:
    """The forecasts of one agent and setting in one run, in log order."""

    log: StepColumns
    spec: AgentSpec
    rows: tuple[int, ...]
    """The group's rows of the log's step columns."""

    def steps(self) -> Iterator[StepRecord]:
        """The group's full records, read by offset one at a time."""
        return self.log.stream(self.rows)


@dataclass(frozen=True)
class RunsByAgent:
    read: RunsRead
    groups: tuple[AgentRun, ...]
    out: Path
    """The folder to write, checked: absent, empty, or one pastcast made as ``kind``."""


def _spec(log: StepColumns, agent: str, setting: str, role: str) -> AgentSpec:
    for spec in log.header.agents:
        if spec.name == agent and spec.setting == setting:
            return spec
    # a log written before headers named every agent: the spec its steps imply
    return AgentSpec.model_validate(
        {"name": agent, "factory": agent, "role": role, "setting": setting}
    )


def runs_by_agent(
    run_logs: Sequence[str | Path],
    out: str | Path,
    *,
    kind: str,
    dataset: str | Path | Dataset | None = None,
) -> RunsByAgent:
    """The forecasts of ``run_logs`` (each once, see ``read_runs``) per run, agent and setting,
    and ``out`` checked as a folder of ``kind`` pastcast may write (``FieldError`` naming
    ``out`` otherwise, nothing written)."""
    target = Path(out)
    with as_field("out", FileExistsError):
        check_replaceable(target, kind)
    read = read_runs(run_logs, dataset, columns=("role",))
    groups: list[AgentRun] = []
    for log in read.logs:
        cols = log.table.select(["agent", "setting", "role"]).to_pydict()
        by: dict[tuple[str, str], list[int]] = {}
        roles: dict[tuple[str, str], str] = {}
        for i, (agent, setting, role) in enumerate(
            zip(cols["agent"], cols["setting"], cols["role"], strict=True)
        ):
            by.setdefault((agent, setting), []).append(i)
            roles.setdefault((agent, setting), role)
        for (agent, setting), rows in by.items():
            spec = _spec(log, agent, setting, roles[agent, setting])
            groups.append(AgentRun(log, spec, tuple(rows)))
    return RunsByAgent(read, tuple(groups), target)
