"""The root ``pastcast`` Typer application; sub-command groups live in their own modules."""

from __future__ import annotations

import typer

from pastcast.cli import _agents, _arena, _corpus, _data, _run, _score, _stats

app = typer.Typer(
    name="pastcast",
    help="Replay resolved prediction markets to benchmark forecasting agents without leaking "
    "the future.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
app.add_typer(_agents.app, name="agents")
app.add_typer(_arena.app, name="arena")
app.add_typer(_corpus.app, name="corpus")
app.add_typer(_data.app, name="data")
app.add_typer(_stats.app, name="stats")
app.command("demo")(_run.demo)
app.command("run")(_run.run)
app.command("score")(_score.score)


@app.callback()
def _root() -> None:
    """pastcast: replay resolved prediction markets as dated forecast episodes."""


def main() -> None:
    app()
