"""The one error type of the application layer."""

from __future__ import annotations

__all__ = ["AppError"]


class AppError(ValueError):
    """A request that cannot be carried out, before any work: ``field`` names what is wrong
    (``dataset``, ``corpus``, ``agents[0].args.rounds``), the message says why in one line.
    Front ends map ``field`` to their own vocabulary (the CLI to its option)."""

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        self.reason = " ".join(message.split())
        super().__init__(f"{field}: {self.reason}")
