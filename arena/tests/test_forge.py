"""The contracts' Forge suite (arena/tests/forge: the rejections the Python EVM tests check,
commit-reveal, the reputation feedback and the arena's entries fuzzed, the identity token's
ERC-721 behaviours with receiving and refusing contracts), run by forge from npm with solcjs as
its compiler, offline; and a check that the suite fails when a contract loses one of its
rules."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from pastcast_arena._contracts import find_foundry_tool, find_solcjs

FORGE_DIR = Path(__file__).parent / "forge"
CONTRACTS = Path(__file__).parents[1] / "src" / "pastcast_arena" / "contracts"
FORGE = find_foundry_tool("forge")
SOLCJS = find_solcjs()
NODE = shutil.which("node")
if not (FORGE and SOLCJS and NODE):
    pytest.skip(
        "forge, solcjs or node is missing (make test installs @foundry-rs/forge and solc from npm)",
        allow_module_level=True,
    )


def _compiler(tmp: Path) -> Path:
    """A ``solc`` for forge: the shim over the solcjs module the Makefile installed."""
    module = Path(str(SOLCJS)).resolve().parent  # .bin/solcjs -> node_modules/solc/solc.js
    wrapper = tmp / "solc"
    wrapper.write_text(
        f'#!/bin/sh\nSOLCJS_MODULE="{module}" exec "{NODE}" "{FORGE_DIR / "solc-forge.cjs"}" "$@"\n'
    )
    wrapper.chmod(0o755)
    return wrapper


def _forge(root: Path, tmp: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "FOUNDRY_OUT": str(tmp / "out"),
        "FOUNDRY_CACHE_PATH": str(tmp / "cache"),
        "NO_COLOR": "1",
    }
    return subprocess.run(
        [
            str(FORGE),
            "test",
            "--offline",
            "--use",
            str(_compiler(tmp)),
            "--root",
            str(root),
            *extra,
        ],
        capture_output=True,
        text=True,
        timeout=900,
        env=env,
    )


def test_the_forge_suite_passes(tmp_path: Path) -> None:
    result = _forge(FORGE_DIR, tmp_path)
    out = result.stdout + result.stderr
    assert result.returncode == 0, out[-4000:]
    summary = re.search(r"(\d+) tests passed, (\d+) failed", out)
    assert summary, out[-2000:]
    assert int(summary.group(1)) >= 48 and summary.group(2) == "0"
    # the commit-reveal properties, the feedback and the arena's entries were fuzzed
    assert out.count("runs: 256") >= 5


RULES = [
    (
        "PredictionArena.sol",
        'require(e.commitHash == bytes32(0), "Arena: already committed");',
        "test_secondCommitIsRefused",
    ),
    (
        "ReputationRegistry.sol",
        'require(!identity.isAuthorizedOrOwner(msg.sender, agentId), "Reputation: self-feedback");',
        "test_anyoneButTheOwnerAndOperatorsGivesFeedback",
    ),
    (
        "ReputationRegistry.sol",
        'require(!f.isRevoked, "Reputation: already revoked");',
        "test_onlyTheClientRevokesOnce",
    ),
    (
        "AgentRegistry.sol",
        "require(answer == IERC721Receiver.onERC721Received.selector, "
        '"Registry: receiver refused the token");',
        "test_aWrongAnswerRefusesTheTransfer",
    ),
]


@pytest.mark.parametrize(
    ("source", "rule", "test"), RULES, ids=["commit", "self-feedback", "revoke", "receiver"]
)
def test_the_suite_fails_when_a_contract_loses_a_rule(
    tmp_path: Path, source: str, rule: str, test: str
) -> None:
    # a copy of the project whose contract lost one rule (a second commitment over the first,
    # feedback from the agent's own owner, a revocation twice, a token to a receiver that
    # answered wrong)
    project = tmp_path / "forge"
    shutil.copytree(FORGE_DIR, project, ignore=shutil.ignore_patterns("out", "cache"))
    contracts = tmp_path / "src" / "pastcast_arena" / "contracts"
    shutil.copytree(CONTRACTS, contracts, ignore=shutil.ignore_patterns("*.json"))
    (tmp_path / "tests").mkdir()
    shutil.move(project, tmp_path / "tests" / "forge")
    root = tmp_path / "tests" / "forge"
    path = contracts / source
    assert rule in path.read_text()
    path.write_text(path.read_text().replace(rule, ""))
    (tmp_path / "run").mkdir()
    result = _forge(root, tmp_path / "run", "--match-test", test)
    out = result.stdout + result.stderr
    assert result.returncode != 0 and "[FAIL" in out, out[-3000:]
