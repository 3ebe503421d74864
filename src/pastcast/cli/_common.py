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

from pastcast.cutoff import DayConvention

if TYPE_CHECKING:
    from pastcast.dataset import Dataset

__all__ = [
    "EXIT_FAILED",
    "EXIT_USAGE",
    "DayConventionOpt",
    "JsonFlag",
    "fail",
    "load_dataset_option",
    "note",
    "output_dir",
    "output_file",
    "print_json",
    "printable",
]

EXIT_USAGE = 2
EXIT_FAILED = 1

JsonFlag = Annotated[
    bool,
    typer.Option("--json", help="Print one JSON value on stdout (notes and progress: stderr)."),
]


def printable(text: str) -> str:
    """``text`` as it can be printed: an argument's bytes that are not UTF-8 (which Python keeps
    as lone surrogates) are shown as escapes instead of failing the write."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def fail(message: str, code: int = EXIT_USAGE) -> NoReturn:
    """Print a one-line error to stderr and exit with ``code``."""
    line = " ".join(message.split())  # a multi-line exception message stays one line
    typer.echo(f"error: {printable(line)}", err=True)
    raise typer.Exit(code)


def output_dir(path: Path, option: str, kind: str) -> Path:
    """``path`` as the folder a command writes its ``kind`` of output into (``demo``,
    ``simulation``, ...): made and marked (``pastcast.owned``) if absent or empty. A folder
    pastcast did not make, or made for something else, is refused, as is a file there or a path
    that cannot be made: one-line usage errors naming ``option``."""
    from pastcast.owned import claim_dir  # imports numpy: not with the CLI (see _app)

    try:
        return claim_dir(path, kind)
    except FileExistsError as exc:
        fail(f"{option} {exc}")
    except OSError as exc:
        fail(f"{option} {path}: cannot make the folder ({exc.strerror or exc})")


def output_file(path: Path, option: str, made_by_pastcast: bool) -> Path:
    """``path`` as a file a command writes: a regular file (or nothing yet) in a folder that
    exists or can be made. An existing file is replaced only when ``made_by_pastcast`` (the
    caller knows its own outputs, e.g. by the manifest beside them); anything else there is a
    one-line usage error naming ``option``."""
    if path.exists() or path.is_symlink():
        if not path.is_file() or path.is_symlink():
            fail(f"{option} {path}: exists and is not a regular file")
        if not made_by_pastcast:
            fail(f"{option} {path}: exists and was not written by pastcast; not replacing it")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        fail(f"{option} {path}: cannot make its folder ({exc.strerror or exc})")
    return path


def note(text: str, as_json: bool) -> None:
    """A human-readable line: on stdout, or on stderr when stdout carries JSON."""
    typer.echo(printable(text), err=as_json)


def print_json(obj: Any) -> None:
    """``obj`` as JSON on stdout (NaN and infinities, which JSON lacks, become null)."""
    from pastcast.reports import clean_json  # imported with the first JSON output: see _app

    json.dump(clean_json(obj), sys.stdout, indent=2, default=str, allow_nan=False)
    sys.stdout.write("\n")


DayConventionOpt = Annotated[
    DayConvention,
    typer.Option(
        "--day-convention",
        help="A Forecast-Dojo release given as --dataset: how its forecast dates become cutoffs, "
        "start_of_day (00:00 UTC, nothing dated that day visible; the default) or inclusive "
        "(the paper's: the whole day visible).",
    ),
]


def load_dataset_option(
    spec: str,
    option: str = "--dataset",
    convention: DayConvention = DayConvention.START_OF_DAY,
) -> Dataset:
    """The dataset named by ``spec``: 'world[:SEED][,FIELD=VALUE...]' (the embedded world), a
    dataset directory, or a Forecast-Dojo release folder (``questions/*.parquet``, its dates
    read under ``convention``); exit 2 when it is none of these or cannot be read."""
    from pastcast.world import WORLD_SPEC, is_world_spec, world_from_spec

    if convention is not DayConvention.START_OF_DAY and is_world_spec(spec):
        fail(f"--day-convention {convention.value}: only for a Forecast-Dojo release")
    if is_world_spec(spec):
        try:
            return world_from_spec(spec).dataset
        except ValueError as exc:
            fail(f"{option} {exc}")
    from pastcast.markets import load_benchmark

    path = Path(spec)
    if not path.is_dir():
        fail(f"{option} {spec!r}: not a dataset directory (or {WORLD_SPEC!r})")
    try:
        return load_benchmark(path, convention=convention)
    except ValueError as exc:
        fail(str(exc))
