"""A local EVM node over JSON-RPC: Foundry's ``anvil`` (from npm, ``make test`` installs it) on
the loopback, for tests and local use; the contracts run there as on any chain ``EvmArena``
reaches by URL (a testnet in production)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from pastcast.atomic import write_atomic
from pastcast_arena._contracts import find_foundry_tool

NODE_FILE = "node.json"
"""Where a lasting node is recorded (URL, process id, chain id) in its folder."""
NODE_STATE = "anvil-state.json"
"""The chain anvil keeps on disk (dumped every ``STATE_INTERVAL_S`` and when it stops)."""
STATE_INTERVAL_S = 1
STARTUP_S = 60.0  # how long a starting anvil has to answer


@dataclass(frozen=True)
class LocalNode:
    url: str
    """The node's JSON-RPC endpoint, ``http://127.0.0.1:PORT``."""
    chain_id: int
    pid: int


def _free_port(preferred: int = 0) -> int:
    """``preferred`` where it is free, else a port the system picks."""
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", preferred))
        except OSError:
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


def _anvil() -> str:
    exe = find_foundry_tool("anvil")
    if exe is None:
        raise FileNotFoundError(
            "anvil not found: make test installs it (npm install --prefix .venv/foundry "
            "@foundry-rs/anvil), or set PASTCAST_ANVIL"
        )
    return exe


def _wait_answer(proc: subprocess.Popen[bytes], url: str) -> int:
    deadline = time.monotonic() + STARTUP_S
    while (found := _chain_id(url)) is None:
        if proc.poll() is not None:
            raise RuntimeError(f"anvil exited with status {proc.returncode} before answering")
        if time.monotonic() > deadline:
            raise RuntimeError(f"anvil did not answer on {url} within {STARTUP_S:.0f} s")
        time.sleep(0.1)
    return found


@contextmanager
def local_node(*, chain_id: int = 31337) -> Iterator[LocalNode]:
    """A fresh ``anvil`` on a free loopback port: a ``lasting_node`` in a temporary folder,
    stopped on leaving. ``FileNotFoundError`` when anvil is not installed."""
    with (
        tempfile.TemporaryDirectory(prefix="pastcast-anvil-") as folder,
        lasting_node(Path(folder), chain_id=chain_id) as node,
    ):
        yield node


def _is_anvil(pid: int) -> bool:
    """The process ``pid`` runs and is an anvil (where /proc tells; elsewhere: it runs)."""
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    cmdline = Path(f"/proc/{pid}/cmdline")
    if not cmdline.parent.exists():
        return True
    try:
        return b"anvil" in cmdline.read_bytes()
    except OSError:
        return False


def _recorded(folder: Path) -> LocalNode | None:
    try:
        raw = json.loads((folder / NODE_FILE).read_text(encoding="utf-8"))
        return LocalNode(str(raw["url"]), int(raw["chain_id"]), int(raw["pid"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _stop(pid: int, proc: subprocess.Popen[bytes] | None, timeout_s: float = 15.0) -> None:
    """SIGTERM (anvil dumps its state on the way out), SIGKILL if it lingers."""
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    if proc is not None:
        try:
            proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        return
    deadline = time.monotonic() + timeout_s
    while _is_anvil(pid):  # not our child: its parent (init) reaps it
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            return
        time.sleep(0.05)


@contextmanager
def lasting_node(
    folder: Path,
    *,
    timestamp: int | None = None,
    chain_id: int = 31337,
    note: Callable[[str], None] = lambda _: None,
) -> Iterator[LocalNode]:
    """A local anvil that outlives a killed process, recorded in ``folder`` (docs/arena.md,
    "Live rounds"): reused while it answers, else started again from its state file (``note``
    says so) or anew, from ``timestamp`` when given; stopped on leaving short of a kill."""
    folder.mkdir(parents=True, exist_ok=True)
    recorded = _recorded(folder)
    proc: subprocess.Popen[bytes] | None = None
    node: LocalNode | None = None
    if recorded is not None and _is_anvil(recorded.pid):
        # alive: answering, or still starting (a process killed while it waited for it)
        deadline = time.monotonic() + STARTUP_S
        while (found := _chain_id(recorded.url)) is None and _is_anvil(recorded.pid):
            if time.monotonic() > deadline:
                break
            time.sleep(0.1)
        if found == recorded.chain_id:
            node = recorded
            note(f"reusing the local node at {node.url} (process {node.pid})")
        else:  # not the node it was: never two writers of one state file
            _stop(recorded.pid, None)
    if node is None:
        state = folder / NODE_STATE
        port = _free_port(int(recorded.url.rsplit(":", 1)[1]) if recorded is not None else 0)
        args = [_anvil(), "--host", "127.0.0.1", "--port", str(port), "--chain-id", str(chain_id)]
        args += ["--state", str(state), "--state-interval", str(STATE_INTERVAL_S), "--silent"]
        if state.exists():
            note(f"the local node was gone: starting it again from {state}")
        if timestamp is not None:
            # a chain loaded from its state would go on at the wall clock; this one goes on at
            # ``timestamp`` (a compressed clock's time)
            args += ["--timestamp", str(timestamp)]
        with open(folder / "anvil.log", "ab") as logfile:
            proc = subprocess.Popen(
                args,
                stdin=subprocess.DEVNULL,
                stdout=logfile,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # a signal to the service's group does not reach it
            )
        url = f"http://127.0.0.1:{port}"
        # recorded before it answers: a process killed meanwhile leaves it findable
        body = {"url": url, "chain_id": chain_id, "pid": proc.pid}
        write_atomic(folder / NODE_FILE, json.dumps(body, indent=1) + "\n")
        try:
            node = LocalNode(url, _wait_answer(proc, url), proc.pid)
        except BaseException:
            _stop(proc.pid, proc)
            raise
    try:
        yield node
    finally:
        _stop(node.pid, proc)
