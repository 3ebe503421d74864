"""Provider registry: prefixes, clear errors, rebuildable specs, no credentials in options."""

from __future__ import annotations

from pathlib import Path

import pytest

from pastcast.errors import FieldError
from pastcast.models import (
    ChatRequest,
    ModelSpec,
    ScriptedModel,
    known_providers,
    providers,
    register_provider,
    resolve_model,
)
from pastcast.models._openai import OpenAICompatibleModel
from pastcast.records import Message
from pastcast.registry import Registry


def test_known_prefixes() -> None:
    assert {"openai", "openai-compatible", "local", "scripted"} <= set(known_providers())


def test_unknown_prefix_lists_known_ones() -> None:
    with pytest.raises(ValueError, match=r"unknown model provider 'nope'.*openai-compatible"):
        resolve_model("nope:model")
    with pytest.raises(ValueError, match="PROVIDER:NAME"):
        resolve_model("gpt-4o-mini")


def test_scripted_from_file_and_spec_rebuild(tmp_path: Path) -> None:
    f = tmp_path / "outputs.json"
    f.write_text('["{\\"Yes\\": 0.6, \\"No\\": 0.4}"]')
    model = ModelSpec(spec=f"scripted:{f}", options={"cycle": False}).build()
    assert isinstance(model, ScriptedModel)
    req = ChatRequest(messages=(Message(role="user", content="q"),))
    assert model.chat(req).content.startswith('{"Yes"')
    spec = ModelSpec.model_validate_json(ModelSpec(spec=f"scripted:{f}").model_dump_json())
    assert spec.build().name == model.name


def test_openai_providers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    m = resolve_model("openai:gpt-4o-mini", max_retries=1)
    assert isinstance(m, OpenAICompatibleModel) and m.name == "openai:gpt-4o-mini"
    c = resolve_model("openai-compatible:qwen@http://127.0.0.1:8080/v1")
    assert isinstance(c, OpenAICompatibleModel)
    assert (c.model, c.base_url) == ("qwen", "http://127.0.0.1:8080/v1")
    assert c.name == "openai-compatible:qwen@http://127.0.0.1:8080/v1"
    with pytest.raises(ValueError, match="NAME@http"):
        resolve_model("openai-compatible:qwen")


def test_a_refused_model_url_does_not_repeat_its_password() -> None:
    """A model's name is its spec (run logs record it), so a URL with a password is refused as
    before, but the refusal does not repeat the password."""
    with pytest.raises(ValueError, match="NAME@http") as refused:
        resolve_model("openai-compatible:qwen@http://reader:pa55word@127.0.0.1:8080/v1")
    assert "pa55word" not in str(refused.value) and "reader" in str(refused.value)


def test_credentials_are_refused_as_options() -> None:
    with pytest.raises(ValueError, match="credential"):
        resolve_model("openai:gpt-4o-mini", api_key="sk-secret")


def test_local_spec_checks_the_file(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="GGUF"):
        resolve_model(f"local:{tmp_path / 'model.bin'}")
    with pytest.raises(Exception, match="not found"):
        resolve_model(f"local:{tmp_path / 'missing.gguf'}")


def test_register_custom_provider() -> None:
    @register_provider("echo-test")
    def _echo(rest: str) -> ScriptedModel:
        return ScriptedModel(responder=lambda r: r.messages[-1].content, name=f"echo-test:{rest}")

    model = resolve_model("echo-test:x")
    assert model.name == "echo-test:x"
    with pytest.raises(ValueError, match="already registered"):
        register_provider("echo-test")(_echo)
    # Options are checked against the provider's signature before it runs.
    with pytest.raises(FieldError, match=r"model provider 'echo-test': .*'temperature'"):
        resolve_model("echo-test:x", temperature=0.5)
    assert isinstance(providers, Registry) and providers.group == "pastcast.model_providers"
