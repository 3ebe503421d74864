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
    _curate,
    _data,
    _export,
    _import,
    _plan,
    _report,
    _run,
    _score,
    _stats,
    _toolserver,
    _view,
)
from pastcast.cli._common import EXIT_FAILED, EXIT_USAGE, printable

DEBUG_ENV = "PASTCAST_DEBUG"


class _OneLineErrors(TyperGroup):
    """Every error is one ``error:`` line on stderr. A usage error of the parser (an unknown
    option, a value out of range) names the option and exits 2; a path the system refuses
    names the path and exits 1; any other exception no command anticipated exits 1
    (``PASTCAST_DEBUG=1`` shows its traceback instead)."""

    def main(
        self, args: Sequence[str] | None = None, *pos: Any, **kwargs: Any
    ) -> Any:  # typer's signature
        if not kwargs.get("standalone_mode", True):
            return super().main(args, *pos, **kwargs)
        kwargs["standalone_mode"] = False  # exceptions come here instead of typer's panels
        if args is not None and any("\x00" in a for a in args):  # never from a real shell
            typer.echo("error: an argument holds a NUL character", err=True)
            sys.exit(EXIT_USAGE)
        try:
            code = super().main(args, *pos, **kwargs)
        except BrokenPipeError:  # the reader went away (``| head``): nothing left to say
            sys.exit(EXIT_FAILED)
        except typer.Abort:
            typer.echo("error: aborted", err=True)
            sys.exit(EXIT_FAILED)
        except OSError as exc:  # a path the system refuses (too long, a device, ...): named
            name = "" if exc.filename is None else str(exc.filename)
            shown = name if len(name) <= 200 else name[:200] + "..."
            reason = exc.strerror or str(exc)
            line = f"error: {shown}: {reason}" if shown else f"error: {reason}"
            typer.echo(printable(line), err=True)
            sys.exit(EXIT_FAILED)
        except Exception as exc:
            parser_error = hasattr(exc, "format_message") and hasattr(exc, "exit_code")
            if parser_error and type(exc).__name__ == "NoArgsIsHelpError":
                exc.show()  # type: ignore[attr-defined]  # a bare group: its help
                sys.exit(exc.exit_code)  # type: ignore[attr-defined]
            if parser_error:
                message = " ".join(exc.format_message().split())  # type: ignore[attr-defined]
                ctx = getattr(exc, "ctx", None)
                see = f" (see {ctx.command_path} --help)" if ctx is not None else ""
                typer.echo(printable(f"error: {message}{see}"), err=True)
                sys.exit(exc.exit_code)  # type: ignore[attr-defined]
            if os.environ.get(DEBUG_ENV):
                raise
            first = (str(exc).strip().splitlines() or [""])[0]
            typer.echo(
                printable(
                    f"error: {type(exc).__name__}: {first} (set {DEBUG_ENV}=1 for the traceback)"
                ),
                err=True,
            )
            sys.exit(EXIT_FAILED)
        sys.exit(code if isinstance(code, int) else 0)


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
_data.app.command("curate")(_curate.curate)
app.add_typer(_export.app, name="export")
app.add_typer(_import.app, name="import")
app.add_typer(_stats.app, name="stats")
app.add_typer(_toolserver.app, name="toolserver")
app.command("demo")(_run.demo)
app.command("run")(_run.run)
app.command("plan")(_plan.plan)
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
