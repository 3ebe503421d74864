"""The Solidity sources, their compiled ABI and bytecode (shipped as package data), and the solcjs
call (``npm install --prefix .venv/solc solc@0.8.37``) that reproduces them byte for byte."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

SOLC_VERSION = "0.8.37"
CONTRACTS = (
    "AgentRegistry",
    "ArenaBatch",
    "MockConditionalTokens",
    "PredictionArena",
    "ReputationRegistry",
    "RoundManager",
)
ARTIFACTS_FILE = "artifacts.json"
SETTINGS: dict[str, Any] = {
    "optimizer": {"enabled": True, "runs": 200},
    # py-evm's newest fork; a later default target could emit opcodes it does not know
    "evmVersion": "prague",
    "outputSelection": {"*": {"*": ["abi", "evm.bytecode.object"]}},
}


def _contracts_dir() -> Path:
    return Path(str(resources.files("pastcast_arena") / "contracts"))


def _find_tool(name: str, local: Iterable[Path]) -> str | None:
    """``$PASTCAST_<NAME>``, then the first executable of ``local`` (installed beside the
    interpreter's environment), then one on ``PATH``."""
    explicit = os.environ.get(f"PASTCAST_{name.upper()}")
    if explicit:
        return explicit
    found = (str(p) for p in local if p.is_file() and os.access(p, os.X_OK))
    return next(found, None) or shutil.which(name)


def find_solcjs() -> str | None:
    """``solcjs``: ``$PASTCAST_SOLCJS``, then ``<venv>/solc`` (the Makefile's), then ``PATH``."""
    return _find_tool("solcjs", [Path(sys.prefix) / "solc" / "node_modules" / ".bin" / "solcjs"])


def find_foundry_tool(name: str) -> str | None:
    """Foundry's ``anvil`` or ``forge``: ``$PASTCAST_ANVIL`` / ``$PASTCAST_FORGE``, then the
    binary of the npm platform package installed beside the interpreter's environment (``make
    test``: ``.venv/foundry``; the binary itself, not npm's node launcher, which neither passes
    on the exit status nor stops the node with it), then ``PATH``."""
    packages = Path(sys.prefix) / "foundry" / "node_modules" / "@foundry-rs"
    return _find_tool(name, sorted(packages.glob(f"{name}-*/bin/{name}")))


def compile_contracts(solcjs: str | None = None, timeout_s: float = 300.0) -> dict[str, Any]:
    """Compile the shipped sources; returns ``{"solc": version, "settings": ..., "contracts":
    {name: {"abi", "bytecode"}}}``. Raises ``RuntimeError`` naming the problem."""
    exe = solcjs or find_solcjs()
    if exe is None:
        raise RuntimeError(
            "solcjs not found: npm install --prefix .venv/solc solc@"
            f"{SOLC_VERSION} (or set PASTCAST_SOLCJS)"
        )
    folder = _contracts_dir()
    request = {
        "language": "Solidity",
        "sources": {
            f"{c}.sol": {"content": (folder / f"{c}.sol").read_text("utf-8")} for c in CONTRACTS
        },
        "settings": SETTINGS,
    }
    try:
        version = subprocess.run(
            [exe, "--version"], capture_output=True, text=True, timeout=timeout_s, check=False
        ).stdout.strip()
    except OSError as exc:
        raise RuntimeError(f"{exe}: cannot run ({exc.strerror or exc})") from None
    if not version.startswith(SOLC_VERSION):
        raise RuntimeError(f"{exe}: solc {version or '?'} found, {SOLC_VERSION} needed")
    # solcjs prints the output and exits at once: into a pipe the reader has not drained, the
    # rest of a large output is lost (node queues it), so it writes to a file, synchronously.
    with tempfile.TemporaryFile("w+", encoding="utf-8") as sink:
        proc = subprocess.run(
            [exe, "--standard-json"],
            input=json.dumps(request),
            stdout=sink,
            stderr=subprocess.PIPE,
            text=True,
            timeout=timeout_s,
            check=False,
        )
        sink.seek(0)
        stdout = sink.read()
    # solcjs may print a notice line before the JSON document
    start = stdout.find("{")
    if proc.returncode != 0 or start < 0:
        raise RuntimeError(f"{exe} failed ({proc.returncode}): {proc.stderr.strip()[:500]}")
    out = json.loads(stdout[start:])
    errors = [e for e in out.get("errors", []) if e.get("severity") == "error"]
    if errors:
        raise RuntimeError(f"solc: {errors[0].get('formattedMessage', errors[0])}".strip())
    contracts: dict[str, Any] = {}
    for unit in out["contracts"].values():
        for name, c in unit.items():
            if name in CONTRACTS:
                code = "0x" + c["evm"]["bytecode"]["object"]
                contracts[name] = {"abi": c["abi"], "bytecode": code}
    return {"solc": version, "settings": SETTINGS, "contracts": contracts}


def write_artifacts(compiled: dict[str, Any]) -> Path:
    target = _contracts_dir() / ARTIFACTS_FILE
    target.write_text(json.dumps(compiled, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return target


@cache
def artifacts() -> dict[str, dict[str, Any]]:
    """The shipped ``{"abi": [...], "bytecode": "0x..."}`` of every contract, by name."""
    data = json.loads((_contracts_dir() / ARTIFACTS_FILE).read_text("utf-8"))
    contracts: dict[str, dict[str, Any]] = data["contracts"]
    return contracts
