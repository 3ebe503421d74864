"""A pydantic ``ValidationError`` in one line: the problem and the field path it is at.

Every reader of files, replies, plans and arguments reports a bad value the same way:
``WHERE: field models[0].spec: Input should be a valid string``, where ``WHERE`` says which
file, line or row (left out when there is nothing to say) and the path names the field as the
input spells it (list positions in brackets). A check of the whole record has no path: then the
message stands alone.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import ValidationError
from pydantic_core import ErrorDetails

__all__ = ["field_path", "first_error", "first_problem", "problems"]

# pydantic prefixes the text of a ValueError raised in a validator; the text is the message.
_PREFIXES = ("Value error, ", "Assertion failed, ")


def field_path(loc: Sequence[int | str]) -> str:
    """``("models", 0, "spec")`` -> ``models[0].spec``."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _message(error: ErrorDetails) -> str:
    msg = str(error["msg"])
    for prefix in _PREFIXES:
        msg = msg.removeprefix(prefix)
    return " ".join(msg.split())


def first_error(exc: ValidationError) -> tuple[tuple[int | str, ...], str]:
    """The first problem's location and message, for a caller that names the field its own way
    (the command line names it by its option)."""
    errors = exc.errors()
    if not errors:  # pydantic never raises without one, but a hand-made error may
        return (), " ".join(str(exc).split())
    return tuple(errors[0]["loc"]), _message(errors[0])


def problems(exc: ValidationError, *, root: Sequence[int | str] = ()) -> list[str]:
    """Each problem as ``path: message`` (``message`` alone for a whole-record check); the path
    starts with ``root`` (``params.arguments`` for the arguments of a request)."""
    out = []
    for error in exc.errors():
        path = field_path((*root, *error["loc"]))
        out.append(f"{path}: {_message(error)}" if path else _message(error))
    return out


def first_problem(exc: ValidationError, where: str = "") -> str:
    """The first problem in one line: ``where: field path: message`` (``where`` is the file,
    line or row, left out when empty; ``field path`` is left out for a whole-record check)."""
    loc, message = first_error(exc)
    text = f"field {field_path(loc)}: {message}" if loc else message
    return f"{where}: {text}" if where else text
