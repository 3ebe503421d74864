"""The shipped ABI and bytecode are what the shipped sources compile to."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from pastcast.cli import app
from pastcast_arena import artifacts
from pastcast_arena._contracts import CONTRACTS, SOLC_VERSION, compile_contracts, find_solcjs


def test_every_contract_ships_abi_and_bytecode() -> None:
    art = artifacts()
    assert set(art) == set(CONTRACTS)
    for name, c in art.items():
        assert c["bytecode"].startswith("0x6") and len(c["bytecode"]) > 1000, name
    names = {f["name"] for f in art["PredictionArena"]["abi"] if f.get("type") == "function"}
    assert {
        "commit",
        "commitWithSignature",
        "reveal",
        "revealWithSignature",
        "triggerOutcomes",
        "calculateScoresForPendingReveals",
        "computeCommitHash",
    } <= names


def test_recompiling_the_sources_gives_the_shipped_artifacts() -> None:
    solcjs = find_solcjs()
    if solcjs is None:
        pytest.skip(f"solcjs not installed (npm install --prefix .venv/solc solc@{SOLC_VERSION})")
    compiled = compile_contracts(solcjs)
    assert compiled["solc"].startswith(SOLC_VERSION)
    assert compiled["contracts"] == artifacts()


def test_the_compile_command_names_a_missing_compiler(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PASTCAST_SOLCJS", str(tmp_path / "no-solcjs"))
    r = CliRunner().invoke(app, ["arena", "compile"])
    assert r.exit_code == 2 and "no-solcjs: cannot run" in r.output
    assert r.output.strip().count("\n") == 0
