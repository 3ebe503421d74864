"""Fuzz every `pastcast arena` command with the core's harness (tests/hardening/test_cli_fuzz.py):
each parameter in turn gets nasty values of its type while the others keep valid ones; every case
ends with exit 0, 1 or 2 and one ``error:`` line, never a traceback."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "hardening"))
from nasty import Workspace, build_workspace, truncate
from test_cli_fuzz import (
    OUTPUTS,
    ROOT,
    Skeleton,
    Suite,
    _leaves,
    _no_server,  # noqa: F401  (the harness's fixture: servers return at once)
    cases,
    check_skeletons,
    fuzz_case,
    kept,
)

from pastcast.cli import app

COMMANDS = dict(_leaves(ROOT.commands["arena"], ("arena",)))


def _live_plan(t: Path) -> Path:
    path = t / "live.yaml"  # a closed loopback port: no request leaves the machine
    url = "http://127.0.0.1:9"
    path.write_text(
        f"out: {t / 'live'}\nagents: [random]\nrounds: 1\n"
        f"polymarket: {{gamma_url: '{url}', clob_url: '{url}', data_url: '{url}'}}\n"
    )
    return path


SKELETONS: dict[tuple[str, ...], Skeleton] = {
    ("arena", "commit-hash"): lambda ws, t: {
        "round_id": "1",
        "predictions": "6000,2500",
        "salt": "0x" + "11" * 32,
    },
    ("arena", "replay"): lambda ws, t: {
        "dataset": ws.good["dataset"],
        "agent": ["uniform"],
        "out": t / "arena",
        "markets": "1",
        "rounds": "2",
        "interval_days": "3",
    },
    ("arena", "live"): lambda ws, t: {"plan": _live_plan(t)},
    ("arena", "report"): lambda ws, t: {"rounds": ws.good["rounds"]},
    ("arena", "serve"): lambda ws, t: {"ledger": t / "ledger.jsonl"},
    ("arena", "simulate"): lambda ws, t: {"rounds": "3"},
    ("arena", "verify"): lambda ws, t: {"ledger": ws.good["ledger"]},
}
# The Solidity compiler and the live service reach outside even with valid values; the
# calibration fits over 400 seeds (minutes).
HEAVY = {("arena", "compile"), ("arena", "live"), ("arena", "calibrate")}
SKIP = {("arena", "compile", "write"): "rewrites the contract artifacts shipped in the package"}
SUITE = Suite(COMMANDS, SKELETONS, HEAVY, OUTPUTS | {"arena serve ledger"})


def _with_the_arenas(ws: Workspace) -> Workspace:
    """The core's workspace with the arena's valid inputs (rounds, a ledger) and rounds cut off
    mid-line."""
    sim = ws.root / "sim"
    made = CliRunner().invoke(app, ["arena", "simulate", "--rounds", "3", "--out", str(sim)])
    assert made.exit_code == 0, made.output
    ws.good["rounds"] = sim / "rounds.jsonl"
    ws.good["ledger"] = ws.root / "ledger.jsonl"
    try:
        from pastcast_arena import LedgerArena

        LedgerArena.create(ws.good["ledger"])
    except ImportError:  # without the EVM libraries: the command refuses any ledger alike
        ws.good["ledger"].write_text("")
    ws.bad["truncated_rounds"] = ws.root / "nasty" / "rounds.jsonl"
    shutil.copy(ws.good["rounds"], ws.bad["truncated_rounds"])
    truncate(ws.bad["truncated_rounds"], 0.6)
    return ws


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Workspace]:
    with kept(_with_the_arenas(build_workspace(tmp_path_factory.mktemp("fuzz")))) as ws:
        yield ws


@pytest.mark.timeout(600, method="thread")  # the signal is taken by each case
@pytest.mark.parametrize(("path", "name", "special"), cases(COMMANDS, SKIP))
@pytest.mark.slow
def test_fuzz(
    path: tuple[str, ...],
    name: str | None,
    special: str | None,
    workspace: Workspace,
    tmp_path: Path,
) -> None:
    fuzz_case(SUITE, path, name, special, workspace, tmp_path)


def test_every_command_with_required_parameters_has_valid_values() -> None:
    check_skeletons(SUITE)
