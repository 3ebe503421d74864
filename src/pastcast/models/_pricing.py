"""Model prices (USD per million tokens) and the cost of one call.

The built-in table is a convenience snapshot of public list prices (checked 2025), kept as data
(``published_prices.toml``); pass your own file to override or extend it. A model without a
price costs 0 and is flagged, never guessed. File format (TOML or JSON):
``{"model-name": {"input": 0.15, "output": 0.60}, ...}``.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError

from pastcast import safejson
from pastcast.records import Record
from pastcast.textfiles import package_toml, read_text_file
from pastcast.validation import first_problem


class Price(Record):
    input: float = Field(ge=0)
    """USD per million input (prompt) tokens."""
    output: float = Field(ge=0)
    """USD per million output (completion) tokens."""


DEFAULT_PRICES: dict[str, Price] = {
    model: Price.model_validate(price)
    for model, price in package_toml("pastcast.models", "published_prices.toml").items()
}
"""The built-in table: ``published_prices.toml`` beside this module."""


def read_table(path: Path, what: str, shape: str) -> dict[str, Any]:
    """The top-level table of a TOML or JSON file; ``ValueError`` naming the file otherwise."""
    try:
        text = read_text_file(path)
        raw = tomllib.loads(text) if path.suffix == ".toml" else safejson.loads(text)
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path}: cannot read {what}: {exc}") from None
    if not isinstance(raw, dict):
        raise ValueError(f"{path}: expected a table of {shape}")
    return raw


def spec_model_name(spec: str) -> str:
    """The model's own name in a provider spec: ``openai:gpt-4o`` -> ``gpt-4o``,
    ``openai-compatible:qwen@http://host/v1`` -> ``qwen``; a bare name is returned as it is."""
    prefix, sep, rest = spec.partition(":")
    name = rest if sep and "/" not in prefix else spec
    return name.partition("@")[0]


def longest_prefix(name: str, known: Iterable[str]) -> str | None:
    """``name`` if known, else the longest known name it extends with ``-`` (a dated snapshot
    such as ``gpt-4o-mini-2024-07-18`` -> ``gpt-4o-mini``), else None."""
    names = set(known)
    if name in names:
        return name
    return max((k for k in names if name.startswith(k + "-")), key=len, default=None)


class PriceTable:
    """Prices by model name; a dated snapshot name (``gpt-4o-mini-2024-07-18``) falls back to
    the longest known prefix."""

    def __init__(self, prices: Mapping[str, Price] | None = None) -> None:
        self.prices: dict[str, Price] = dict(DEFAULT_PRICES if prices is None else prices)

    @classmethod
    def load(cls, path: str | Path) -> PriceTable:
        p = Path(path)
        raw = read_table(p, "price table", "model -> {input, output}")
        table = cls()
        for model, value in raw.items():
            try:
                table.prices[model] = Price.model_validate(value)
            except ValidationError as exc:
                raise ValueError(first_problem(exc, f"{p}: {model}")) from None
        return table

    def price(self, model: str) -> Price | None:
        best = longest_prefix(model, self.prices)
        return self.prices[best] if best else None

    def cost(self, model: str, input_tokens: int, output_tokens: int) -> float:
        price = self.price(model)
        if price is None:
            return 0.0
        return (input_tokens * price.input + output_tokens * price.output) / 1_000_000
