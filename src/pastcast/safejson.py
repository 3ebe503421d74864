"""JSON from files, models and the command line, which may hold anything.

``loads`` is ``json.loads`` whose every refusal is a ``json.JSONDecodeError`` with a one-line
``msg``: invalid syntax, bytes that are not UTF-8, nesting deeper than ``MAX_DEPTH``, an integer
too long for Python to convert. Readers already name the file and line of a
``JSONDecodeError``, so each of these becomes one of their one-line errors instead of an
exception nobody anticipated.

``canonical_json`` is the one canonical form pastcast hashes and keys by (run fingerprints,
cache keys, ledger records, configuration digests): sorted keys, no spaces. ``clean_json`` makes
a value writable as strict JSON (NaN and infinities become null).

Nesting is checked before decoding, not left to ``RecursionError``: the C decoder recurses on
the C stack, and a library that raises the interpreter's recursion limit (web3 sets 100,000)
turns a deeply nested input into a segmentation fault.
"""

from __future__ import annotations

import json
import math
import re
import sys
from typing import Any

import numpy as np

__all__ = ["canonical_json", "clean_json", "loads", "loads_line", "raw_decode"]

MAX_DEPTH = 512
"""The deepest nesting of arrays and objects accepted (pastcast's own JSON nests a few levels)."""

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_DECODER = json.JSONDecoder()


class JsonRefused(json.JSONDecodeError):
    """Text ``json.loads`` cannot take for a reason other than its syntax (no position)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason, "", 0)

    def __str__(self) -> str:
        return self.msg


def _depth(text: str) -> int:
    """How deep arrays and objects nest in ``text`` (brackets inside strings do not count)."""
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return 0  # cannot nest deeper than it has brackets
    codes = np.frombuffer(_STRING.sub("", text).encode("utf-8", "surrogatepass"), np.uint8)
    step = np.zeros(len(codes), np.int64)
    step[(codes == ord("[")) | (codes == ord("{"))] = 1
    step[(codes == ord("]")) | (codes == ord("}"))] = -1
    return int(np.cumsum(step).max(initial=0))


def _check_depth(text: str) -> None:
    if _depth(text) > MAX_DEPTH:
        raise JsonRefused(f"nested deeper than {MAX_DEPTH} levels")


def raw_decode(text: str, index: int = 0) -> tuple[Any, int]:
    """``json.JSONDecoder().raw_decode(text, index)`` under the same checks as ``loads``."""
    _check_depth(text[index:])
    try:
        return _DECODER.raw_decode(text, index)
    except json.JSONDecodeError:
        raise
    except (RecursionError, ValueError) as exc:
        raise JsonRefused(_reason(exc)) from None


def _reason(exc: BaseException) -> str:
    if isinstance(exc, RecursionError):
        return f"nested deeper than {MAX_DEPTH} levels"
    if "digits" in str(exc):
        return f"a number of more than {sys.get_int_max_str_digits()} digits"
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def loads(data: str | bytes | bytearray, **options: Any) -> Any:
    """``json.loads(data, **options)``; every refusal is a ``json.JSONDecodeError``."""
    if isinstance(data, bytes | bytearray):
        try:
            data = bytes(data).decode("utf-8")
        except UnicodeDecodeError as exc:
            where = f"byte 0x{data[exc.start]:02x} at offset {exc.start}"
            raise JsonRefused(f"not UTF-8 text ({where})") from None
    _check_depth(data)
    try:
        return json.loads(data, **options)
    except json.JSONDecodeError:
        raise
    except (RecursionError, ValueError) as exc:  # a number of thousands of digits, a hook's
        raise JsonRefused(_reason(exc)) from None


def loads_line(line: str | bytes) -> Any:
    """One line of a JSON-lines file, as ``loads``. A line that does not parse and does not end
    in a newline is the file's last one, cut short: the refusal says so."""
    try:
        return loads(line)
    except json.JSONDecodeError as exc:
        newline = b"\n" if isinstance(line, bytes) else "\n"
        if line.endswith(newline) or not line.strip():  # type: ignore[arg-type]
            raise
        raise JsonRefused(
            f"{exc.msg}; the file ends in the middle of this line (cut short?)"
        ) from None


def canonical_json(value: Any, *, ascii_only: bool = False) -> str:
    """``value`` as canonical JSON: keys sorted, no spaces, so equal values give equal text
    (for hashes, keys and ids). ``ascii_only`` escapes non-ASCII characters: the form the run
    fingerprint, the world configuration's digest and the judges' schemas were first hashed in,
    kept so that the ids already written stay the same."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=ascii_only)


def clean_json(obj: Any) -> Any:
    """NaN is not JSON: write it as null."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: clean_json(v) for k, v in obj.items()}
    return [clean_json(v) for v in obj] if isinstance(obj, list | tuple) else obj
