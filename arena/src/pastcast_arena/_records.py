"""The arena's frozen records: rounds, benchmark prices, signed messages, outcomes and scores.

Predictions and prices are integers in basis points (0-10,000), as on chain; the [0, 1] values
are derived from them, never stored beside them, so the two cannot disagree.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Annotated, Literal

from pydantic import AfterValidator, BeforeValidator, Field, model_validator

from pastcast.records import Record, UtcDatetime

MAX_BP = 10_000
UNCATEGORIZED = "uncategorized"
"""The category of a market whose source gives none."""
OUTCOME_NO = 0
OUTCOME_YES = 1
OUTCOME_EXCLUDED = 2
"""A market left out of scoring: unresolved, or a split (non 0/1) payout. Same codes as on chain."""

Bp = Annotated[int, Field(ge=0, le=MAX_BP)]
Uint256 = Annotated[int, Field(strict=True, ge=0, lt=2**256)]
"""An unsigned integer as the contract holds it; in a signed message a JSON integer only (not a
string or a boolean that would pass as one)."""
RoundId = Annotated[int, Field(strict=True, ge=1, lt=2**256)]
OutcomeCode = Literal[0, 1, 2]

PriceSource = Literal[
    "book-mid", "clob-minute", "daily-mean-fallback", "last_trade", "daily", "recorded"
]
"""Where a benchmark price came from (docs/arena.md, "Rounds", has the table)."""


def utc(ts: float) -> datetime:
    """Unix seconds (a chain's, a ledger's or the live service's clock) as a UTC instant."""
    return datetime.fromtimestamp(ts, UTC)


_OLD_SOURCES = {"mid": "book-mid"}
"""Spellings of earlier round files, read as today's."""


def _source(value: object) -> object:
    return _OLD_SOURCES.get(value, value) if isinstance(value, str) else value


_ADDRESS = re.compile(r"^0x[0-9a-fA-F]{40}$")


def _lower_hex(digits: int, what: str) -> AfterValidator:
    """0x and ``digits`` hex digits, in lower case (``what`` names it in the error)."""
    pattern = re.compile(rf"^0x[0-9a-f]{{{digits}}}$")

    def check(value: str) -> str:
        if not pattern.match(value.lower()):
            raise ValueError(f"expected {what}, got {value!r}")
        return value.lower()

    return AfterValidator(check)


def _address(value: str) -> str:
    """The EIP-55 checksum spelling, so that one agent is one key everywhere (nonces, entries,
    signer comparisons). Without the EVM libraries (no signature can be checked then) the
    address is kept as given."""
    if not _ADDRESS.match(value):
        raise ValueError(f"expected a 0x-prefixed 20-byte address, got {value!r}")
    try:
        from eth_utils.address import to_checksum_address
    except ImportError:
        return value
    return str(to_checksum_address(value))


Hex32 = Annotated[str, _lower_hex(64, "0x followed by 64 hex digits")]
"""32 bytes as lower-case 0x-prefixed hex (condition ids, hashes, salts)."""
Address = Annotated[str, AfterValidator(_address)]
Signature = Annotated[str, _lower_hex(130, "a 65-byte signature as 0x-prefixed hex")]


class ArenaMarket(Record):
    """One binary market of a round. ``condition_id`` is its conditional-tokens condition."""

    market_id: str = Field(min_length=1)
    condition_id: Hex32
    question: str = ""
    category: str = ""


class BenchmarkPrice(Record):
    """The market price a round is scored against, as of the commit deadline."""

    market_id: str = Field(min_length=1)
    price_bp: Bp
    source: Annotated[PriceSource, BeforeValidator(_source)]
    observed_at: UtcDatetime
    """When the price was observed (at or before the commit deadline)."""


class Round(Record):
    """k markets forecast together: commit before ``commit_deadline``, reveal before
    ``reveal_deadline``. ``benchmarks`` are filled in once the commit phase is over."""

    round_id: int = Field(ge=1)
    markets: tuple[ArenaMarket, ...] = Field(min_length=1, max_length=64)
    commit_deadline: UtcDatetime
    reveal_deadline: UtcDatetime
    selector: str = ""
    benchmarks: tuple[BenchmarkPrice, ...] = ()

    @model_validator(mode="after")
    def _check(self) -> Round:
        if self.reveal_deadline <= self.commit_deadline:
            raise ValueError("reveal_deadline must be after commit_deadline")
        ids = [m.market_id for m in self.markets]
        if len(set(ids)) != len(ids):
            raise ValueError(f"round {self.round_id}: a market appears twice")
        if self.benchmarks:
            if tuple(b.market_id for b in self.benchmarks) != tuple(ids):
                raise ValueError(f"round {self.round_id}: benchmarks do not match the markets")
            late = [b.market_id for b in self.benchmarks if b.observed_at > self.commit_deadline]
            if late:
                raise ValueError(
                    f"round {self.round_id}: benchmark of {late[0]} observed after the deadline"
                )
        return self

    @property
    def k(self) -> int:
        return len(self.markets)

    def benchmark_bp(self) -> tuple[int, ...]:
        if not self.benchmarks:
            raise ValueError(f"round {self.round_id}: benchmark prices are not set")
        return tuple(b.price_bp for b in self.benchmarks)


class SignedCommit(Record):
    """An EIP-712 ``Commit`` message with its signature, as a relayer receives it."""

    round_id: RoundId
    commit_hash: Hex32
    agent: Address
    nonce: Uint256
    deadline: Uint256
    """Unix seconds after which the signature is no longer accepted."""
    signature: Signature


class SignedReveal(Record):
    """An EIP-712 ``Reveal`` message (predictions and salt in clear) with its signature."""

    round_id: RoundId
    predictions: tuple[Bp, ...] = Field(min_length=1)
    salt: Hex32
    agent: Address
    nonce: Uint256
    deadline: Uint256
    signature: Signature


class RoundScore(Record):
    """One agent's score in one round, in basis points (``brier``/``alpha`` give [0, 1])."""

    round_id: int = Field(ge=1)
    agent: str
    brier_bp: int = Field(ge=0, le=MAX_BP)
    alpha_bp: int = Field(ge=-MAX_BP, le=MAX_BP)
    resolved: int = Field(ge=1)
    """Markets of the round that counted (resolved with a 0/1 payout)."""

    @property
    def brier(self) -> float:
        return self.brier_bp / MAX_BP

    @property
    def alpha(self) -> float:
        return self.alpha_bp / MAX_BP


class RoundResult(Record):
    """Everything needed to analyse a finished round: the round with its benchmarks, the outcome
    code of each market, every revealed prediction vector and the scores."""

    round: Round
    outcomes: tuple[OutcomeCode, ...]
    predictions: dict[str, tuple[Bp, ...]]
    scores: dict[str, RoundScore]
    roles: dict[str, str] = Field(default_factory=dict)
    """Agents whose role is not ``agent`` (``reference`` for the market consensus)."""

    @model_validator(mode="after")
    def _check(self) -> RoundResult:
        k = self.round.k
        if len(self.outcomes) != k:
            raise ValueError(f"round {self.round.round_id}: {len(self.outcomes)} outcomes for {k}")
        for agent, preds in self.predictions.items():
            if len(preds) != k:
                raise ValueError(
                    f"round {self.round.round_id}: agent {agent} revealed {len(preds)} of {k}"
                )
        return self
