"""The root ``pastcast`` Typer application; sub-command groups live in their own modules.

The command modules are imported only when a command is used (or listed with its own help):
between them they import nearly the whole package, numpy, pydantic and pyarrow included, which
took ~0.5 s before ``pastcast --help`` could print a line. The root help lists each command from
``COMMANDS`` below, whose line is the start of the command's own help (tested).

Installed plugins add commands through the entry-point group ``pastcast.commands`` (the arena's,
from the ``pastcast-arena`` distribution): an entry point names the command (a Typer app or a
command function), imported when it runs. The root help lists it by its distribution's summary,
read from the metadata: listing imports no plugin.
"""

from __future__ import annotations

import atexit
import functools
import gc
import importlib
import os
import sys
import warnings
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Annotated, Any, TextIO

import click
import typer
from typer.core import TyperCommand, TyperGroup

from pastcast.cli._common import EXIT_FAILED, EXIT_USAGE, printable
from pastcast.collector import collector_paused

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

DEBUG_ENV = "PASTCAST_DEBUG"


COMMANDS: dict[str, str] = {
    # name: the root help's line (a group's whole help, a command function's the first
    # paragraph of its docstring). The command is ``NAME_app`` or ``app`` of pastcast.cli._NAME
    # (a group), or its function NAME (of the module ``_HOME`` names, if another).
    "demo": (
        "Build the embedded world and its index, run the baselines and the heuristic research "
        "agent, print the leaderboard and write a run log and a report."
    ),
    "run": "Run agents over a dataset's forecast steps and write a resumable run log.",
    "plan": (
        "Show what a plan runs before running it: the work, the model calls, an estimated token "
        "count and cost from the price table, and events a model may remember (resolved before "
        "its knowledge cutoff)."
    ),
    "score": (
        "Re-score saved run logs from forecasts and gradings: the leaderboard, calibration of "
        "two-outcome forecasts (ECE, Murphy, anatomy of alpha), cost and failures per group."
    ),
    "compare": (
        "Compare two run logs, or two agents of one (TUNED left out), on the steps both recorded:"
        " Brier (overall, binary, multi-choice), accuracy, log loss, tool calls per forecast and "
        "parser acceptance, with the paired differences (TUNED - BASE) and their 95% "
        "event-resampled intervals."
    ),
    "report": (
        "Write a self-contained HTML report (report.html), its tables as Markdown and LaTeX, the "
        "scorecard as JSON and every figure as PNG and SVG."
    ),
    "view": (
        "Serve the dashboard: leaderboard with filters, event pages (market curve, every "
        "forecast, the outcome) and trajectories (messages, tool calls, documents with their "
        "dates against the cutoff, notebook diffs, cost and latency per call)."
    ),
    "agents": "Registered agents.",
    "audit": "Leakage audits: how a benchmark was built, and what agents saw in a run.",
    "corpus": "Build and query the dated document corpus.",
    "data": "Import real market data into datasets and describe them.",
    "export": (
        "Export run logs for training and analysis: chat fine-tuning records, per-step rewards, a"
        " Parquet table of forecasts. Each file gets a manifest beside it."
    ),
    "import": "Turn other tools' logs into pastcast run logs.",
    "presets": "The papers' defaults by name (pastcast run --preset NAME).",
    "models": "Models: measure a model's knowledge cutoff from what it recalls of a dated corpus.",
    "stats": (
        "Statistics: power analysis, longitudinal and evidence analyses, memory cost, coverage "
        "bins."
    ),
    "train": "Fine-tune a model on run logs' trajectories.",
    "toolserver": "Serve a forecast step's tools to an agent of any framework (MCP or HTTP/JSON).",
}
_HOME = {
    **dict.fromkeys(("demo", "plan", "toolserver"), "run"),
    **dict.fromkeys(("compare", "report", "view"), "score"),
    **dict.fromkeys(("import", "train"), "export"),
    "presets": "agents",
    "models": "audit",
}


PLUGIN_GROUP = "pastcast.commands"

ELSEWHERE: dict[str, tuple[str, str]] = {
    # name: (where the command comes from, the pip install that brings it)
    "arena": ("the arena's distribution (arena/ in pastcast's repository)", "pip install -e arena"),
}
"""Commands of distributions of their own, named when they are not installed or do not import."""


@functools.cache
def plugin_commands() -> dict[str, EntryPoint]:
    """The commands installed plugins add, by name (a name of ``COMMANDS`` stays the core's)."""
    from importlib.metadata import entry_points

    return {ep.name: ep for ep in entry_points(group=PLUGIN_GROUP) if ep.name not in COMMANDS}


def _plugin_line(name: str) -> str:
    """The root help's line of a plugin command: its distribution's summary."""
    dist = plugin_commands()[name].dist
    if dist is None or "Summary" not in dist.metadata:
        return f"A command of the plugin {dist.name if dist else name}."
    return dist.metadata["Summary"]


