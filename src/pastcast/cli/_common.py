"""Helpers shared by CLI commands: exit codes, one-line errors, JSON output and notes.

Exit codes: 0 success; 2 a usage error (a bad option or value, an unknown agent or setting, a
malformed spec, an input that is missing or cannot be read or reached): nothing is done; 1 a
failed run (an exception once the work has started, or a run whose every new forecast is
unusable). Errors are one ``error: ...`` line on stderr.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer

if TYPE_CHECKING:
    from pastcast.dataset import Dataset

__all__ = [
    "EXIT_FAILED",
    "EXIT_USAGE",
    "JsonFlag",
    "fail",
    "load_dataset_option",
    "note",
    "print_json",
]

EXIT_USAGE = 2
EXIT_FAILED = 1

JsonFlag = Annotated[
    bool,
    typer.Option("--json", help="Print one JSON value on stdout (notes and progress: stderr)."),
]


def fail(message: str, code: int = EXIT_USAGE) -> NoReturn:
    """Print a one-line error to stderr and exit with ``code``."""
    line = " ".join(message.split())  # a multi-line exception message stays one line
    typer.echo(f"error: {line}", err=True)
    raise typer.Exit(code)


def note(text: str, as_json: bool) -> None:
    """A human-readable line: on stdout, or on stderr when stdout carries JSON."""
    typer.echo(text, err=as_json)


def print_json(obj: Any) -> None:
    """``obj`` as JSON on stdout (NaN and infinities, which JSON lacks, become null)."""
    from pastcast.reports import clean_json  # imported with the first JSON output: see _app

    json.dump(clean_json(obj), sys.stdout, indent=2, default=str, allow_nan=False)
    sys.stdout.write("\n")


def load_dataset_option(spec: str, option: str = "--dataset") -> Dataset:
    """The dataset named by ``spec``: 'world[:SEED]' (the embedded world, built from its seed) or
    a dataset directory (exit 2 when it is neither or cannot be read)."""
    if spec == "world" or spec.startswith("world:"):
        from pastcast.world import build_world

        _, _, seed_text = spec.partition(":")
        try:
            seed = int(seed_text or 0)
        except ValueError:
            fail(f"{option} {spec!r}: the world seed must be an integer (e.g. world:3)")
        return build_world(seed).dataset
    from pastcast.dataset import load_dataset

    path = Path(spec)
    if not path.is_dir():
        fail(f"{option} {spec!r}: not a dataset directory (or 'world[:SEED]')")
    try:
        return load_dataset(path)
    except ValueError as exc:
        fail(str(exc))
