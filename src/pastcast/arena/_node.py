"""A local EVM node over JSON-RPC: Foundry's ``anvil`` (from npm, ``make test`` installs it) on
the loopback, for tests and local use; the contracts run there as on any chain ``EvmArena``
reaches by URL (a testnet in production)."""

from __future__ import annotations

import json
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from pastcast.arena._contracts import find_foundry_tool

__all__ = ["LocalNode", "local_node"]


@dataclass(frozen=True)
class LocalNode:
    url: str
    """The node's JSON-RPC endpoint, ``http://127.0.0.1:PORT``."""
    chain_id: int
    pid: int


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _chain_id(url: str) -> int | None:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "eth_chainId", "params": []}).encode()
    request = urllib.request.Request(url, body, {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=2) as reply:
            return int(json.loads(reply.read())["result"], 16)
    except (OSError, ValueError, KeyError):
        return None


@contextmanager
def local_node(
    *, chain_id: int = 31337, timestamp: int | None = None, startup_s: float = 60.0
) -> Iterator[LocalNode]:
    """Start ``anvil`` on a free loopback port (its clock at ``timestamp`` when given), wait until
    it answers, and stop it on leaving. ``FileNotFoundError`` when anvil is not installed."""
    exe = find_foundry_tool("anvil")
    if exe is None:
        raise FileNotFoundError(
            "anvil not found: make test installs it (npm install --prefix .venv/foundry "
            "@foundry-rs/anvil), or set PASTCAST_ANVIL"
        )
    port = _free_port()
    args = [exe, "--host", "127.0.0.1", "--port", str(port), "--chain-id", str(chain_id)]
    args += ["--silent"]
    if timestamp is not None:
        args += ["--timestamp", str(timestamp)]
    proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + startup_s
        while (found := _chain_id(url)) is None:
            if proc.poll() is not None:
                raise RuntimeError(f"anvil exited with status {proc.returncode} before answering")
            if time.monotonic() > deadline:
                raise RuntimeError(f"anvil did not answer on {url} within {startup_s:.0f} s")
            time.sleep(0.1)
        yield LocalNode(url, found, proc.pid)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
