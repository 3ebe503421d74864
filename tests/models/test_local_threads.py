"""The llama.cpp thread count: 2 unless the caller or ``$PASTCAST_LLAMA_THREADS`` says otherwise
(one thread on a machine whose cores other processes keep busy). No server is started."""

from __future__ import annotations

from pathlib import Path

import pytest

from pastcast.models import LocalLlamaServer, ModelError


@pytest.fixture
def gguf(tmp_path: Path) -> Path:
    path = tmp_path / "m.gguf"
    path.write_bytes(b"GGUF")
    return path


def test_two_threads_by_default(gguf: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PASTCAST_LLAMA_THREADS", raising=False)
    assert LocalLlamaServer(gguf).n_threads == 2


def test_the_environment_sets_the_default(gguf: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PASTCAST_LLAMA_THREADS", " 1 ")
    assert LocalLlamaServer(gguf).n_threads == 1
    assert LocalLlamaServer(gguf, n_threads=3).n_threads == 3  # an explicit count wins


@pytest.mark.parametrize("raw", ["0", "-1", "two", "1.5"])
def test_a_bad_count_is_refused_naming_the_variable(
    gguf: Path, monkeypatch: pytest.MonkeyPatch, raw: str
) -> None:
    monkeypatch.setenv("PASTCAST_LLAMA_THREADS", raw)
    with pytest.raises(ModelError, match=r"PASTCAST_LLAMA_THREADS.*positive whole number"):
        LocalLlamaServer(gguf)
