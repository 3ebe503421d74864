"""The root ``pastcast`` Typer application; sub-command groups live in their own modules."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from pastcast.cli import (
    _agents,
    _arena,
    _audit,
    _corpus,
    _data,
    _export,
    _import,
    _report,
    _run,
    _score,
    _stats,
    _toolserver,
    _view,
)
from pastcast.cli._common import EXIT_FAILED

DEBUG_ENV = "PASTCAST_DEBUG"


class _OneLineErrors(TyperGroup):
    """Turns an exception no command anticipated into one ``error:`` line and exit code 1
    (``PASTCAST_DEBUG=1`` shows the traceback instead). Usage errors are typer's: exit 2."""

    def main(
        self, args: Sequence[str] | None = None, *pos: Any, **kwargs: Any
    ) -> Any:  # typer's signature
        try:
            return super().main(args, *pos, **kwargs)
        except Exception as exc:  # standalone mode has already handled typer's own exceptions
            if os.environ.get(DEBUG_ENV) or not kwargs.get("standalone_mode", True):
                raise
            first = (str(exc).strip().splitlines() or [""])[0]
            typer.echo(
                f"error: {type(exc).__name__}: {first} (set {DEBUG_ENV}=1 for the traceback)",
                err=True,
            )
            sys.exit(EXIT_FAILED)


def _version(value: bool) -> None:
    if value:
        from pastcast import __version__

        typer.echo(f"pastcast {__version__}")
        raise typer.Exit()


app = typer.Typer(
    name="pastcast",
    cls=_OneLineErrors,
    help="Replay resolved prediction markets to benchmark forecasting agents without leaking "
    "the future.",
    epilog="Exit codes: 0 success, 2 usage error (nothing done), 1 failed run.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
app.add_typer(_agents.app, name="agents")
app.add_typer(_arena.app, name="arena")
app.add_typer(_audit.app, name="audit")
app.add_typer(_corpus.app, name="corpus")
app.add_typer(_data.app, name="data")
app.add_typer(_export.app, name="export")
app.add_typer(_import.app, name="import")
app.add_typer(_stats.app, name="stats")
app.add_typer(_toolserver.app, name="toolserver")
app.command("demo")(_run.demo)
app.command("run")(_run.run)
app.command("score")(_score.score)
app.command("report")(_report.report)
app.command("view")(_view.view)


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """pastcast: replay resolved prediction markets as dated forecast episodes."""


def main() -> None:
    app()
