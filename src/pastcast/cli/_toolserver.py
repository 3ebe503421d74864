"""`pastcast toolserver serve`: one forecast step's episode served to an agent of any framework
(``pastcast.app.serve_episode``): over stdio (an MCP client starts this command and talks to it
on its stdin/stdout) or over HTTP on the loopback interface; the forecast and the episode's
record are written to ``--record``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from pastcast.app import DATASET_SPEC_HELP, serve_episode
from pastcast.cli._common import EXIT_FAILED, call_with_params, fail, fail_app
from pastcast.cli._corpus import Retrieval
from pastcast.cli._run import MaxModelCallsOpt, MaxToolCallsOpt, PythonToolOpt
from pastcast.env import EnvConfig
from pastcast.errors import FieldError

__all__ = ["app"]

app = typer.Typer(no_args_is_help=True)  # its help: COMMANDS (_app)

_ENV = EnvConfig()


@app.command("serve")
def serve(
    ctx: typer.Context,
    event: Annotated[str, typer.Option("--event", help="Event id of the step to serve.")],
    step: Annotated[int, typer.Option("--step", help="Step index of that event.")] = 0,
    dataset: Annotated[
        str, typer.Option("--dataset", help=f"The dataset: {DATASET_SPEC_HELP}.")
    ] = "world",
    corpus: Annotated[
        str | None,
        typer.Option("--corpus", help="Corpus: an index directory or a PostgreSQL URL."),
    ] = None,
    retrieval: Retrieval = "bm25",
    index_dir: Annotated[
        Path, typer.Option("--index-dir", help="Where the embedded world keeps its index.")
    ] = Path("runs/index"),
    http: Annotated[
        bool, typer.Option("--http", help="Serve HTTP/JSON on the loopback instead of stdio.")
    ] = False,
    port: Annotated[int, typer.Option("--port", help="HTTP port (0: any free one).")] = 0,
    model: Annotated[
        str | None,
        typer.Option("--model", help="Model the agent may call through the server (SPEC)."),
    ] = None,
    market_access: Annotated[
        bool, typer.Option("--market-access", help="Offer the market price history tool.")
    ] = False,
    python_tool: PythonToolOpt = _ENV.python_tool,
    max_tool_calls: MaxToolCallsOpt = _ENV.max_tool_calls,
    max_model_calls: MaxModelCallsOpt = _ENV.max_model_calls,
    rollout: Annotated[int, typer.Option("--rollout", help="Rollout number of the episode.")] = 0,
    record: Annotated[
        Path | None,
        typer.Option("--record", help="Write the forecast and the episode's record here (JSON)."),
    ] = None,
) -> None:
    """Serve one step's episode until the agent sends its forecast (or the input ends)."""
    env = ("market_access", "python_tool", "max_tool_calls", "max_model_calls")
    config = EnvConfig(**{name: ctx.params.pop(name) for name in env})  # the rest: the step's
    try:
        call_with_params(ctx, serve_episode, env=config, notes=lambda s: typer.echo(s, err=True))
    except FieldError as exc:
        fail_app(exc, {"out": "--index-dir"})
    except FileExistsError as exc:
        fail(f"--record {exc}", EXIT_FAILED)
    except OSError as exc:
        fail(f"--record {record}: cannot write it ({exc.strerror or exc})", EXIT_FAILED)
