"""`pastcast import ...`: run logs from other tools' logs (Inspect)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from pastcast.cli._common import JsonFlag, fail, print_json

app = typer.Typer(no_args_is_help=True)  # its help: COMMANDS (_app)


@app.command("inspect-log")
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
