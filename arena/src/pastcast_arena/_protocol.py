"""The commit-reveal protocol in Python, byte for byte as the contract computes it: the
commitment and the EIP-712 ``Commit`` and ``Reveal`` messages (docs/arena.md, "The protocol");
and what an arena offers (``ArenaBackend``), a chain or the ledger alike."""

from __future__ import annotations

import contextlib
import math
import secrets
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, TypeVar

from pastcast.records import Record
from pastcast_arena._records import MAX_BP, RoundScore, SignedCommit, SignedReveal

M = TypeVar("M", SignedCommit, SignedReveal)

# secp256k1 order / 2: the contract refuses signatures with a larger s (malleable copies).
_HALF_N = 0x7FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF5D576E7357A4501DDFE92F46681B20A0


def _fields(solidity: str) -> list[dict[str, str]]:
    """EIP-712 type fields from their Solidity declaration (``"uint256 roundId, ..."``)."""
    return [dict(zip(("type", "name"), f.split(), strict=True)) for f in solidity.split(",")]


_DOMAIN_FIELDS = _fields("string name, string version, uint256 chainId, address verifyingContract")
_COMMIT_FIELDS = _fields(
    "uint256 roundId, bytes32 commitHash, address agent, uint256 nonce, uint256 deadline"
)
_REVEAL_FIELDS = _fields(
    "uint256 roundId, bytes32 predictionsHash, bytes32 salt, address agent, uint256 nonce, "
    "uint256 deadline"
)


def require_evm_extra() -> None:
    """Fail with one line naming the pip install when the EVM libraries are missing."""
    try:
        import eth_account  # noqa: F401
        import eth_hash.auto  # noqa: F401
    except ImportError as exc:
        raise ImportError(
            f"the arena protocol needs {exc.name}, a dependency of the arena's distribution: "
            "pip install -e arena (in pastcast's repository)"
        ) from None


def keccak_hex(data: bytes) -> str:
    require_evm_extra()
    from eth_hash.auto import keccak

    return "0x" + bytes(keccak(data)).hex()


def _bytes32(value: str, what: str) -> bytes:
    raw = bytes.fromhex(value.removeprefix("0x"))
    if len(raw) != 32:
        raise ValueError(f"{what}: expected 32 bytes, got {len(raw)}")
    return raw


def to_bp(p: float) -> int:
    """A probability as basis points, rounded half up (0.12345 -> 1235)."""
    if not math.isfinite(p) or p < 0.0 or p > 1.0:
        raise ValueError(f"probability {p!r} is not in [0, 1]")
    return min(MAX_BP, math.floor(p * MAX_BP + 0.5))


def _packed(predictions: Sequence[int]) -> bytes:
    """``abi.encodePacked(uint16[] predictions)``: each element padded to 32 bytes."""
    for i, p in enumerate(predictions):
        if not isinstance(p, int) or isinstance(p, bool) or not 0 <= p <= MAX_BP:
            raise ValueError(f"prediction {i}: {p!r} is not an integer in [0, {MAX_BP}] bp")
    return b"".join(p.to_bytes(32, "big") for p in predictions)


def new_salt() -> str:
    """A fresh secret 32-byte salt (0x hex)."""
    return "0x" + secrets.token_bytes(32).hex()


def commitment(round_id: int, predictions: Sequence[int], salt: str) -> str:
    """``keccak256(abi.encodePacked(uint256 roundId, uint16[] predictions, bytes32 salt))``."""
    if round_id < 0 or round_id >= 2**256:
        raise ValueError(f"round id {round_id} does not fit a uint256")
    return keccak_hex(round_id.to_bytes(32, "big") + _packed(predictions) + _bytes32(salt, "salt"))


def predictions_hash(predictions: Sequence[int]) -> str:
    """``keccak256(abi.encodePacked(uint16[] predictions))``, the Reveal message's field."""
    return keccak_hex(_packed(predictions))


def condition_id_for(market_id: str) -> str:
    """The market's conditional-tokens condition id: the id itself when it is one (Polymarket
    ids are condition ids), otherwise keccak256 of the id's text (a stable stand-in)."""
    tail = market_id.rpartition(":")[2].lower()
    if tail.startswith("0x") and len(tail) == 66:
        with contextlib.suppress(ValueError):
            bytes.fromhex(tail[2:])
            return tail
    return keccak_hex(market_id.encode("utf-8"))


class Domain(Record):
    """The EIP-712 domain of one arena deployment."""

    chain_id: int
    verifying_contract: str
    name: str = "PredictionArena"
    version: str = "1"

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "version": self.version,
            "chainId": self.chain_id,
            "verifyingContract": self.verifying_contract,
        }


