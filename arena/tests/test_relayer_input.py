"""The arena relayer against hostile clients: bodies past the bound (declared or streamed), bodies
that are not JSON, integers no contract holds, values of the wrong type, tampered and replayed
signed messages, a curator token that is not ASCII. Each is a 4xx with a one-line JSON detail;
none reaches the arena, and none costs the relayer memory it did not mean to spend."""

from __future__ import annotations

import asyncio
import importlib.util
from pathlib import Path
from typing import Any

import pytest

from pastcast_arena import LedgerArena, sign_commit
from pastcast_arena._protocol import commitment, condition_id_for
from pastcast_arena._relayer import RelayerPolicy, create_relayer

pytest.importorskip("fastapi", reason="the relayer needs the 'arena' extra")
# Found, not imported: eth_account is imported by the tests that sign.
if importlib.util.find_spec("eth_account") is None:
    pytest.skip("signing needs the 'arena' extra", allow_module_level=True)
from fastapi.testclient import TestClient

T = 1_750_000_000
SALT = "0x" + "07" * 32
LIMIT = 64 * 1024


def _key(n: int) -> str:
    return "0x" + f"{n + 1:064x}"


@pytest.fixture
def arena(tmp_path: Path) -> LedgerArena:
    ledger = LedgerArena.create(tmp_path / "l.jsonl", clock=lambda: T)
    for i in range(2):
        ledger.register(_key(i), f"agent-{i}")
    ledger.create_round([condition_id_for("m0"), condition_id_for("m1")], T + 600, T + 1200)
    ledger.create_round([condition_id_for("m2")], T + 600, T + 1200)
    return ledger


@pytest.fixture
def client(arena: LedgerArena) -> TestClient:
    app = create_relayer(arena, RelayerPolicy(per_minute=30), admin_token="curator-secret")
    return TestClient(app, raise_server_exceptions=False)


def _commit(arena: LedgerArena, i: int = 0, rid: int = 1, nonce: int = 0) -> dict[str, Any]:
    msg = sign_commit(
        _key(i), arena.domain, rid, commitment(rid, [6000, 2500], SALT), nonce, T + 600
    )
    return msg.model_dump(mode="json")


def _detail(response: Any) -> str:
    detail = response.json()["detail"]
    assert isinstance(detail, str) and "\n" not in detail
    return detail


# -- the body's bound, before it is read --


