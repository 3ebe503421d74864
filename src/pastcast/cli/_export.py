"""`pastcast export ...`: training data and tables from run logs (``pastcast.train``).

Chat and reward exports read training-split steps only: ``--split`` selects others (``unsplit``
for datasets without a split, such as the embedded world) and an evaluation split needs
``--force-eval``. Every export writes ``FILE.manifest.json`` beside the file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from pastcast.cli._common import (
    JsonFlag,
    fail,
    load_dataset_option,
    note,
    output_file,
    print_json,
)
from pastcast.cli._score import FallbackOpt, RunLogsArg
from pastcast.dataset import Dataset
from pastcast.runlog import RunLogError
from pastcast.scoring import Fallback
from pastcast.train import (
    ExportError,
    ExportManifest,
    Keep,
    RewardMetric,
    SftShape,
    SplitPolicy,
    export_rewards,
    export_sft,
    export_table,
    manifest_path,
)

app = typer.Typer(
    help="Export run logs for training and analysis: chat fine-tuning records, per-step "
    "rewards, a Parquet table of forecasts. Each file gets a manifest beside it.",
    no_args_is_help=True,
)

OutOpt = Annotated[Path, typer.Option("--out", help="The file to write.")]
SplitOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--split",
        help="Export steps of this split (repeatable; default: train). 'unsplit' selects "
        "events of datasets without a split, such as the embedded world.",
    ),
]
ForceEvalOpt = Annotated[
    bool,
    typer.Option("--force-eval", help="Allow exporting evaluation splits (refused otherwise)."),
]
DatasetOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--dataset",
        help="A dataset directory or 'world[:SEED]' behind the run logs (repeatable): its content "
        "hash goes into the manifest and the recorded splits are checked against it. The "
        "embedded world is found from its id without it.",
    ),
]
ScoreOpt = Annotated[
    RewardMetric,
    typer.Option("--score", help="The score that ranks rollouts and --min-score compares."),
]


def _datasets(specs: list[str] | None) -> list[Dataset]:
    return [load_dataset_option(spec, "--dataset") for spec in specs or ()]


def _policy(split: list[str] | None, force_eval: bool) -> SplitPolicy:
    try:
        return SplitPolicy(splits=tuple(split or ("train",)), force_eval=force_eval)
    except ExportError as exc:
        fail(f"--split: {exc}")


def _checked_out(out: Path) -> Path:
    """A file an earlier export wrote (its manifest beside it) may be replaced; nothing else."""
    return output_file(out, "--out", made_by_pastcast=manifest_path(out).is_file())


def _report(manifest: ExportManifest, out: Path, as_json: bool) -> None:
    if as_json:
        print_json(
            {"out": str(out), "manifest": str(manifest_path(out))}
            | manifest.model_dump(mode="json", exclude={"sources"})
        )
        return
    left = ", ".join(f"{n} {s}" for s, n in manifest.left_out.items())
    skipped = ", ".join(f"{n} {why}" for why, n in manifest.skipped.items())
    note(
        f"wrote {manifest.rows} rows to {out} (splits {', '.join(manifest.splits)}"
        + (f"; left out by split: {left}" if left else "")
        + (f"; skipped: {skipped}" if skipped else "")
        + f"); manifest {manifest_path(out)}",
        as_json,
    )
    for ref in manifest.datasets:
        if ref.content_hash is None:
            note(
                f"note: dataset {ref.dataset_id} was not at hand: pass --dataset to record its "
                "content hash and check the splits",
                as_json,
            )


@app.command("sft")
def sft(
    run_logs: RunLogsArg,
    out: OutOpt,
    shape: Annotated[
        SftShape,
        typer.Option(
            "--shape",
            help="'messages': TRL's SFT trainer and datasets (tools as JSON text, the step's "
            "keys, forecast, notebook and rewards); 'openai': OpenAI's chat fine-tuning format.",
        ),
    ] = "messages",
    keep: Annotated[
        Keep,
        typer.Option("--keep", help="The best rollout of each step (by --score), or all."),
    ] = "best",
    score: ScoreOpt = "neg_brier",
    min_score: Annotated[
        float | None,
        typer.Option("--min-score", help="Keep only forecasts whose --score beats this."),
    ] = None,
    split: SplitOpt = None,
    force_eval: ForceEvalOpt = False,
    dataset: DatasetOpt = None,
    as_json: JsonFlag = False,
) -> None:
    """Chat fine-tuning records of usable forecasts, one per model conversation.

    Each record holds the system and user prompts, the assistant turns with their tool calls,
    the tool results and the final answer (with the notebook)."""
    policy = _policy(split, force_eval)
    datasets = _datasets(dataset)
    try:
        manifest = export_sft(
            run_logs,
            _checked_out(out),
            shape=shape,
            keep=keep,
            score=score,
            min_score=min_score,
            policy=policy,
            datasets=datasets,
        )
    except (RunLogError, ExportError) as exc:
        fail(str(exc))
    _report(manifest, out, as_json)


@app.command("rewards")
def rewards(
    run_logs: RunLogsArg,
    out: OutOpt,
    metric: Annotated[
        RewardMetric, typer.Option("--metric", help="The score that becomes 'reward'.")
    ] = "neg_brier",
    format_penalty: Annotated[
        float,
        typer.Option(
            "--format-penalty", min=0.0, help="Subtracted from the reward of an unusable forecast."
        ),
    ] = 1.0,
    fallback: Annotated[
        Fallback,
        typer.Option("--fallback", help="How an unusable forecast is scored: uniform or worst."),
    ] = "uniform",
    split: SplitOpt = None,
    force_eval: ForceEvalOpt = False,
    dataset: DatasetOpt = None,
    as_json: JsonFlag = False,
) -> None:
    """Per-step records with outcome feedback, for reward-based training.

    Negative Brier, log score, accuracy, information-alpha and a format penalty, with the
    conversation as prompt and completion."""
    policy = _policy(split, force_eval)
    datasets = _datasets(dataset)
    try:
        manifest = export_rewards(
            run_logs,
            _checked_out(out),
            metric=metric,
            format_penalty=format_penalty,
            fallback=fallback,
            policy=policy,
            datasets=datasets,
        )
    except (RunLogError, ExportError) as exc:
        fail(str(exc))
    _report(manifest, out, as_json)


@app.command("table")
def table(
    run_logs: RunLogsArg,
    out: OutOpt,
    fallback: FallbackOpt = "uniform",
    dataset: DatasetOpt = None,
    as_json: JsonFlag = False,
) -> None:
    """One Parquet row per forecast of every split, for pandas, polars, DuckDB and datasets.

    Keys, forecast, grading, every score and usage."""
    datasets = _datasets(dataset)
    try:
        manifest = export_table(run_logs, _checked_out(out), fallback=fallback, datasets=datasets)
    except (RunLogError, ExportError) as exc:
        fail(str(exc))
    _report(manifest, out, as_json)
