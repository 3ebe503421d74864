"""`pastcast corpus ...` commands."""

from __future__ import annotations

import typer

app = typer.Typer(help="corpus commands.", no_args_is_help=True)