def _asgi(app: Any, headers: list[tuple[bytes, bytes]], receive: Any) -> tuple[int, bytes]:
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/commit",
        "raw_path": b"/commit",
        "query_string": b"",
        "root_path": "",
        "headers": [(b"content-type", b"application/json"), *headers],
        "client": ("127.0.0.1", 5000),
        "server": ("127.0.0.1", 8787),
    }
    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    asyncio.run(app(scope, receive, send))
    status = next(m["status"] for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return status, body


def test_a_declared_400_mib_body_is_refused_without_reading_it(arena: LedgerArena) -> None:
    async def receive() -> dict[str, Any]:
        raise AssertionError("the body was read")

    app = create_relayer(arena)
    status, body = _asgi(app, [(b"content-length", str(400 << 20).encode())], receive)
    assert status == 413 and b"65536" in body


def test_a_chunked_body_is_refused_as_soon_as_it_passes_the_bound(arena: LedgerArena) -> None:
    calls = 0

    async def receive() -> dict[str, Any]:  # 400 MiB in 4 KiB chunks, if anyone read it all
        nonlocal calls
        calls += 1
        if calls > (400 << 20) // 4096:
            return {"type": "http.request", "body": b"", "more_body": False}
        return {"type": "http.request", "body": b" " * 4096, "more_body": True}

    status, _ = _asgi(create_relayer(arena), [], receive)
    assert status == 413
    assert calls <= LIMIT // 4096 + 1


def test_a_client_that_goes_mid_body_gets_nothing_and_costs_nothing(arena: LedgerArena) -> None:
    messages = [{"type": "http.request", "body": b"{", "more_body": True}]

    async def receive() -> dict[str, Any]:
        return messages.pop(0) if messages else {"type": "http.disconnect"}

    scope_headers = [(b"content-length", b"100")]
    with pytest.raises(StopIteration):  # no response was started
        _asgi(create_relayer(arena), scope_headers, receive)
    assert arena.nonce(sign_commit_agent()) == 0


def sign_commit_agent() -> str:
    from eth_account import Account

    return str(Account.from_key(_key(0)).address)


@pytest.mark.parametrize(
    ("content_length", "status"),
    [(b"abc", 400), (b"-1", 400), (b"1e9", 400), (b"99999999999999999999999", 413)],
)
def test_a_malformed_or_huge_content_length_is_refused(
    arena: LedgerArena, content_length: bytes, status: int
) -> None:
    async def receive() -> dict[str, Any]:
        raise AssertionError("the body was read")

    assert _asgi(create_relayer(arena), [(b"content-length", content_length)], receive)[0] == status


def test_two_content_lengths_are_refused(arena: LedgerArena) -> None:
    async def receive() -> dict[str, Any]:
        raise AssertionError("the body was read")

    headers = [(b"content-length", b"2"), (b"content-length", b"3")]
    assert _asgi(create_relayer(arena), headers, receive)[0] == 400


# -- bodies and values --

NOT_JSON = {
    "nested 50,000 deep": b"[" * 50_000,
    "a number of 10,000 digits": b'{"round_id": ' + b"9" * 10_000 + b"}",
    "not UTF-8": b'{"agent": "\xff\xfe"}',
    "truncated": b'{"round_id": 1, "agent": "0x',
}


@pytest.mark.parametrize("name", sorted(NOT_JSON))
def test_a_body_that_is_not_json_is_a_400(client: TestClient, name: str) -> None:
    r = client.post("/commit", content=NOT_JSON[name], headers={"content-type": "application/json"})
    assert r.status_code == 400 and "not JSON" in _detail(r)


WRONG = {
    "round_id 2**300": ("round_id", 2**300),
    "round_id 2**256": ("round_id", 2**256),
    "nonce 2**300": ("nonce", 2**300),
    "deadline 2**300": ("deadline", 2**300),
    "round_id as a string": ("round_id", "1"),
    "round_id as true": ("round_id", True),
    "round_id as a float": ("round_id", 1.0),
    "round_id negative": ("round_id", -1),
    "signature as a number": ("signature", 7),
    "agent not an address": ("agent", "0x1234"),
    "commit_hash too short": ("commit_hash", "0x00"),
}


@pytest.mark.parametrize("name", sorted(WRONG))
def test_a_value_of_the_wrong_type_or_size_is_a_400(
    client: TestClient, arena: LedgerArena, name: str
) -> None:
    field, value = WRONG[name]
    r = client.post("/commit", json={**_commit(arena), field: value})
    assert r.status_code == 400 and _detail(r).startswith(f"body.{field}")
    assert arena.nonce(sign_commit_agent()) == 0


@pytest.mark.parametrize("body", [[], "commit", None, {"round_id": 1}])
def test_a_body_of_the_wrong_shape_is_a_400(client: TestClient, body: Any) -> None:
    r = client.post("/commit", json=body)
    assert r.status_code == 400 and _detail(r).startswith("body")


def test_a_huge_round_id_in_a_path_is_a_400(client: TestClient) -> None:
    auth = {"Authorization": "Bearer curator-secret"}
    for path in (f"/admin/rounds/{2**300}/outcomes", f"/admin/rounds/{2**300}/scores"):
        r = client.post(path, headers=auth)
        assert r.status_code == 400 and _detail(r).startswith("path.round_id")
    r = client.post(f"/admin/rounds/{2**300}/benchmarks", json={"prices_bp": [1]}, headers=auth)
    assert r.status_code == 400


def test_huge_deadlines_and_payouts_of_the_curator_are_a_400(client: TestClient) -> None:
    auth = {"Authorization": "Bearer curator-secret"}
    cid = "0x" + "00" * 32
    round_ = {"condition_ids": [cid], "commit_deadline": 2**300, "reveal_deadline": 2**301}
    assert client.post("/admin/rounds", json=round_, headers=auth).status_code == 400
    payout = {"condition_id": cid, "numerators": [2**300, 1]}
    assert client.post("/admin/payouts", json=payout, headers=auth).status_code == 400


@pytest.mark.parametrize(
    "value", ["Bearer é".encode(), b"Bearer \xff\xfe", "Bearer curator-secreté".encode()]
)
def test_a_curator_token_that_is_not_ascii_is_a_401(client: TestClient, value: bytes) -> None:
    body = {"address": "0x" + "11" * 20, "name": "x"}
    r = client.post("/admin/agents", json=body, headers={"Authorization": value})  # type: ignore[dict-item]
    assert r.status_code == 401 and "token" in _detail(r)


# -- signatures and replays --


def test_a_tampered_commit_is_a_400(client: TestClient, arena: LedgerArena) -> None:
    body = _commit(arena)
    body["commit_hash"] = "0x" + "ab" * 32  # signed over another hash
    r = client.post("/commit", json=body)
    assert r.status_code == 400 and "signature" in _detail(r)


def test_a_commit_signed_by_another_agent_is_a_400(client: TestClient, arena: LedgerArena) -> None:
    body = _commit(arena, i=1)
    body["agent"] = _commit(arena, i=0)["agent"]
    assert client.post("/commit", json=body).status_code == 400


def test_a_replayed_commit_is_refused(client: TestClient, arena: LedgerArena) -> None:
    body = _commit(arena)
    assert client.post("/commit", json=body).status_code == 200
    again = client.post("/commit", json=body)
    assert again.status_code == 429 and "one commit per agent and round" in _detail(again)


def test_a_used_nonce_for_another_round_is_refused(client: TestClient, arena: LedgerArena) -> None:
    assert client.post("/commit", json=_commit(arena, rid=1, nonce=0)).status_code == 200
    replay = client.post("/commit", json=_commit(arena, rid=2, nonce=0))
    assert replay.status_code == 409 and "nonce" in _detail(replay)
