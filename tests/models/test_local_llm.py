"""A real llama.cpp server with the packaged SmolLM2-135M model (2 threads, CPU, offline).

SmolLM2-135M's answers are meaningless; these tests check the plumbing: start-up on a free
loopback port, plain chat, schema-constrained JSON that parses, and a clean stop.
"""

from __future__ import annotations

import importlib.util
import json
import urllib.request
from collections.abc import Iterator

import pytest

# Found, not imported: collecting this module stays cheap.
if importlib.util.find_spec("llama_cpp") is None:
    pytest.skip("llama-cpp-python not installed (extra 'local')", allow_module_level=True)

from pastcast.models import ChatRequest, LocalLlamaServer, ModelError, resolve_model
from pastcast.models._local import LocalModel
from pastcast.models._packaged import smollm2_path
from pastcast.records import Message

pytestmark = [pytest.mark.local_llm, pytest.mark.timeout(300)]


@pytest.fixture(scope="module")
def model() -> Iterator[LocalModel]:
    try:
        path = smollm2_path()
    except ModelError as exc:
        pytest.skip(str(exc))
    m = resolve_model(f"local:{path}")
    assert isinstance(m, LocalModel)
    yield m
    m.close()


def test_plain_chat(model: LocalModel) -> None:
    req = ChatRequest(
        messages=(Message(role="user", content="Say hello in one sentence."),),
        max_tokens=24,
        temperature=0.0,
    )
    resp = model.chat(req)
    assert resp.content.strip()
    assert resp.usage.model_calls == 1 and resp.usage.output_tokens > 0
    assert model.name == "local:SmolLM2-135M-Instruct.Q4_1.gguf"


def test_schema_constrained_json(model: LocalModel) -> None:
    schema = {
        "type": "object",
        "properties": {
            "probabilities": {
                "type": "object",
                "properties": {"Yes": {"type": "number"}, "No": {"type": "number"}},
                "required": ["Yes", "No"],
            },
            "rationale": {"type": "string", "maxLength": 80},
        },
        "required": ["probabilities", "rationale"],
    }
    req = ChatRequest(
        messages=(Message(role="user", content="Will it rain tomorrow? Reply in JSON."),),
        response_schema=schema,
        max_tokens=150,
        temperature=0.0,
    )
    data = json.loads(model.chat(req).content)
    assert set(data) == {"probabilities", "rationale"}
    assert set(data["probabilities"]) == {"Yes", "No"}
    assert all(isinstance(v, int | float) for v in data["probabilities"].values())


def test_server_stops_cleanly() -> None:
    server = LocalLlamaServer(smollm2_path(), n_ctx=512)
    with server:
        url = server.base_url
        with urllib.request.urlopen(f"{url}/models", timeout=5) as resp:
            assert resp.status == 200
        proc = server._proc
        assert proc is not None
    assert proc.poll() is not None
    with pytest.raises(OSError):
        urllib.request.urlopen(f"{url}/models", timeout=2)
