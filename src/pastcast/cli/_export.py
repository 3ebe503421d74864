"""`pastcast export ...`: training data and tables from run logs (``pastcast.train``).

Chat and reward exports read training-split steps only: ``--split`` selects others (``unsplit``
for datasets without a split, such as the embedded world) and an evaluation split needs
``--force-eval``. Every export writes ``FILE.manifest.json`` beside the file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from pastcast.app import DATASET_SPEC_HELP, export_runs
from pastcast.cli._common import (
    JsonFlag,
    call_with_params,
    fail,
    fail_app,
    field_errors,
    note,
    print_json,
)
from pastcast.cli._score import FallbackOpt, RunLogsArg, print_notes
from pastcast.scoring import Fallback
from pastcast.train import Keep, RewardMetric, SftShape

app = typer.Typer(no_args_is_help=True)  # its help: COMMANDS (_app)

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
        help=f"The dataset behind the run logs ({DATASET_SPEC_HELP}; repeatable): its content "
        "hash goes into the manifest and the recorded splits are checked against it. The "
        "embedded world is found from its id without it.",
    ),
]
ScoreOpt = Annotated[
    RewardMetric,
    typer.Option("--score", help="The score that ranks rollouts and --min-score compares."),
]


OPTIONS = {"run_logs": "", "datasets": "--dataset", "splits": "--split", "out": "--out"}


def _export(ctx: typer.Context, target: str, as_json: bool) -> None:
    """``export_runs`` of ``target`` with the command's parameters, and what it wrote."""
    with field_errors(OPTIONS, fail_app):
        made = call_with_params(ctx, export_runs, target)
    print_notes(made.read)
    manifest, out = made.manifest, made.out
    if as_json:
        print_json(
            {"out": str(out), "manifest": str(made.manifest_file)}
            | manifest.model_dump(mode="json", exclude={"sources"})
        )
        return
    left = ", ".join(f"{n} {s}" for s, n in manifest.left_out.items())
    skipped = ", ".join(f"{n} {why}" for why, n in manifest.skipped.items())
    note(
        f"wrote {manifest.rows} rows to {out} (splits {', '.join(manifest.splits)}"
        + (f"; left out by split: {left}" if left else "")
        + (f"; skipped: {skipped}" if skipped else "")
        + f"); manifest {made.manifest_file}",
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
    ctx: typer.Context,
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
    splits: SplitOpt = None,
    force_eval: ForceEvalOpt = False,
    datasets: DatasetOpt = None,
    as_json: JsonFlag = False,
) -> None:
    """Chat fine-tuning records of usable forecasts, one per model conversation.

    Each record holds the system and user prompts, the assistant turns with their tool calls,
    the tool results and the final answer (with the notebook)."""
    _export(ctx, "sft", as_json)


@app.command("rewards")
def rewards(
    ctx: typer.Context,
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
    splits: SplitOpt = None,
    force_eval: ForceEvalOpt = False,
    datasets: DatasetOpt = None,
    as_json: JsonFlag = False,
) -> None:
    """Per-step records with outcome feedback, for reward-based training.

    Negative Brier, log score, accuracy, information-alpha and a format penalty, with the
    conversation as prompt and completion."""
    _export(ctx, "rewards", as_json)


@app.command("table")
def table(
    ctx: typer.Context,
    run_logs: RunLogsArg,
    out: OutOpt,
    fallback: FallbackOpt = "uniform",
    datasets: DatasetOpt = None,
    as_json: JsonFlag = False,
) -> None:
    """One Parquet row per forecast of every split, for pandas, polars, DuckDB and datasets.

    Keys, forecast, grading, every score and usage."""
    _export(ctx, "table", as_json)


@app.command("inspect")
def inspect_logs(
    run_logs: RunLogsArg,
    out: Annotated[Path, typer.Option("--out", help="The folder to write the Inspect logs into.")],
    dataset: Annotated[
        str | None,
        typer.Option(
            "--dataset",
            help=f"The dataset the runs used ({DATASET_SPEC_HELP}): each sample's input is then "
            "the question exactly as the agent was shown it.",
        ),
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Inspect eval logs for `inspect view`: one per run, agent and setting, a sample per
    forecast step with its messages, tool calls, scores and metadata.

    `pastcast import inspect-log` reads each back into the same forecasts and scores."""
    try:
        from pastcast.integrations.inspect import export_inspect_logs
    except ImportError as exc:
        fail(f"needs the inspect extra (pip install 'pastcast[inspect]'): {exc}")
    with field_errors({**OPTIONS, "dataset": "--dataset"}, fail_app):
        made = export_inspect_logs(run_logs, out, dataset=dataset)
    print_notes(made.read)
    if as_json:
        print_json(
            {"out": str(made.out), "logs": [str(p) for p in made.logs], "samples": made.samples}
        )
        return
    note(
        f"wrote {len(made.logs)} Inspect log(s) with {made.samples} samples to {made.out}; "
        f"open them with: inspect view --log-dir {made.out}",
        as_json,
    )
