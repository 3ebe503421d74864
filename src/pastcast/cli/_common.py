"""Helpers shared by CLI commands: one-line errors and JSON output."""

from __future__ import annotations

import json
import sys
from typing import Any, NoReturn

import typer

__all__ = ["fail", "print_json"]


def fail(message: str, code: int = 2) -> NoReturn:
    """Print a one-line error to stderr and exit with ``code``."""
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


def print_json(obj: Any) -> None:
    json.dump(obj, sys.stdout, indent=2, default=str)
    sys.stdout.write("\n")
