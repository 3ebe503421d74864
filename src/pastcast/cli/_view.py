"""`pastcast view RUN_DIR...`: a local, read-only web dashboard of run logs."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer

from pastcast.cli._common import fail, load_dataset_option, note
from pastcast.cli._report import EXTRA_HINT
from pastcast.cli._score import DatasetOpt
from pastcast.dataset import Dataset
from pastcast.runlog import RunLogError, read_run_log
from pastcast.serving import listen, serve_app

LOOPBACK = ("127.0.0.1", "localhost", "::1")


def view(
    run_dirs: Annotated[
        list[Path],
        typer.Argument(help="Run directories (every run log under them) or run log files."),
    ],
    port: Annotated[int, typer.Option("--port", min=1, max=65535, help="Port to serve on.")] = 8000,
    host: Annotated[
        str,
        typer.Option("--host", help="Address to bind (default: this machine only)."),
    ] = "127.0.0.1",
    dataset: DatasetOpt = None,
) -> None:
    """Serve the dashboard: leaderboard with filters, event pages (market curve, every forecast,
    the outcome) and trajectories (messages, tool calls, documents with their dates against the
    cutoff, notebook diffs, cost and latency per call). Read-only; Ctrl-C stops it."""
    try:
        import uvicorn  # noqa: F401  (serve_app's)

        from pastcast.reports.dashboard import RunIndex, create_app, find_run_logs
    except ImportError as exc:
        fail(f"pastcast view needs the reports extra ({exc.name} is missing): {EXTRA_HINT}")
    try:
        paths = find_run_logs(run_dirs)
    except ValueError as err:
        fail(str(err))
    try:
        sock = listen(host, port)  # before the indexing: a busy port is known at once
    except ValueError as exc:
        fail(f"--host/--port: {exc}")
    started = time.perf_counter()
    try:
        logs = [read_run_log(p) for p in paths]
    except RunLogError as err:
        fail(str(err))
    data: Dataset | None = None
    if dataset is not None:
        data = load_dataset_option(dataset)
        for log in logs:
            if log.header.dataset_id != data.id:
                fail(
                    f"--dataset {dataset!r} is dataset {data.id!r}, but {log.path} ran on "
                    f"{log.header.dataset_id!r}"
                )
    if not any(log.steps for log in logs):
        fail("no forecast steps in " + ", ".join(str(p) for p in paths))
    index = RunIndex(logs, data)
    app = create_app(index)
    note(
        f"indexed {len(index)} forecast steps from {len(logs)} run log(s) in "
        f"{time.perf_counter() - started:.1f} s",
        False,
    )
    if host not in LOOPBACK:
        note(
            f"warning: serving on {host} shows the run logs to every machine that reaches it", False
        )
    shown = f"[{host}]" if ":" in host else host
    note(f"dashboard: http://{shown}:{port}/ (Ctrl-C to stop)", False)
    serve_app(app, sock)
