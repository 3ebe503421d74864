"""A local llama.cpp model server (OpenAI-compatible HTTP on loopback), fully offline (extra
``local``): ``LocalLlamaServer`` runs it, ``LocalModel`` puts the OpenAI-compatible provider in
front and states its ``context_limits`` (docs/models.md, "Local llama.cpp server").
"""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import weakref
from pathlib import Path
from typing import Any

from pastcast.models._context import ContextLimits
from pastcast.models._openai import OpenAICompatibleModel
from pastcast.models._protocol import ChatRequest, ChatResponse, ModelError

DEFAULT_N_CTX = 8192
THREADS_ENV = "PASTCAST_LLAMA_THREADS"
"""Overrides the server's default of 2 threads: 1 on a machine whose cores other processes keep
busy (llama.cpp's threads meet at a barrier every step; two starved threads wait for each other)."""
DEFAULT_MAX_TOKENS = 1024
"""The reply cap of a local request that names none: a small model left unbounded can write
thousands of tokens (6,747 seen) and overflow its window; 1,024 is ample for an answer."""


def local_context_limits(rest: str, options: dict[str, Any]) -> ContextLimits:
    """The context limits of ``local:REST`` built with ``options`` (the provider's
    ``context_limits``: known without starting it, so a replayed run fits its requests as the
    recorded one did)."""
    return ContextLimits(
        window=int(options.get("n_ctx", DEFAULT_N_CTX)),
        default_max_tokens=int(options.get("default_max_tokens", DEFAULT_MAX_TOKENS)),
    )


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=10.0)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


class LocalLlamaServer:
    """Context manager running a llama.cpp server for one GGUF model."""

    def __init__(
        self,
        model_path: str | Path,
        port: int | None = None,
        *,
        chat_format: str = "chatml-function-calling",
        n_ctx: int = DEFAULT_N_CTX,
        n_threads: int | None = None,
        ready_timeout_s: float = 180.0,
    ) -> None:
        self.model_path = Path(model_path)
        if not self.model_path.is_file():
            raise ModelError(f"{self.model_path}: model file not found")
        self.port = port
        self.chat_format = chat_format
        self.n_ctx = n_ctx
        if n_threads is None:  # ``$PASTCAST_LLAMA_THREADS``, else 2
            raw = os.environ.get(THREADS_ENV, "").strip() or "2"
            if not raw.isdigit() or int(raw) < 1:
                why = f"expected a positive whole number of threads, got {raw!r}"
                raise ModelError(f"{THREADS_ENV}: {why}")
            n_threads = int(raw)
        self.n_threads = n_threads
        self.ready_timeout_s = ready_timeout_s
        self._proc: subprocess.Popen[bytes] | None = None
        self._log: Path | None = None

    @property
    def base_url(self) -> str:
        if self.port is None:
            raise ModelError("server not started")
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> LocalLlamaServer:
        if self._proc is not None:
            return self
        if importlib.util.find_spec("llama_cpp") is None:
            raise ModelError("llama-cpp-python is not installed: pip install 'pastcast[local]'")
        self.port = self.port or _free_port()
        cmd = [
            sys.executable, "-m", "llama_cpp.server",
            "--model", str(self.model_path),
            "--model_alias", "local",
            "--chat_format", self.chat_format,
            "--n_threads", str(self.n_threads),
            "--n_ctx", str(self.n_ctx),
            "--host", "127.0.0.1",
            "--port", str(self.port),
        ]  # fmt: skip
        fd, log = tempfile.mkstemp(prefix="llama-server-", suffix=".log")
        self._log = Path(log)
        with os.fdopen(fd, "wb") as out:
            self._proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
        weakref.finalize(self, _stop, self._proc)
        try:
            self._wait_ready()
        except BaseException:  # Ctrl-C or SIGTERM while it starts: no server left behind
            self.stop()
            raise
        return self

    def _log_tail(self) -> str:
        if self._log is None:
            return ""
        try:
            return self._log.read_text(errors="replace")[-2000:]
        except OSError:
            return ""

    def _wait_ready(self) -> None:
        assert self._proc is not None
        deadline = time.monotonic() + self.ready_timeout_s
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                tail = self._log_tail()
                self.stop()
                raise ModelError(f"llama.cpp server exited during start-up:\n{tail}")
            try:
                with urllib.request.urlopen(f"{self.base_url}/models", timeout=2) as resp:
                    if resp.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.25)
        tail = self._log_tail()
        self.stop()
        raise ModelError(f"llama.cpp server not ready after {self.ready_timeout_s:.0f} s:\n{tail}")

    def exit_note(self) -> str | None:
        """Why the server is gone (its exit status and last log lines), or None while it runs."""
        if self._proc is None or self._proc.poll() is None:
            return None
        lines = [ln for ln in self._log_tail().splitlines() if ln.strip()][-3:]
        return f"the llama.cpp server exited ({self._proc.returncode}): " + " | ".join(lines)

    def stop(self) -> None:
        if self._proc is not None:
            _stop(self._proc)
            self._proc = None
        if self._log is not None:
            self._log.unlink(missing_ok=True)
            self._log = None

    def __enter__(self) -> LocalLlamaServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class LocalModel:
    """A GGUF model served locally; ``close()`` (or leaving the ``with`` block) stops it."""

    def __init__(
        self,
        model_path: str | Path,
        *,
        timeout_s: float = 600.0,
        default_max_tokens: int = DEFAULT_MAX_TOKENS,
        **server_opts: object,
    ) -> None:
        self.server = LocalLlamaServer(model_path, **server_opts)  # type: ignore[arg-type]
        self.context_limits = ContextLimits(
            window=self.server.n_ctx, default_max_tokens=default_max_tokens
        )
        self.server.start()
        self._client = OpenAICompatibleModel(
            "local",
            base_url=self.server.base_url,
            api_key_env=None,
            provider="local",
            timeout_s=timeout_s,
            max_retries=1,
            schema_style="json_object",  # llama.cpp's form of schema-constrained output
            name=f"local:{self.server.model_path.name}",
            unsupported=("reasoning_effort",),  # llama.cpp has no such setting
        )

    @property
    def name(self) -> str:
        return self._client.name

    def chat(self, request: ChatRequest) -> ChatResponse:
        try:
            return self._client.chat(request)
        except ModelError as exc:
            stopped = self.server.exit_note()
            if stopped:  # say why the connection dropped, not only that it did
                raise ModelError(f"{self.name}: {stopped}") from exc
            raise

    def close(self) -> None:
        self.server.stop()

    def __enter__(self) -> LocalModel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
