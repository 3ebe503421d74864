"""The relayer: checks signatures, one commit and one reveal per agent and round, rate limits,
simulates before submitting, binds to loopback by default; the curator's actions need a token."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from arena_helpers import key, make_round, needs_evm
from pastcast.cli import app
from pastcast_arena import LedgerArena, SignedCommit, SignedReveal, sign_commit, sign_reveal
from pastcast_arena._play import RoundPlayer
from pastcast_arena._protocol import commitment, condition_id_for
from pastcast_arena._relayer import RelayerPolicy, create_relayer

needs_evm()
from fastapi.testclient import TestClient  # noqa: E402

SALT = "0x" + "07" * 32
T = 1_750_000_000


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


@pytest.fixture
def setup(tmp_path: Path) -> tuple[LedgerArena, TestClient, Clock, int]:
    arena = LedgerArena.create(tmp_path / "l.jsonl", clock=lambda: T)
    for i in range(3):
        arena.register(key(i), f"agent-{i}")
    rid = arena.create_round([condition_id_for(f"r{i}") for i in range(2)], T + 600, T + 1200)
    clock = Clock()
    client = TestClient(create_relayer(arena, RelayerPolicy(per_minute=3, clock=clock)))
    return arena, client, clock, rid


def _commit(arena: LedgerArena, i: int, rid: int, preds: list[int], **kw: Any) -> SignedCommit:
    from eth_account import Account

    agent = Account.from_key(key(i)).address
    nonce = kw.pop("nonce", arena.nonce(agent))
    return sign_commit(key(i), arena.domain, rid, commitment(rid, preds, SALT), nonce, T + 600)


def _post(client: TestClient, path: str, msg: SignedCommit | SignedReveal) -> Any:
    return client.post(path, json=msg.model_dump(mode="json"))


def test_a_signed_commit_and_reveal_go_through(setup: Any) -> None:
    arena, client, _, rid = setup
    assert client.get("/domain").json()["verifyingContract"] == arena.domain.verifying_contract
    msg = _commit(arena, 0, rid, [6000, 2500])
    r = _post(client, "/commit", msg)
    assert r.status_code == 200 and r.json()["receipt"] == arena.head
    assert client.get(f"/nonce/{msg.agent}").json()["nonce"] == 1
    arena.advance_to(T + 600)
    arena.set_benchmarks(rid, [5000, 5000])
    rev = sign_reveal(key(0), arena.domain, rid, [6000, 2500], SALT, 1, T + 1200)
    assert _post(client, "/reveal", rev).status_code == 200


def test_bad_signatures_are_400_and_never_reach_the_arena(setup: Any) -> None:
    arena, client, _, rid = setup
    msg = _commit(arena, 0, rid, [1, 2])
    head = arena.head
    forged = msg.model_copy(update={"agent": _commit(arena, 1, rid, [1, 2]).agent})
    r = _post(client, "/commit", forged)
    assert r.status_code == 400 and "not" in r.json()["detail"]
    garbled = msg.model_copy(update={"signature": "0x" + "00" * 64 + "1b"})
    assert _post(client, "/commit", garbled).status_code == 400
    assert client.post("/commit", json={"round_id": 1}).status_code == 400
    assert arena.head == head


def test_one_commit_per_agent_and_round_and_a_rate_limit(setup: Any) -> None:
    arena, client, clock, rid = setup
    assert _post(client, "/commit", _commit(arena, 0, rid, [1, 2])).status_code == 200
    again = _post(client, "/commit", _commit(arena, 0, rid, [2, 1]))
    assert again.status_code == 429 and "one commit per agent and round" in again.json()["detail"]
    # three accepted submissions a minute per agent (the policy of this fixture)
    rids = [arena.create_round([condition_id_for(f"x{j}")], T + 600, T + 1200) for j in range(3)]
    assert _post(client, "/commit", _commit(arena, 0, rids[0], [1])).status_code == 200
    assert _post(client, "/commit", _commit(arena, 0, rids[1], [1])).status_code == 200
    limited = _post(client, "/commit", _commit(arena, 0, rids[2], [1]))
    assert limited.status_code == 429 and "rate limit" in limited.json()["detail"]
    clock.t = 61.0
    assert _post(client, "/commit", _commit(arena, 0, rids[2], [1])).status_code == 200


def test_rule_violations_are_409_with_the_contracts_reason_and_cost_nothing(setup: Any) -> None:
    arena, client, _, rid = setup
    stale = _commit(arena, 1, rid, [1, 2], nonce=5)
    r = _post(client, "/commit", stale)
    assert r.status_code == 409 and r.json()["detail"] == "Arena: invalid nonce"
    # a refused message does not count against the one-per-round rule
    assert _post(client, "/commit", _commit(arena, 1, rid, [1, 2])).status_code == 200
    arena.advance_to(T + 600)
    late = _post(client, "/commit", _commit(arena, 2, rid, [1, 2]))
    assert late.status_code == 409 and late.json()["detail"] == "Arena: commit phase is over"
    assert verify_lines(arena) == arena.head


def verify_lines(arena: LedgerArena) -> str:
    from pastcast_arena import verify_ledger

    return verify_ledger(arena.path).head


def test_curator_actions_need_the_token(tmp_path: Path) -> None:
    arena = LedgerArena.create(tmp_path / "c.jsonl", clock=lambda: T)
    closed = TestClient(create_relayer(arena))
    body = {"address": "0x" + "ab" * 20, "name": "x"}
    assert closed.post("/admin/agents", json=body).status_code == 403
    client = TestClient(create_relayer(arena, admin_token="s3cret"))
    assert client.post("/admin/agents", json=body).status_code == 401
    auth = {"Authorization": "Bearer s3cret"}
    assert client.post("/admin/agents", json=body, headers=auth).status_code == 200
    new = {
        "condition_ids": [condition_id_for("c0")],
        "commit_deadline": T + 10,
        "reveal_deadline": T + 20,
    }
    r = client.post("/admin/rounds", json=new, headers=auth)
    assert r.status_code == 200 and r.json()["round_id"] == 1
    early = client.post("/admin/rounds/1/benchmarks", json={"prices_bp": [5000]}, headers=auth)
    assert early.status_code == 409 and "commit phase still open" in early.json()["detail"]


def test_a_round_relayed_to_the_evm(evm: Any) -> None:
    client = TestClient(create_relayer(evm))

    class ViaHttp:
        def commit(self, msg: SignedCommit) -> None:
            assert _post(client, "/commit", msg).status_code == 200

        def reveal(self, msg: SignedReveal) -> None:
            assert _post(client, "/reveal", msg).status_code == 200

    preds = {"h1": [9000, 100, 5000], "h2": [5000, 5000, 5000]}
    player = RoundPlayer(evm, {n: key(30 + i) for i, n in enumerate(preds)}, submitter=ViaHttp())
    res = player.play(make_round([7000, 2000, 5000], tag="http"), preds, [True, False, True])
    assert set(res.scores) == {"h1", "h2"}
    # the chain recorded what went through the relayer
    assert evm.nonce(player.addresses["h1"]) == 2


def test_serve_binds_to_loopback_by_default_and_checks_its_options(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import pastcast.serving

    seen: dict[str, Any] = {}
    monkeypatch.setattr(
        pastcast.serving, "serve_app", lambda app_, sock: seen.update(host=sock.getsockname()[0])
    )
    listen = pastcast.serving.listen

    def any_free_port(host: str, port: int) -> Any:
        # the default port is asked for; a free one is bound, since another server on this
        # machine (a Dask dashboard's default is the same) may hold the default
        seen["port"] = port
        return listen(host, 0)

    monkeypatch.setattr(pastcast.serving, "listen", any_free_port)
    runner = CliRunner()
    ok = runner.invoke(app, ["arena", "serve", "--ledger", str(tmp_path / "s.jsonl")])
    assert ok.exit_code == 0, ok.output
    assert seen["host"] == "127.0.0.1" and seen["port"] == 8787
    assert (tmp_path / "s.jsonl").is_file()
    both = runner.invoke(app, ["arena", "serve", "--ledger", str(tmp_path / "t.jsonl"), "--evm"])
    assert both.exit_code == 2 and "exactly one of" in both.output