def _typed(domain: Domain, fields: Mapping[str, Any]) -> dict[str, Any]:
    """The EIP-712 typed data of a ``Commit`` (``fields`` with a ``commit_hash``) or a
    ``Reveal`` message (``predictions`` and ``salt``), as the contract hashes it."""
    if "commit_hash" in fields:
        primary, types = "Commit", _COMMIT_FIELDS
        body = {"commitHash": _bytes32(fields["commit_hash"], "commit hash")}
    else:
        primary, types = "Reveal", _REVEAL_FIELDS
        body = {
            "predictionsHash": _bytes32(
                predictions_hash(fields["predictions"]), "predictions hash"
            ),
            "salt": _bytes32(fields["salt"], "salt"),
        }
    return {
        "types": {"EIP712Domain": _DOMAIN_FIELDS, primary: types},
        "primaryType": primary,
        "domain": domain.as_dict(),
        "message": {
            "roundId": fields["round_id"],
            **body,
            **{k: fields[k] for k in ("agent", "nonce", "deadline")},
        },
    }


def _signable(typed: dict[str, Any]) -> Any:
    require_evm_extra()
    from eth_account.messages import encode_typed_data

    return encode_typed_data(full_message=typed)


def message_digest(domain: Domain, msg: SignedCommit | SignedReveal) -> str:
    """The EIP-712 digest the agent signs for ``msg`` (what the contract's commitDigest and
    revealDigest return)."""
    m = _signable(_typed(domain, msg.model_dump()))
    return keccak_hex(b"\x19" + bytes(m.version) + bytes(m.header) + bytes(m.body))


def _account(private_key: str) -> Any:
    require_evm_extra()
    from eth_account import Account

    return Account.from_key(private_key)


def _signed(kind: type[M], private_key: str, domain: Domain, **fields: Any) -> M:
    account = _account(private_key)
    fields["agent"] = str(account.address)
    signature = account.sign_message(_signable(_typed(domain, fields))).signature
    return kind(**fields, signature="0x" + bytes(signature).hex())


def sign_commit(
    private_key: str, domain: Domain, round_id: int, commit_hash: str, nonce: int, deadline: int
) -> SignedCommit:
    """The agent's signed ``Commit`` for a relayer to submit."""
    return _signed(
        SignedCommit,
        private_key,
        domain,
        round_id=round_id,
        commit_hash=commit_hash,
        nonce=nonce,
        deadline=deadline,
    )


def sign_reveal(
    private_key: str,
    domain: Domain,
    round_id: int,
    predictions: Sequence[int],
    salt: str,
    nonce: int,
    deadline: int,
) -> SignedReveal:
    return _signed(
        SignedReveal,
        private_key,
        domain,
        round_id=round_id,
        predictions=tuple(predictions),
        salt=salt,
        nonce=nonce,
        deadline=deadline,
    )


def _recover(digest: str, signature: str) -> str:
    """The signer of ``digest``, under the contract's rules (low s, v in {27, 28})."""
    raw = bytes.fromhex(signature.removeprefix("0x"))
    if len(raw) != 65:
        raise ValueError("signature must be 65 bytes")
    s, v = int.from_bytes(raw[32:64], "big"), raw[64]
    if s > _HALF_N:
        raise ValueError("malleable signature (s above secp256k1n/2)")
    if v not in (27, 28):
        raise ValueError(f"bad signature v {v}")
    from eth_keys.datatypes import Signature
    from eth_keys.exceptions import BadSignature
    from eth_utils.exceptions import ValidationError

    r = int.from_bytes(raw[:32], "big")
    try:
        public = Signature(vrs=(v - 27, r, s)).recover_public_key_from_msg_hash(
            _bytes32(digest, "digest")
        )
    except (BadSignature, ValidationError) as exc:  # r or s out of range, or off the curve
        raise ValueError(f"invalid signature ({exc})") from None
    return str(public.to_checksum_address())


def recover_signer(domain: Domain, msg: SignedCommit | SignedReveal) -> str:
    """Who signed ``msg``; ``ValueError`` for a signature the contract refuses."""
    return _recover(message_digest(domain, msg), msg.signature)


def reasoning_digest(round_id: int, commit_hash: str, traces: Any) -> str:
    """keccak256 of the canonical JSON of a commitment's reasoning traces: what the agent signs
    (EIP-191) to publish them beside its commitment."""
    from pastcast.safejson import canonical_json

    body = {"round_id": round_id, "commit_hash": commit_hash.lower(), "traces": traces}
    return keccak_hex(canonical_json(body).encode())


def sign_reasoning(private_key: str, round_id: int, commit_hash: str, traces: Any) -> str:
    """The agent's EIP-191 signature of ``reasoning_digest``."""
    from eth_account.messages import encode_defunct

    account = _account(private_key)
    digest = bytes.fromhex(reasoning_digest(round_id, commit_hash, traces)[2:])
    return "0x" + bytes(account.sign_message(encode_defunct(primitive=digest)).signature).hex()


def recover_reasoning_signer(round_id: int, commit_hash: str, traces: Any, signature: str) -> str:
    require_evm_extra()
    from eth_account import Account
    from eth_account.messages import encode_defunct

    digest = bytes.fromhex(reasoning_digest(round_id, commit_hash, traces)[2:])
    return str(Account.recover_message(encode_defunct(primitive=digest), signature=signature))


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
