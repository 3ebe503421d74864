"""The protocol in Python: basis points, the commitment's packing, EIP-712 signatures, records."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from arena_helpers import key, needs_evm
from pastcast_arena import SignedCommit, sign_commit, sign_reveal, to_bp
from pastcast_arena._protocol import (
    Domain,
    commitment,
    condition_id_for,
    predictions_hash,
    recover_signer,
)

needs_evm()

SALT = "0x" + "11" * 32
DOMAIN = Domain(chain_id=137, verifying_contract="0x" + "ab" * 20)


def test_to_bp_rounds_half_up_and_refuses_out_of_range() -> None:
    assert [to_bp(v) for v in (0.0, 0.6, 0.25, 0.12345, 0.00005, 1.0)] == [
        0,
        6000,
        2500,
        1235,
        1,
        10_000,
    ]
    for bad in (-0.01, 1.01, float("nan")):
        with pytest.raises(ValueError):
            to_bp(bad)


def test_commitment_pads_each_prediction_to_32_bytes_as_solidity_packs_arrays() -> None:
    from eth_hash.auto import keccak

    preds = [6000, 2500]
    padded = (1).to_bytes(32, "big") + b"".join(p.to_bytes(32, "big") for p in preds)
    expected = "0x" + keccak(padded + bytes.fromhex("11" * 32)).hex()
    assert commitment(1, preds, SALT) == expected
    # The "2 bytes per uint16" packing some descriptions give is a different hash; the EVM
    # tests check which one the compiled contract computes.
    tight = (1).to_bytes(32, "big") + b"".join(p.to_bytes(2, "little") for p in preds)
    assert commitment(1, preds, SALT) != "0x" + keccak(tight + bytes.fromhex("11" * 32)).hex()
    assert commitment(1, preds, SALT) != commitment(2, preds, SALT)
    assert commitment(1, preds, SALT) != commitment(1, [2500, 6000], SALT)


@pytest.mark.parametrize(
    ("preds", "salt", "message"),
    [
        ([10_001], SALT, "prediction 0"),
        ([-1], SALT, "prediction 0"),
        ([5000], "0x11", "salt"),
    ],
)
def test_commitment_refuses_bad_input(preds: list[int], salt: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        commitment(1, preds, salt)


def test_signatures_recover_their_signer_and_nothing_else() -> None:
    c = commitment(3, [100, 9900], SALT)
    msg = sign_commit(key(0), DOMAIN, 3, c, nonce=0, deadline=2_000_000_000)
    assert recover_signer(DOMAIN, msg) == msg.agent
    # Any change to the message, or another domain, recovers someone else.
    for changed in (
        msg.model_copy(update={"nonce": 1}),
        msg.model_copy(update={"round_id": 4}),
        msg.model_copy(update={"deadline": 2_000_000_001}),
    ):
        assert recover_signer(DOMAIN, changed) != msg.agent
    other = DOMAIN.model_copy(update={"chain_id": 1})
    assert recover_signer(other, msg) != msg.agent
    rev = sign_reveal(key(0), DOMAIN, 3, [100, 9900], SALT, nonce=1, deadline=2_000_000_000)
    assert recover_signer(DOMAIN, rev) == rev.agent
    tampered = rev.model_copy(update={"predictions": (100, 9800)})
    assert recover_signer(DOMAIN, tampered) != rev.agent
    assert predictions_hash([100, 9900]) != predictions_hash([100, 9800])


def test_malleable_high_s_signatures_are_refused() -> None:
    n = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141
    msg = sign_commit(key(1), DOMAIN, 1, commitment(1, [1], SALT), 0, 2_000_000_000)
    raw = bytes.fromhex(msg.signature[2:])
    r, s, v = raw[:32], int.from_bytes(raw[32:64], "big"), raw[64]
    flipped = r + (n - s).to_bytes(32, "big") + bytes([55 - v])  # the same point, s above n/2
    twin = msg.model_copy(update={"signature": "0x" + flipped.hex()})
    with pytest.raises(ValueError, match="malleable"):
        recover_signer(DOMAIN, twin)


def test_signed_messages_validate_their_fields() -> None:
    good = {
        "round_id": 1,
        "commit_hash": "0x" + "aa" * 32,
        "agent": "0x" + "ab" * 20,
        "nonce": 0,
        "deadline": 1,
        "signature": "0x" + "cd" * 65,
    }
    SignedCommit.model_validate(good)
    for field, value in (
        ("commit_hash", "0x1234"),
        ("agent", "0xnothex"),
        ("signature", "0x00"),
        ("round_id", 0),
    ):
        with pytest.raises(ValidationError, match=field):
            SignedCommit.model_validate({**good, field: value})


def test_condition_ids_keep_polymarket_ids_and_hash_the_rest() -> None:
    cid = "0x" + "0f" * 32
    assert condition_id_for(f"polymarket:{cid}") == cid
    other = condition_id_for("manifold:abc")
    assert other.startswith("0x") and len(other) == 66 and other != condition_id_for("manifold:abd")


def test_addresses_are_normalised_to_their_checksum_form() -> None:
    msg = sign_commit(key(2), DOMAIN, 1, commitment(1, [1], SALT), 0, 2_000_000_000)
    lower = SignedCommit.model_validate({**msg.model_dump(), "agent": msg.agent.lower()})
    assert lower.agent == msg.agent  # one agent, one spelling: nonces and entries key on it
    assert recover_signer(DOMAIN, lower) == lower.agent
