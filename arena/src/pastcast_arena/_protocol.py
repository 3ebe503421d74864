"""The commit-reveal protocol in Python, byte for byte as the contract computes it: the
commitment ``keccak256(abi.encodePacked(uint256 roundId, uint16[] predictions, bytes32 salt))``
(each array element padded to 32 bytes, as Solidity packs arrays) and the EIP-712 ``Commit`` and
``Reveal`` messages with per-agent nonces (docs/arena.md, "The protocol").
"""

from __future__ import annotations

import math
import secrets
from collections.abc import Sequence
from typing import Any

from pastcast.records import Record
from pastcast_arena._records import MAX_BP, SignedCommit, SignedReveal

__all__ = [
    "Domain",
    "commit_digest",
    "commit_typed_data",
    "commitment",
    "condition_id_for",
    "keccak_hex",
    "new_salt",
    "predictions_hash",
    "recover_commit_signer",
    "recover_reveal_signer",
    "require_evm_extra",
    "reveal_digest",
    "reveal_typed_data",
    "sign_commit",
    "sign_reveal",
    "to_bp",
]

# secp256k1 order / 2: the contract refuses signatures with a larger s (malleable copies).
_HALF_N = 0x7FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF5D576E7357A4501DDFE92F46681B20A0

_DOMAIN_FIELDS = [
    {"name": "name", "type": "string"},
    {"name": "version", "type": "string"},
    {"name": "chainId", "type": "uint256"},
    {"name": "verifyingContract", "type": "address"},
]
_COMMIT_FIELDS = [
    {"name": "roundId", "type": "uint256"},
    {"name": "commitHash", "type": "bytes32"},
    {"name": "agent", "type": "address"},
    {"name": "nonce", "type": "uint256"},
    {"name": "deadline", "type": "uint256"},
]
_REVEAL_FIELDS = [
    {"name": "roundId", "type": "uint256"},
    {"name": "predictionsHash", "type": "bytes32"},
    {"name": "salt", "type": "bytes32"},
    {"name": "agent", "type": "address"},
    {"name": "nonce", "type": "uint256"},
    {"name": "deadline", "type": "uint256"},
]


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


def _keccak(data: bytes) -> bytes:
    require_evm_extra()
    from eth_hash.auto import keccak

    return bytes(keccak(data))


def keccak_hex(data: bytes) -> str:
    return "0x" + _keccak(data).hex()


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


def _check_predictions(predictions: Sequence[int]) -> None:
    for i, p in enumerate(predictions):
        if not isinstance(p, int) or isinstance(p, bool) or not 0 <= p <= MAX_BP:
            raise ValueError(f"prediction {i}: {p!r} is not an integer in [0, {MAX_BP}] bp")


def new_salt() -> str:
    """A fresh secret 32-byte salt (0x hex)."""
    return "0x" + secrets.token_bytes(32).hex()


def commitment(round_id: int, predictions: Sequence[int], salt: str) -> str:
    """``keccak256(abi.encodePacked(uint256 roundId, uint16[] predictions, bytes32 salt))``."""
    if round_id < 0 or round_id >= 2**256:
        raise ValueError(f"round id {round_id} does not fit a uint256")
    _check_predictions(predictions)
    packed = (
        round_id.to_bytes(32, "big")
        + b"".join(p.to_bytes(32, "big") for p in predictions)
        + _bytes32(salt, "salt")
    )
    return keccak_hex(packed)


def predictions_hash(predictions: Sequence[int]) -> str:
    """``keccak256(abi.encodePacked(uint16[] predictions))``, the Reveal message's field."""
    _check_predictions(predictions)
    return keccak_hex(b"".join(p.to_bytes(32, "big") for p in predictions))


def condition_id_for(market_id: str) -> str:
    """The market's conditional-tokens condition id: the id itself when it is one (Polymarket
    ids are condition ids), otherwise keccak256 of the id's text (a stable stand-in)."""
    tail = market_id.rpartition(":")[2].lower()
    if tail.startswith("0x") and len(tail) == 66:
        try:
            bytes.fromhex(tail[2:])
            return tail
        except ValueError:
            pass
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


