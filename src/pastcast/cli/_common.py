"""Helpers shared by CLI commands: exit codes, one-line errors, JSON output and notes.

Exit codes: 0 success; 2 a usage error (a bad option or value, an unknown agent or setting, a
malformed spec, an input that is missing or cannot be read or reached): nothing is done; 1 a
failed run (an exception once the work has started, or a run whose every new forecast is
unusable). Errors are one ``error: ...`` line on stderr.
"""

from __future__ import annotations

import ast
import functools
import inspect
import itertools
import json
import linecache
import os
import re
import shutil
import sys
from collections.abc import Collection, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn, TypeVar

import typer

from pastcast.cutoff import DayConvention

if TYPE_CHECKING:
    from collections.abc import Callable

    from pydantic import BaseModel
    from rich.console import Console

    from pastcast.errors import FieldError
    from pastcast.records import Record

    R = TypeVar("R", bound=Record)
T = TypeVar("T")

EXIT_USAGE = 2
EXIT_FAILED = 1

JsonFlag = Annotated[
    bool,
    typer.Option("--json", help="Print one JSON value on stdout (notes and progress: stderr)."),
]

ConfigOpt = Annotated[
    Path | None,
    typer.Option(
        "--config",
        metavar="FILE",
        help="The command's record as a plan file (TOML, YAML or JSON, as "
        "pastcast.app.write_plan writes it); the options given are set over it.",
    ),
]


PIPE_WIDTH = 200
"""Columns of tables printed into a pipe or a file when ``COLUMNS`` does not say."""


def table_console(stderr: bool = False) -> Console:
    """Where tables are printed: as wide as the terminal, or ``COLUMNS`` where it is set, else
    (a pipe, a log file) ``PIPE_WIDTH``; print them with ``to_rich(table, console.width)``."""
    from rich.console import Console

    console = Console(stderr=stderr)
    if console.is_terminal or os.environ.get("COLUMNS", "").isdigit():
        return console
    return Console(stderr=stderr, width=PIPE_WIDTH)


