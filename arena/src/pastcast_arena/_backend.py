"""What an arena offers, whether it runs on an EVM chain or as a local hash-chained ledger.

Both enforce the same rules with the same reasons (the contract's revert strings), so callers
(the relayer, replays, tests) treat them alike.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from pastcast_arena._protocol import Domain
from pastcast_arena._records import RoundScore, SignedCommit, SignedReveal

__all__ = ["ArenaBackend", "ArenaRejected"]


class ArenaRejected(ValueError):
    """The arena refused an action; ``reason`` is the rule that refused it."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class ArenaBackend(Protocol):
    """Times are Unix seconds on the arena's own clock (block time on a chain)."""

    @property
    def domain(self) -> Domain: ...

    def now(self) -> int: ...

    def advance_to(self, timestamp: int) -> None:
        """Move the clock forward to ``timestamp`` (test chains and replays only)."""
        ...

    def register(self, private_key: str, name: str, *, role: str = "agent") -> str:
        """Register the key's address under ``name`` (``role``: ``agent``, or ``reference``
        for the market consensus); returns the address."""
        ...

    def create_round(
        self, condition_ids: Sequence[str], commit_deadline: int, reveal_deadline: int
    ) -> int: ...

    def set_benchmarks(self, round_id: int, prices_bp: Sequence[int]) -> None: ...

    def nonce(self, agent: str) -> int: ...

    def commit(self, msg: SignedCommit, *, simulate: bool = False) -> str:
        """Check (and unless ``simulate``, record) a signed commit; returns its receipt id."""
        ...

    def reveal(self, msg: SignedReveal, *, simulate: bool = False) -> str: ...

    def report_payouts(self, condition_id: str, numerators: Sequence[int]) -> None:
        """The outcome oracle: report a condition's payout numerators."""
        ...

    def trigger_outcomes(self, round_id: int) -> tuple[int, ...]: ...

    def score_pending(self, round_id: int) -> tuple[RoundScore, ...]:
        """Score every reveal of the round not scored yet (agents as addresses)."""
        ...