def _typed(
    domain: Domain, primary: str, fields: list[dict[str, str]], message: dict[str, Any]
) -> dict[str, Any]:
    return {
        "types": {"EIP712Domain": _DOMAIN_FIELDS, primary: fields},
        "primaryType": primary,
        "domain": domain.as_dict(),
        "message": message,
    }


def commit_typed_data(
    domain: Domain, round_id: int, commit_hash: str, agent: str, nonce: int, deadline: int
) -> dict[str, Any]:
    return _typed(
        domain,
        "Commit",
        _COMMIT_FIELDS,
        {
            "roundId": round_id,
            "commitHash": _bytes32(commit_hash, "commit hash"),
            "agent": agent,
            "nonce": nonce,
            "deadline": deadline,
        },
    )


def reveal_typed_data(
    domain: Domain,
    round_id: int,
    predictions: Sequence[int],
    salt: str,
    agent: str,
    nonce: int,
    deadline: int,
) -> dict[str, Any]:
    return _typed(
        domain,
        "Reveal",
        _REVEAL_FIELDS,
        {
            "roundId": round_id,
            "predictionsHash": _bytes32(predictions_hash(predictions), "predictions hash"),
            "salt": _bytes32(salt, "salt"),
            "agent": agent,
            "nonce": nonce,
            "deadline": deadline,
        },
    )


def _signable(typed: dict[str, Any]) -> Any:
    require_evm_extra()
    from eth_account.messages import encode_typed_data

    return encode_typed_data(full_message=typed)


def _digest(typed: dict[str, Any]) -> str:
    m = _signable(typed)
    return keccak_hex(b"\x19" + bytes(m.version) + bytes(m.header) + bytes(m.body))


def commit_digest(domain: Domain, msg: SignedCommit) -> str:
    """The EIP-712 digest the agent signs for ``msg`` (what the contract's commitDigest returns)."""
    return _digest(
        commit_typed_data(domain, msg.round_id, msg.commit_hash, msg.agent, msg.nonce, msg.deadline)
    )


def reveal_digest(domain: Domain, msg: SignedReveal) -> str:
    return _digest(
        reveal_typed_data(
            domain, msg.round_id, msg.predictions, msg.salt, msg.agent, msg.nonce, msg.deadline
        )
    )


def _account(private_key: str) -> Any:
    require_evm_extra()
    from eth_account import Account

    return Account.from_key(private_key)


def _sign(account: Any, typed: dict[str, Any]) -> str:
    return "0x" + bytes(account.sign_message(_signable(typed)).signature).hex()


def sign_commit(
    private_key: str,
    domain: Domain,
    round_id: int,
    commit_hash: str,
    nonce: int,
    deadline: int,
) -> SignedCommit:
    """The agent's signed ``Commit`` for a relayer to submit."""
    account = _account(private_key)
    agent = str(account.address)
    sig = _sign(account, commit_typed_data(domain, round_id, commit_hash, agent, nonce, deadline))
    return SignedCommit(
        round_id=round_id,
        commit_hash=commit_hash,
        agent=agent,
        nonce=nonce,
        deadline=deadline,
        signature=sig,
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
    account = _account(private_key)
    agent = str(account.address)
    typed = reveal_typed_data(domain, round_id, predictions, salt, agent, nonce, deadline)
    sig = _sign(account, typed)
    return SignedReveal(
        round_id=round_id,
        predictions=tuple(predictions),
        salt=salt,
        agent=agent,
        nonce=nonce,
        deadline=deadline,
        signature=sig,
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


def recover_commit_signer(domain: Domain, msg: SignedCommit) -> str:
    return _recover(commit_digest(domain, msg), msg.signature)


def recover_reveal_signer(domain: Domain, msg: SignedReveal) -> str:
    return _recover(reveal_digest(domain, msg), msg.signature)


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
