"""`pastcast view RUN_DIR...`: a local, read-only web dashboard of run logs."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer

from pastcast.app import REPORTS_EXTRA_HINT, dashboard
from pastcast.cli._common import fail, fail_app, note
from pastcast.cli._score import OPTIONS, DatasetOpt, print_notes
from pastcast.errors import FieldError
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
    arena: Annotated[
        Path | None,
        typer.Option(
            "--arena",
            help="An arena replay's folder whose rounds get a page, for the arena's "
            "report-section plugin (the pastcast-arena distribution; found by itself beside a "
            "run log an arena replay wrote).",
        ),
    ] = None,
) -> None:
    """Serve the dashboard: leaderboard with filters, event pages (market curve, every forecast,
    the outcome) and trajectories (messages, tool calls, documents with their dates against the
    cutoff, notebook diffs, cost and latency per call). Read-only; Ctrl-C stops it."""
    try:
        sock = listen(host, port)  # before the indexing: a busy port is known at once
    except ValueError as exc:
        fail(f"--host/--port: {exc}")
    started = time.perf_counter()
    try:
        import uvicorn  # noqa: F401  (serve_app's)

        board = dashboard(run_dirs, dataset, None if arena is None else {"arena": arena})
    except ImportError as exc:
        sock.close()
        fail(f"pastcast view needs the reports extra ({exc.name} is missing): {REPORTS_EXTRA_HINT}")
    except FieldError as exc:
        sock.close()
        if not exc.field:  # the reports extra is missing
            fail(f"pastcast view needs {exc.reason.removeprefix('the dashboard needs ')}")
        fail_app(exc, OPTIONS)
    print_notes(board)
    note(
        f"indexed {len(board.index)} forecast steps from {len(board.read.logs)} run log(s) in "
        f"{time.perf_counter() - started:.1f} s",
        False,
    )
    if host not in LOOPBACK:
        note(
            f"warning: serving on {host} shows the run logs to every machine that reaches it", False
        )
    shown = f"[{host}]" if ":" in host else host
    note(f"dashboard: http://{shown}:{port}/ (Ctrl-C to stop)", False)
    serve_app(board.app, sock)