def load_command(name: str) -> Any:
    """The click command ``name`` of ``COMMANDS`` or of a plugin, its module imported now."""
    # A command's import allocates some 10^5 objects and frees none: the collector's passes over
    # them were a twentieth of its CPU (docs/measurements/runner.md).
    with collector_paused():
        if name in COMMANDS:
            module = importlib.import_module(f"pastcast.cli._{_HOME.get(name, name)}")
            target = getattr(module, f"{name}_app", None) or getattr(module, "app", None)
            target = target or getattr(module, name)
        else:
            entry = plugin_commands()[name]
            try:
                target = entry.load()
            except ImportError as exc:  # installed, but it or a dependency of it is missing
                dist = entry.dist.name if entry.dist else name
                where, install = ELSEWHERE.get(name, (dist, f"pip install {dist}"))
                raise click.UsageError(
                    f"'{name}' comes from {where}, which cannot be imported ({exc}): {install}"
                ) from None
    holder = typer.Typer(rich_markup_mode=None)  # plain help: wrapped, never cut (see app)
    if isinstance(target, typer.Typer):
        if name in COMMANDS:  # a core group's help is its line here; a plugin's, its own
            target.info.help = COMMANDS[name]
        holder.add_typer(target, name=name)
    else:
        holder.command(name)(target)
    command = typer.main.get_group(holder).commands[name]
    _whole_short_help(command)
    return command


def _whole_short_help(command: Any) -> None:
    """A group lists each sub-command by the first sentence of its help, whole: click cuts it
    to the terminal's width with "..." unless it is given as ``short_help``."""
    for sub in getattr(command, "commands", {}).values():
        if not sub.short_help and sub.help:
            first = " ".join(sub.help.split("\n\n")[0].split())
            end = first.find(". ")
            sub.short_help = first if end < 0 else first[: end + 1]
        _whole_short_help(sub)


class _LazyCommands(dict[str, Any]):
    """The root group's commands: those of ``COMMANDS`` and of plugins are loaded on first
    access; while the root help is written (``listing``), each is a stand-in carrying its help
    line. Plugins are looked up only for a name the core does not have, and to list them."""

    def __init__(self, eager: Mapping[str, Any]) -> None:
        super().__init__(eager)
        self._eager = set(eager)
        self.listing = False

    @property
    def _lazy(self) -> list[str]:
        return [n for n in (*COMMANDS, *plugin_commands()) if n not in self._eager]

    def _is_lazy(self, name: object) -> bool:
        if not isinstance(name, str) or name in self._eager:
            return False
        return name in COMMANDS or name in plugin_commands()

    def _resolve(self, name: str) -> Any:
        if self._is_lazy(name) and not dict.__contains__(self, name):
            if self.listing:
                line = COMMANDS[name] if name in COMMANDS else _plugin_line(name)
                return TyperCommand(name, help=line, short_help=line)
            dict.__setitem__(self, name, load_command(name))
        return dict.get(self, name)

    def __contains__(self, name: object) -> bool:
        return self._is_lazy(name) or dict.__contains__(self, name)

    def __getitem__(self, name: str) -> Any:
        cmd = self._resolve(name)
        if cmd is None:
            raise KeyError(name)
        return cmd

    def get(self, name: str, default: Any = None) -> Any:
        cmd = self._resolve(name)
        return default if cmd is None else cmd

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys())

    def __len__(self) -> int:
        return len(self.keys())

    def keys(self) -> Any:
        return [*self._lazy, *(n for n in dict.keys(self) if n not in self._lazy)]

    def values(self) -> Any:
        return [self[n] for n in self.keys()]

    def items(self) -> Any:
        return [(n, self[n]) for n in self.keys()]


class _OneLineErrors(TyperGroup):
    """Every error is one ``error:`` line on stderr. A usage error of the parser (an unknown
    option, a value out of range) names the option and exits 2; a path the system refuses
    names the path and exits 1; any other exception no command anticipated exits 1
    (``PASTCAST_DEBUG=1`` shows its traceback instead). Commands of ``COMMANDS`` are loaded
    when used (see the module docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.commands = _LazyCommands(self.commands)

    def list_commands(self, ctx: Any) -> list[str]:
        return list(self.commands.keys())

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        name = args[0] if args else ""
        if name in ELSEWHERE and name not in self.commands:
            where, install = ELSEWHERE[name]
            raise click.UsageError(f"No such command '{name}': it comes from {where}: {install}")
        return super().resolve_command(ctx, args)

    def format_help(self, ctx: Any, formatter: Any) -> None:
        lazy = self.commands
        if isinstance(lazy, _LazyCommands):
            lazy.listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            if isinstance(lazy, _LazyCommands):
                lazy.listing = False

    def main(
        self, args: Sequence[str] | None = None, *pos: Any, **kwargs: Any
    ) -> Any:  # typer's signature
        if not kwargs.get("standalone_mode", True):
            return super().main(args, *pos, **kwargs)
        kwargs["standalone_mode"] = False  # exceptions come here instead of typer's panels
        if args is not None and any("\x00" in a for a in args):  # never from a real shell
            typer.echo("error: an argument holds a NUL character", err=True)
            sys.exit(EXIT_USAGE)
        warnings.showwarning = _show_warning
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
    # Plain help: click wraps it to the terminal's width; rich's panels cut option names and
    # long words short with an ellipsis at 80 columns.
    rich_markup_mode=None,
)
# Commands are registered in COMMANDS above (loaded when used); one registered here with
# app.command / app.add_typer is imported with the CLI, as usual with typer.


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


_SHOW_WARNING = warnings.showwarning


def _show_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: TextIO | None = None,
    line: str | None = None,
) -> None:
    """A dataset's reading notes (``pastcast.app.DatasetNote``) as ``note:`` lines on stderr;
    other warnings as Python shows them."""
    if category.__name__ == "DatasetNote":
        typer.echo(printable(f"note: {message}"), err=True)
    else:
        _SHOW_WARNING(message, category, filename, lineno, file, line)


def main() -> None:
    # frozen at exit, the ~110,000 objects of numba's compiler are not walked by the last
    # collections (a second of a search's wall time); nothing of pastcast's waits on them
    atexit.register(gc.freeze)
    app()
