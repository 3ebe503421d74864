"""`pastcast stats ...` commands."""

from __future__ import annotations

import typer

app = typer.Typer(help="stats commands.", no_args_is_help=True)
