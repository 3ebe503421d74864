"""`pastcast toolserver serve`: one forecast step's episode served to an agent of any framework.

Over stdio (the Model Context Protocol's own transport: an MCP client starts this command and
talks to it on its stdin/stdout) or over HTTP on the loopback interface. The episode is built as
a run builds it, with its cutoff bound in the server; when the agent sends its forecast (or the
input ends), the episode's record is written to ``--record``.
"""

from __future__ import annotations

import contextlib
import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from pastcast.app import DATASET_SPEC_HELP, AppError, check_sandbox, open_dataset, open_replay
from pastcast.cli._common import EXIT_FAILED, fail, fail_app
from pastcast.cli._corpus import Retrieval
from pastcast.env import EnvConfig, ForecastEnv
from pastcast.models import resolve_model
from pastcast.owned import check_new_file, write_new_file
from pastcast.records import Termination
from pastcast.toolserver import EpisodeServer, HttpToolServer, serve_stdio

__all__ = ["app"]

app = typer.Typer(
    help="Serve a forecast step's tools to an agent of any framework (MCP or HTTP/JSON).",
    no_args_is_help=True,
)

_ENV = EnvConfig()


@app.command("serve")
def serve(
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
    python_tool: Annotated[
        bool, typer.Option("--python-tool", help="Offer the sandboxed python tool.")
    ] = False,
    max_tool_calls: Annotated[
        int, typer.Option("--max-tool-calls", help="Tool calls allowed in the episode.")
    ] = _ENV.max_tool_calls,
    max_model_calls: Annotated[
        int, typer.Option("--max-model-calls", help="Model calls allowed in the episode.")
    ] = _ENV.max_model_calls,
    rollout: Annotated[int, typer.Option("--rollout", help="Rollout number of the episode.")] = 0,
    record: Annotated[
        Path | None,
        typer.Option("--record", help="Write the forecast and the episode's record here (JSON)."),
    ] = None,
) -> None:
    """Serve one step's episode until the agent sends its forecast (or the input ends)."""
    config = EnvConfig(
        market_access=market_access,
        python_tool=python_tool,
        max_tool_calls=max_tool_calls,
        max_model_calls=max_model_calls,
    )
    try:
        check_sandbox(config, field="python_tool")
    except AppError as exc:
        fail_app(exc)
    if record is not None:
        try:
            check_new_file(record)
        except FileExistsError as exc:
            fail(f"--record {exc}")
        except OSError as exc:
            fail(f"--record {record}: cannot write there ({exc.strerror or exc})")
    served_model = None
    if model is not None:
        try:
            served_model = resolve_model(model)
        except ValueError as exc:
            fail(f"--model: {exc}")
    try:
        # the step is found before the replay opens (it may build the world's index)
        if step not in {s.step_index for s in open_dataset(dataset).steps_of(event)}:
            fail(f"--event {event!r} --step {step}: no such step in {dataset}")
        loaded = open_replay(dataset, corpus, retrieval, index_dir=index_dir)
    except AppError as exc:
        fail_app(exc, {"out": "--index-dir"})
    with loaded:
        steps = {s.step_index: s for s in loaded.dataset.steps_of(event)}
        env = ForecastEnv(loaded.dataset, loaded.backend, config)
        try:
            episode = env.reset(steps[step], rollout=rollout)
        except ValueError as exc:
            fail(f"--step {step}: {exc}")
        server = EpisodeServer(episode, served_model)
        if http:
            web = HttpToolServer(server, port=port)
            typer.echo(f"serving {event}#{step} at {web.url} (token {web.token})", err=True)
            with contextlib.suppress(KeyboardInterrupt):  # stopping by hand still writes --record
                web.serve_until_finished()
        else:
            serve_stdio(server, sys.stdin.buffer, sys.stdout.buffer)
    if record is not None:
        termination: Termination = "forecast" if server.forecast is not None else "error"
        if server.forecast is None and server.budget is not None:
            termination = "tool_budget" if server.budget.kind == "tool" else "model_budget"
        forecast = server.forecast
        body = {
            "forecast": None if forecast is None else forecast.model_dump(mode="json"),
            "episode": episode.record(termination).model_dump(mode="json"),
        }
        try:
            write_new_file(record, json.dumps(body, ensure_ascii=False, indent=1).encode("utf-8"))
        except FileExistsError as exc:
            fail(f"--record {exc}", EXIT_FAILED)
        except OSError as exc:
            fail(f"--record {record}: cannot write it ({exc.strerror or exc})", EXIT_FAILED)
