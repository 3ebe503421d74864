"""The one error of a value that cannot be used: ``FieldError`` names the field it is in.

Every layer raises it where it checks what it is given; a layer that hands a sub-record down
prefixes the field path on the way up (``within``), so the error that reaches a front end
names the field as the caller spelled it (``agents[0].model``, ``budgets.python_tool``) and
is passed through, not translated. Front ends map the path to their own vocabulary (the CLI
to its option).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["FieldError", "within"]


class FieldError(ValueError):
    """A request that cannot be carried out, before any work: ``field`` is the path of what is
    wrong (``dataset``, ``corpus``, ``agents[0].args.rounds``; empty while it is the whole value
    the checker was handed), ``reason`` says why in one line."""

    def __init__(self, field: str, reason: str) -> None:
        self.field = field
        self.reason = " ".join(reason.split())
        super().__init__(field, self.reason)

    def __str__(self) -> str:
        return f"{self.field}: {self.reason}" if self.field else self.reason

    def __reduce__(self) -> tuple[Any, ...]:
        # The same error after pickling (a worker process), whatever a subclass's signature.
        return (_restored, (type(self), self.field, self.reason))


def _restored(cls: type[FieldError], field: str, reason: str) -> FieldError:
    exc = cls.__new__(cls)
    FieldError.__init__(exc, field, reason)
    return exc


def _under(prefix: str, field: str) -> str:
    """``field`` as a part of ``prefix``: ``agents[0]`` + ``model`` -> ``agents[0].model``;
    a list position (``[1]``) or nothing joins without a dot."""
    if not prefix or not field:
        return prefix or field
    return prefix + field if field.startswith("[") else f"{prefix}.{field}"


@contextmanager
def within(prefix: str) -> Iterator[None]:
    """A ``FieldError`` of the block names its field under ``prefix``: the same error, raised
    on with its path extended, so a caller's own handlers still see what was raised."""
    try:
        yield
    except FieldError as exc:
        exc.field = _under(prefix, exc.field)
        exc.args = (exc.field, exc.reason)
        raise
