"""The arena's commands against hostile inputs and the user's files: a folder pastcast did not
make is never written into, an address that cannot be listened on makes no ledger, rounds cut
mid-line are named as such, and a body nested past the JSON limit does not crash the relayer.
Each refusal is one `error:` line, exit 2, with the user's files as they were."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from _tiny import tiny_dataset
from pastcast.cli import app
from pastcast.dataset import save_dataset

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[2]


def _snapshot(path: Path) -> dict[str, bytes]:
    return {str(p.relative_to(path)): p.read_bytes() for p in path.rglob("*") if p.is_file()}


def _refused(args: list[str], *names: str) -> str:
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert lines[-1].startswith("error: ") and sum(x.startswith("error") for x in lines) == 1
    for name in names:
        assert name in lines[-1]
    return lines[-1]


@pytest.fixture
def busy_port() -> Iterator[int]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(1)
    try:
        yield sock.getsockname()[1]
    finally:
        sock.close()


def test_arena_serve_on_a_busy_port_makes_no_ledger(tmp_path: Path, busy_port: int) -> None:
    ledger = tmp_path / "live.jsonl"
    _refused(["arena", "serve", "--ledger", str(ledger), "--port", str(busy_port)], "cannot listen")
    assert not ledger.exists()


def test_arena_serve_on_an_unresolvable_host_is_one_error_line(tmp_path: Path) -> None:
    ledger = tmp_path / "live.jsonl"
    args = ["arena", "serve", "--ledger", str(ledger), "--host", "no-such-host.invalid"]
    _refused(args, "does not resolve")
    assert not ledger.exists()


def test_arena_rounds_cut_mid_line(tmp_path: Path) -> None:
    sim = tmp_path / "sim"
    made = runner.invoke(app, ["arena", "simulate", "--rounds", "3", "--out", str(sim)])
    assert made.exit_code == 0, made.output
    rounds = sim / "rounds.jsonl"
    data = rounds.read_bytes()
    rounds.write_bytes(data[: len(data) - 40])
    message = _refused(["arena", "report", str(rounds)])
    assert f"{rounds}:3:" in message and "cut short" in message


@pytest.mark.parametrize(
    "command",
    [
        ["arena", "simulate", "--rounds", "2", "--out", "{mine}"],
        ["arena", "replay", "--dataset", "{ds}", "-a", "uniform", "--markets", "1"]
        + ["--out", "{mine}"],
    ],
    ids=["simulate", "replay"],
)
def test_arena_commands_never_write_into_a_users_folder(tmp_path: Path, command: list[str]) -> None:
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "thesis.tex").write_bytes(b"years of work")
    (mine / "manifest.json").write_bytes(b'{"name": "my web app"}')  # looks like ours, is not
    (mine / "rounds.jsonl").write_text("my own rounds")
    before = _snapshot(mine)
    ds = tmp_path / "ds"
    save_dataset(tiny_dataset(), ds)
    args = [a.replace("{mine}", str(mine)).replace("{ds}", str(ds)) for a in command]
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    assert _snapshot(mine) == before


def test_a_simulation_folder_is_written_again(tmp_path: Path) -> None:
    out = tmp_path / "sim"
    for _ in range(2):
        result = runner.invoke(app, ["arena", "simulate", "--rounds", "2", "--out", str(out)])
        assert result.exit_code == 0, result.output


@pytest.mark.slow
def test_a_deep_body_does_not_crash_the_relayer(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from fastapi.testclient import TestClient\n"
        "from pastcast_arena import LedgerArena\n"
        "from pastcast_arena._relayer import create_relayer\n"
        f"app = create_relayer(LedgerArena.create({str(tmp_path / 'l.jsonl')!r}))\n"
        "client = TestClient(app)\n"
        "headers = {'content-type': 'application/json'}\n"
        "for body in (b'[' * 30_000, b'[' * 300_000, b'{}'):\n"
        "    print(client.post('/commit', content=body, headers=headers).status_code)\n"
    )
    paths = [ROOT / "src", ROOT / "arena" / "src", os.environ.get("PYTHONPATH", "")]
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=300,
        env={"PYTHONPATH": os.pathsep.join(str(p) for p in paths if str(p))},
    )
    if "No module named" in done.stderr:
        pytest.skip(done.stderr.strip().splitlines()[-1])
    assert done.returncode == 0, done.stderr[-500:]
    assert done.stdout.split() == ["400", "413", "400"]  # a body of the wrong shape: 400
