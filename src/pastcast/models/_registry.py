"""Provider registry: ``resolve_model("prefix:rest", **options)`` builds a model by name; a run
log records a ``ModelSpec`` (the spec and its JSON options, never a key) to rebuild it. A
bounded-context provider registers ``context_limits=fn(rest, options)``, so
``context_limits_for`` knows a model's window without building it (docs/models.md).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import Field, JsonValue

from pastcast.models._context import ContextLimits
from pastcast.models._protocol import Model
from pastcast.records import Record
from pastcast.registry import Registry

ProviderFactory = Callable[..., Model]
LimitsOf = Callable[[str, dict[str, Any]], ContextLimits]
providers: Registry[Model] = Registry(
    "model provider", group="pastcast.model_providers", references=frozenset({"context_limits"})
)
"""Model providers by spec prefix; the built-in ones by reference, so that a run imports the
client code of the providers it uses only."""
providers.add("openai", "pastcast.models._openai:openai_model")
providers.add("openai-compatible", "pastcast.models._openai:compatible_model")
providers.add(
    "local",
    "pastcast.models._packaged:local_model",
    context_limits="pastcast.models._local:local_context_limits",
)
providers.add("scripted", "pastcast.models._scripted:scripted_model")
providers.add(
    "transformers",
    "pastcast.models._transformers:transformers_model",
    context_limits="pastcast.models._transformers:transformers_context_limits",
)
_SECRET_WORDS = ("key", "token", "secret", "password")


def register_provider(
    prefix: str, *, context_limits: LimitsOf | None = None
) -> Callable[[ProviderFactory], ProviderFactory]:
    """Register ``factory(rest: str, **options) -> Model`` under ``prefix``; ``context_limits``
    gives the context limits of its models from the same arguments (bounded-context
    providers)."""
    if context_limits is None:
        return providers.register(prefix)
    return providers.register(prefix, context_limits=context_limits)


def known_providers() -> list[str]:
    return list(providers.names())


class ModelSpec(Record):
    """What a run log keeps to rebuild its model."""

    spec: str = Field(min_length=1)
    options: dict[str, JsonValue] = Field(default_factory=dict)

    def build(self) -> Model:
        return resolve_model(self.spec, **self.options)


def context_limits_for(spec: str, options: dict[str, Any]) -> ContextLimits | None:
    """The context limits of the model ``spec`` would build, without building it (None when its
    provider states none, or the spec names no known provider)."""
    prefix, sep, rest = spec.partition(":")
    if not sep or prefix not in providers:
        return None
    limits = providers.get(prefix).meta.get("context_limits")
    return limits(rest, options) if callable(limits) else None


def check_model_spec(spec: str) -> None:
    """Refuse (``ValueError``) a spec that names no registered provider, without building
    anything: what a command checks before its first piece of work."""
    prefix, sep, rest = spec.partition(":")
    if not sep or not rest:
        raise ValueError(
            f"model spec {spec!r} is not PROVIDER:NAME; known providers: "
            f"{', '.join(known_providers())}"
        )
    if prefix not in providers:
        raise ValueError(
            f"unknown model provider {prefix!r} in {spec!r}; known: {', '.join(known_providers())}"
        )


def resolve_model(spec: str, **options: Any) -> Model:
    """Build the model named by ``spec`` (``openai:gpt-4o-mini``, ``local:PATH.gguf``, ...)."""
    check_model_spec(spec)
    prefix, _, rest = spec.partition(":")
    secret = [k for k in options if k != "api_key_env" and any(w in k for w in _SECRET_WORDS)]
    if secret:
        raise ValueError(
            f"option {secret[0]!r} looks like a credential: pass keys through the environment "
            "(api_key_env names the variable), never as options"
        )
    return providers.build(prefix, rest, **options)