def printable(text: str) -> str:
    """``text`` as it can be printed: an argument's bytes that are not UTF-8 (which Python keeps
    as lone surrogates) are shown as escapes instead of failing the write."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def fail(message: str, code: int = EXIT_USAGE) -> NoReturn:
    """Print a one-line error to stderr and exit with ``code``."""
    line = " ".join(message.split())  # a multi-line exception message stays one line
    typer.echo(f"error: {printable(line)}", err=True)
    raise typer.Exit(code)


def option_of(field: str, options: Mapping[str, str] | None = None) -> str:
    """The command-line option that sets the application layer's ``field``: from ``options``
    (a command's own names, e.g. ``{"agents": "--agent"}``), else ``--field-name`` for a plain
    field; a field path (``agents[0].model``) is named by its first part."""
    head = field.split(".")[0].split("[")[0]
    return options[head] if options and head in options else "--" + head.replace("_", "-")


def fail_app(exc: FieldError, options: Mapping[str, str] | None = None) -> NoReturn:
    """``exc`` as the CLI says it: one ``error:`` line naming the option that sets its field."""
    fail(f"{option_of(exc.field, options)} {exc.reason}" if exc.field else exc.reason)


def field_help(kind: type[BaseModel], name: str) -> str:
    """The documentation of a record's field (the docstring under it, or its description), as
    the help of its option."""
    for cls in kind.__mro__:
        if cls.__module__.startswith("pydantic."):
            break
        if (doc := _attribute_docs(cls).get(name)) is not None:
            return " ".join(doc.split())
    return " ".join((kind.model_fields[name].description or "").split())


@functools.cache
def _attribute_docs(cls: type) -> dict[str, str]:
    """The docstrings under a class's annotated attributes, read from its source when a command
    is built. (pydantic's ``use_attribute_docstrings`` walks the call stack for them at every
    class's creation: 35 ms of every command's start-up.) Only the class's own lines are
    parsed, found as ``class Name`` at the start of a line of its module."""
    try:
        lines = linecache.getlines(inspect.getsourcefile(cls) or "")
    except TypeError:  # a built-in class
        return {}
    head = re.compile(rf"class {re.escape(cls.__qualname__)}\b")
    start = next((i for i, line in enumerate(lines) if head.match(line)), None)
    if start is None:  # no source (a zipped install), or a nested class: no help text
        return {}
    stop = next(
        (i for i in range(start + 1, len(lines)) if lines[i][:1] not in ("", " ", "\n", "#")),
        len(lines),
    )
    try:
        node = ast.parse("".join(lines[start:stop])).body[0]
    except SyntaxError:  # a class whose lines are not all indented: no help text
        return {}
    docs: dict[str, str] = {}
    for stmt, after in itertools.pairwise(node.body if isinstance(node, ast.ClassDef) else []):
        if (
            isinstance(stmt, ast.AnnAssign)
            and isinstance(stmt.target, ast.Name)
            and isinstance(after, ast.Expr)
            and isinstance(after.value, ast.Constant)
            and isinstance(after.value.value, str)
        ):
            docs[stmt.target.id] = inspect.cleandoc(after.value.value)
    return docs


def field_option(kind: type[BaseModel], name: str, *opts: str, **options: Any) -> Any:
    """The option that sets a record's field, its help the field's documentation."""
    return typer.Option(*opts, help=field_help(kind, name), **options)


def given_options(
    ctx: typer.Context, fields: Mapping[str, str | None] | None = None
) -> dict[str, Any]:
    """The options given (on the command line or by the environment, not defaulted) as the
    fields of the record the command builds: each by its name, or at the field path ``fields``
    maps it to (``{"workers": "concurrency.episodes"}``; None: no field); a preset fills the
    rest (``pastcast.app.with_preset``)."""
    out: dict[str, Any] = {}
    for name, value in ctx.params.items():
        path = (fields or {}).get(name, name)
        source = ctx.get_parameter_source(name)
        if path is None or source is None or source.name in ("DEFAULT", "DEFAULT_MAP"):
            continue
        node = out
        *parents, leaf = path.split(".")
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = value
    return out


def call_with_params(
    ctx: typer.Context,
    function: Callable[..., T],
    *args: Any,
    omit: Collection[str] = (),
    **computed: Any,
) -> T:
    """``function(*args, ...)`` given the command's parameters as its keyword arguments, each by
    its name (``as_json`` and those of ``omit`` left out), with the values ``computed`` from
    others set over them: a command whose parameters are the function's own passes them on
    once."""
    left_out = {"as_json", *omit}
    params = {name: value for name, value in ctx.params.items() if name not in left_out}
    return function(*args, **(params | computed))


def options_record(
    ctx: typer.Context,
    kind: type[R],
    fields: Mapping[str, str | None] | None = None,
    **computed: Any,
) -> R:
    """The record ``kind`` of the options given (``given_options``) and the values ``computed``
    from others, set over the record in the file of ``--config`` (``ConfigOpt``) when given; a
    one-line usage error naming the file and field, or the option, of the first problem
    otherwise."""
    from pydantic import ValidationError

    from pastcast.app import read_plan
    from pastcast.errors import FieldError
    from pastcast.runner import deep_merge
    from pastcast.validation import field_path, first_error

    base: dict[str, Any] = {}
    if ctx.params.get("config") is not None:
        try:
            base = read_plan(ctx.params["config"], kind).model_dump(exclude_unset=True)
        except FieldError as exc:
            fail(exc.reason)
    given = deep_merge(given_options(ctx, {"config": None, **(fields or {})}), computed)
    loc: tuple[str | int, ...] = _undecodable(given)
    message = "not valid text (bytes that are not UTF-8)"
    if not loc:
        try:
            return kind.model_validate(deep_merge(base, given))
        except ValidationError as exc:
            loc, message = first_error(exc)
    if message == "Field required" and "config" in ctx.params:
        message = "required (or give --config FILE)"
    where = field_path(loc)
    for param in ctx.command.params:
        path = (fields or {}).get(param.name or "", param.name)
        if path and (where == path or where.startswith((f"{path}.", f"{path}["))):
            name = param.opts[0] if param.opts[0].startswith("-") else param.opts[0].upper()
            fail(f"{name}: {message}")
    fail(f"{option_of(where)}: {message}" if where else message)


def _undecodable(value: Any, loc: tuple[str | int, ...] = ()) -> tuple[str | int, ...]:
    """Where in ``value`` a text holds undecodable bytes (a command line's surrogate escapes):
    a record keeps no such text, for it could not be written to its file or any output."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return loc
    elif isinstance(value, Mapping):
        for key, item in value.items():
            if found := _undecodable(item, (*loc, key)):
                return found
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            if found := _undecodable(item, (*loc, i)):
                return found
    return ()


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


@contextmanager
def undone_on_usage_error(path: Path) -> Iterator[None]:
    """Remove the folders the block makes at ``path`` (from its first missing ancestor) when
    the block ends in a usage error, which promises that nothing was done; a failed run keeps
    what it wrote."""
    path = Path(path).absolute()
    first_new = next((p for p in (*reversed(path.parents), path) if not p.exists()), None)
    try:
        yield
    except (typer.Exit, SystemExit) as exc:
        code = exc.exit_code if isinstance(exc, typer.Exit) else exc.code
        if code == EXIT_USAGE and first_new is not None and first_new.is_dir():
            shutil.rmtree(first_new, ignore_errors=True)
        raise


def note(text: str, as_json: bool) -> None:
    """A human-readable line: on stdout, or on stderr when stdout carries JSON."""
    typer.echo(printable(text), err=as_json)


def print_json(obj: Any) -> None:
    """``obj`` as JSON on stdout (NaN and infinities, which JSON lacks, become null). A member
    of an object that is an iterator (a generator) is written as an array an item at a time,
    so a long list is never held, nor a copy of it: the same text as of the list itself."""
    from pastcast.safejson import clean_json  # numpy: not imported by ``pastcast --help``

    if not (isinstance(obj, dict) and any(isinstance(v, Iterator) for v in obj.values())):
        json.dump(clean_json(obj), sys.stdout, indent=2, default=str, allow_nan=False)
        sys.stdout.write("\n")
        return
    out = sys.stdout
    out.write("{")
    for n, (key, value) in enumerate(obj.items()):
        out.write(("," if n else "") + "\n  " + json.dumps(str(key)) + ": ")
        if not isinstance(value, Iterator):
            out.write(_indented(clean_json(value), 2))
            continue
        first = True
        for item in value:
            out.write(("[" if first else ",") + "\n    " + _indented(clean_json(item), 4))
            first = False
        out.write("[]" if first else "\n  ]")
    out.write("\n}\n")


def _indented(value: Any, depth: int) -> str:
    """``value`` as ``print_json`` writes it nested ``depth`` spaces in (a string's newlines
    are escaped, so every newline of the text is one of the layout's)."""
    text = json.dumps(value, indent=2, default=str, allow_nan=False)
    return text.replace("\n", "\n" + " " * depth)


DayConventionOpt = Annotated[
    DayConvention,
    typer.Option(
        "--day-convention",
        help="A Forecast-Dojo release given as --dataset: how its forecast dates become cutoffs, "
        "start_of_day (00:00 UTC, nothing dated that day visible; the default) or inclusive "
        "(the paper's: the whole day visible).",
    ),
]

CoverageDaysOpt = Annotated[
    int,
    typer.Option(
        "--coverage-days",
        min=1,
        help="Corpus coverage: a step is covered when the corpus has a document dated in this "
        "many days before its cutoff.",
    ),
]

Retrieval = Annotated[
    str,
    typer.Option(
        "--retrieval",
        "--mode",
        help="bm25, dense (needs the 'dense' extra; document embeddings are computed once and "
        "kept with the corpus) or hybrid (reciprocal-rank fusion of both).",
    ),
]


def fail_field(exc: FieldError, options: Mapping[str, str] | None = None) -> NoReturn:
    """``exc`` as ``--option: reason`` (an argument's name, or nothing when its reason names
    the file itself, as ``NAME reason``): the commands whose errors read that way."""
    option = option_of(exc.field, options) if exc.field else ""
    if not option:
        fail(exc.reason)
    fail(f"{option}: {exc.reason}" if option.startswith("--") else f"{option} {exc.reason}")


class field_errors:
    """A ``FieldError`` of the block as the command says it: ``say`` (``fail_field``, or
    ``fail_app`` for the commands whose errors read ``--option reason``) with ``options``. (A
    class: an exit typed ``None`` tells the type checker that nothing is swallowed.)"""

    def __init__(
        self,
        options: Mapping[str, str] | None = None,
        say: Callable[[FieldError, Mapping[str, str] | None], NoReturn] = fail_field,
    ) -> None:
        self.options, self.say = options, say

    def __enter__(self) -> None:
        return None

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: Any
    ) -> None:
        from pastcast.errors import FieldError

        if isinstance(exc, FieldError):
            self.say(exc, self.options)
