"""`pastcast export ...`: training data and tables from run logs (``pastcast.train``).

Chat and reward exports read training-split steps only: ``--split`` selects others (``unsplit``
for datasets without a split, such as the embedded world) and an evaluation split needs
``--force-eval``. Every export writes ``FILE.manifest.json`` beside the file.

`pastcast import ...` turns other tools' logs (Inspect's) into run logs; `pastcast train sft`
runs the fine-tuning study (Forecast-Dojo 5.5, Table 4) end to end.
"""

from __future__ import annotations

import textwrap
from functools import partial
from pathlib import Path
from typing import Annotated, Literal

import typer

from pastcast.app import DATASET_SPEC_HELP, FinetunePlan, export_runs, finetune
from pastcast.cli._common import (
    JsonFlag,
    call_with_params,
    fail,
    fail_app,
    fail_field,
    field_errors,
    field_option,
    note,
    options_record,
    print_json,
    table_console,
    undone_on_usage_error,
)
from pastcast.cli._score import FallbackOpt, RunLogsArg, print_notes
from pastcast.errors import FieldError
from pastcast.reports import comparison_table, to_rich
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


import_app = typer.Typer(no_args_is_help=True)  # its help: COMMANDS (_app)


@import_app.command("inspect-log")
def inspect_log(
    log: Annotated[Path, typer.Argument(help="Inspect log of pastcast/forecast (.eval or .json).")],
    out: Annotated[
        Path, typer.Option("--out", help="Run log to write (steps it lacks are appended).")
    ] = Path("runs/inspect/run.jsonl"),
    as_json: JsonFlag = False,
) -> None:
    """Convert an Inspect log of the pastcast/forecast task into a run log that `pastcast
    score` and the reports read (epochs become rollouts)."""
    try:
        from pastcast.errors import FieldError
        from pastcast.integrations.inspect import import_inspect_log
    except ImportError as exc:
        fail(f"inspect-log: needs the inspect extra (pip install 'pastcast[inspect]'): {exc}")
    try:
        result = import_inspect_log(log, out)
    except FieldError as exc:
        fail(str(exc))
    if as_json:
        print_json(
            {
                "run_log": str(result.path),
                "run_id": result.run_id,
                "written": result.written,
                "skipped": result.skipped,
            }
        )
    else:
        typer.echo(
            f"{result.path}: {result.written} steps written from {log} (run {result.run_id}); "
            f"{result.skipped} samples without a forecast skipped"
        )


train_app = typer.Typer(no_args_is_help=True)  # its help: COMMANDS (_app)
_field = partial(field_option, FinetunePlan)


@train_app.command("sft")
def train_sft(
    ctx: typer.Context,
    run_logs: Annotated[
        list[Path], typer.Argument(help="Run logs whose training-split trajectories are learnt.")
    ],
    out: Annotated[Path, _field("out", "--out")],
    dataset: Annotated[str, _field("dataset", "--dataset")],
    base: Annotated[str, _field("base", "--base")] = "tiny",
    keep: Annotated[Literal["best", "all"], _field("keep")] = "best",
    epochs: Annotated[float, _field("epochs", min=0.0)] = 1.0,
    max_steps: Annotated[int | None, _field("max_steps", min=1)] = None,
    max_length: Annotated[int, _field("max_length", min=16)] = 2048,
    batch_size: Annotated[int, _field("batch_size", min=1)] = 4,
    learning_rate: Annotated[float, _field("learning_rate")] = 1e-5,
    seed: Annotated[int, _field("seed")] = 0,
    split: Annotated[str, _field("split")] = "eval",
    corpus: Annotated[str | None, _field("corpus", "--corpus")] = None,
    retrieval: Annotated[str | None, _field("retrieval")] = None,
    embedder: Annotated[str | None, _field("embedder")] = None,
    max_events: Annotated[int | None, _field("max_events", min=1)] = None,
    rollouts: Annotated[int | None, _field("rollouts", min=1)] = None,
    max_new_tokens: Annotated[int, _field("max_new_tokens", min=1)] = 512,
    preset: Annotated[str | None, _field("preset")] = None,
    as_json: JsonFlag = False,
) -> None:
    """Export the training split of RUN_LOGS, fine-tune the base model on it with TRL (CPU),
    run the base and the tuned model on the held-out split of --dataset, and print Table 4:
    Brier, accuracy, log loss, tool calls and parser acceptance, with the paired differences."""
    plan = options_record(ctx, FinetunePlan, {"as_json": None})
    with undone_on_usage_error(out):  # a refused study leaves no folder behind
        try:
            made = finetune(plan, progress=not as_json)
        except FieldError as exc:
            fail_field(exc, {"run_logs": "RUN_LOGS"})
    if as_json:
        print_json(made.as_dict())
        return
    losses = made.training.losses
    typer.echo(
        f"trained {made.training.model} on {made.training.rows} conversations: "
        f"{len(losses)} steps, loss {losses[0]:.3f} -> {losses[-1]:.3f}"
        if losses
        else f"trained {made.training.model}: no logged step"
    )
    typer.echo("seconds: " + ", ".join(f"{k} {v:.1f}" for k, v in made.seconds.items()))
    table = comparison_table(made.compared.comparison, made.compared.title())
    console = table_console()
    console.print(to_rich(table, console.width))
    typer.echo(textwrap.fill(table.note, console.width))
