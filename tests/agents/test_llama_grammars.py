"""Every structured-output schema an agent sends compiles to a llama.cpp grammar.

llama.cpp turns a JSON schema into a GBNF grammar; a construct its converter passes through
untranslated (a regex ``\\d``, say) makes the server's grammar parser fail and the server drop
the connection mid-request. Compiling each schema against the packaged model's vocabulary
catches that in a second, without starting a server.
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Iterator
from typing import Any

import pytest

if importlib.util.find_spec("llama_cpp") is None:
    pytest.skip("llama-cpp-python not installed (extra 'local')", allow_module_level=True)

from pastcast.agents import action_schema
from pastcast.agents._answer import answer_schema, choice_schema
from pastcast.agents._tally import tally_schema
from pastcast.agents._two_stage import _QUERIES_SCHEMA, _REFLECT_SCHEMA
from pastcast.env import TOOLS
from pastcast.models import ModelError
from pastcast.models._packaged import smollm2_path

LABELS = ("Yes", "No", "Vometh Jostr\u00f6m")
NAMES = tuple(t.name for t in TOOLS)


def _schemas() -> Iterator[tuple[str, dict[str, Any]]]:
    yield "action(all tools)", action_schema(NAMES, LABELS)
    yield "action(all tools, memory)", action_schema(NAMES, LABELS, memory=True)
    yield "action(final only, memory)", action_schema((), LABELS, memory=True)
    for t in TOOLS:
        yield f"action({t.name})", action_schema((t.name,), LABELS)
        yield f"tool {t.name} parameters", t.parameters
    yield "answer", answer_schema(LABELS)
    yield "choice", choice_schema(LABELS)
    yield "tally", tally_schema(LABELS)
    yield "two-stage queries", _QUERIES_SCHEMA
    yield "two-stage reflect", _REFLECT_SCHEMA


@pytest.fixture(scope="module")
def vocab() -> Any:
    import llama_cpp

    try:
        path = smollm2_path()
    except ModelError as exc:
        pytest.skip(str(exc))
    model = llama_cpp.Llama(str(path), vocab_only=True, verbose=False)
    yield model, llama_cpp.llama_cpp.llama_model_get_vocab(model._model.model)
    model.close()


def _compiles(vocab: Any, schema: dict[str, Any]) -> bool:
    from llama_cpp import llama_cpp as c
    from llama_cpp.llama_grammar import LlamaGrammar

    grammar = LlamaGrammar.from_json_schema(json.dumps(schema), verbose=False)
    sampler = c.llama_sampler_init_grammar(vocab[1], grammar._grammar.encode(), b"root")
    if not sampler:
        return False
    c.llama_sampler_free(sampler)
    return True


def test_the_compile_check_can_fail(vocab: Any) -> None:
    bad = {"type": "object", "properties": {"m": {"type": "string", "pattern": r"^\d{4}$"}}}
    assert not _compiles(vocab, bad)


@pytest.mark.parametrize(("name", "schema"), list(_schemas()), ids=[n for n, _ in _schemas()])
def test_agent_schemas_compile_to_llama_grammars(
    vocab: Any, name: str, schema: dict[str, Any]
) -> None:
    assert _compiles(vocab, schema), f"{name}: llama.cpp cannot parse the grammar of {schema}"
