"""`pastcast arena commit-hash` prints the commitment the contract computes."""

from __future__ import annotations

import json
from typing import Any

from typer.testing import CliRunner

from arena_helpers import needs_evm
from pastcast.cli import app

needs_evm()

SALT = "0x" + "ab" * 32


def test_commit_hash_matches_the_contract(evm: Any) -> None:
    r = CliRunner().invoke(
        app,
        ["arena", "commit-hash", "--round-id", "7", "--predictions", "6000,2500", "--salt", SALT],
    )
    assert r.exit_code == 0, r.output
    on_chain = evm.arena.functions.computeCommitHash(
        7, [6000, 2500], bytes.fromhex(SALT[2:])
    ).call()
    assert r.output.strip() == "0x" + on_chain.hex()
    j = CliRunner().invoke(
        app,
        [
            "arena",
            "commit-hash",
            "--round-id",
            "7",
            "--predictions",
            "6000, 2500",
            "--salt",
            SALT,
            "--json",
        ],
    )
    assert json.loads(j.output)["commitment"] == r.output.strip()


def test_commit_hash_errors_are_one_line() -> None:
    runner = CliRunner()
    for args, msg in (
        (["--predictions", "6000,x", "--salt", SALT], "item 2 ('x') is not an integer"),
        (["--predictions", "10001", "--salt", SALT], "not an integer in [0, 10000]"),
        (["--predictions", "1", "--salt", "0x12"], "salt: expected 32 bytes"),
    ):
        r = runner.invoke(app, ["arena", "commit-hash", "--round-id", "1", *args])
        assert r.exit_code == 2 and msg in r.output, (args, r.output)
        assert r.output.strip().count("\n") == 0
