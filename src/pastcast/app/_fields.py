"""A lower layer's plain ``ValueError`` as the application layer's ``FieldError``."""

from __future__ import annotations

from types import TracebackType

from pastcast.errors import FieldError


class as_field:
    """A ``ValueError`` (or one of ``kinds`` where given) of the block raised as
    ``FieldError(field, its message)``: for the lower layers that check a value the application
    layer handed down without knowing its field. (A class, not ``contextmanager``: an exit typed
    ``None`` tells the type checker that nothing is swallowed, so ``with`` may end a function.)"""

    def __init__(self, field: str, *kinds: type[Exception]) -> None:
        self.field = field
        self.kinds: tuple[type[Exception], ...] = kinds or (ValueError,)

    def __enter__(self) -> None:
        return None

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if isinstance(exc, self.kinds):
            raise FieldError(self.field, str(exc)) from None
