"""JSON from files, models and the command line, which may hold anything.

``loads`` is ``json.loads`` whose every refusal is a ``json.JSONDecodeError`` with a one-line
``msg``: invalid syntax, bytes that are not UTF-8, nesting deeper than the interpreter's stack,
an integer too long for Python to convert. Readers already name the file and line of a
``JSONDecodeError``, so each of these becomes one of their one-line errors instead of an
exception nobody anticipated.
"""

from __future__ import annotations

import json
import sys
from typing import Any

__all__ = ["JsonRefused", "loads"]


class JsonRefused(json.JSONDecodeError):
    """Text ``json.loads`` cannot take for a reason other than its syntax (no position)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason, "", 0)

    def __str__(self) -> str:
        return self.msg


def _refusal(reason: str) -> JsonRefused:
    return JsonRefused(reason)


def loads(data: str | bytes | bytearray, **options: Any) -> Any:
    """``json.loads(data, **options)``; every refusal is a ``json.JSONDecodeError``."""
    if isinstance(data, bytes | bytearray):
        try:
            data = bytes(data).decode("utf-8")
        except UnicodeDecodeError as exc:
            where = f"byte 0x{data[exc.start]:02x} at offset {exc.start}"
            raise _refusal(f"not UTF-8 text ({where})") from None
    try:
        return json.loads(data, **options)
    except json.JSONDecodeError:
        raise
    except RecursionError:
        raise _refusal("nested too deeply") from None
    except ValueError as exc:  # int() of a number with thousands of digits
        if "digits" in str(exc):
            raise _refusal(f"a number of more than {sys.get_int_max_str_digits()} digits") from None
        raise _refusal(str(exc).splitlines()[0] if str(exc) else type(exc).__name__) from None
