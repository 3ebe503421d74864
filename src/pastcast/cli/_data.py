"""`pastcast data ...` commands."""

from __future__ import annotations

import typer

app = typer.Typer(help="data commands.", no_args_is_help=True)
