"""Record/replay cache: keys, atomic files, bit-exact replay, clear misses."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pastcast.models import CachedModel, ChatRequest, ChatResponse, ModelError, ScriptedModel
from pastcast.models._cache import cache_key
from pastcast.records import Message, RequestedToolCall, Usage


def _req(text: str, **kw: object) -> ChatRequest:
    return ChatRequest(messages=(Message(role="user", content=text),), **kw)  # type: ignore[arg-type]


class Offline:
    name = "scripted"

    def chat(self, request: ChatRequest) -> ChatResponse:
        raise AssertionError("replay must not call the model")


def test_record_then_replay_is_bit_exact(tmp_path: Path) -> None:
    rich = ChatResponse(
        content="ünïcode {json} 0.1",
        tool_calls=(RequestedToolCall(id="c", name="search", arguments={"q": [1, 2.5, None]}),),
        usage=Usage(model_calls=1, input_tokens=3, output_tokens=4, cost_usd=0.1 + 0.2),
        model="m",
        finish_reason="tool_calls",
    )
    inner = ScriptedModel(["first", rich, "third"])
    rec = CachedModel(inner, tmp_path, mode="record")
    reqs = [_req("a"), _req("b", temperature=0.3, seed=1), _req("c")]
    recorded = [rec.chat(r) for r in reqs]
    rep = CachedModel(Offline(), tmp_path, mode="replay")
    replayed = [rep.chat(r) for r in reqs]
    assert replayed == recorded
    assert [r.model_dump_json() for r in replayed] == [r.model_dump_json() for r in recorded]
    assert rep.hits == 3 and rep.name == "scripted"
    assert not list(tmp_path.rglob(".tmp-*"))


def test_replay_miss_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="replay cache miss for scripted"):
        CachedModel(Offline(), tmp_path, mode="replay").chat(_req("never recorded"))


def test_auto_calls_once_per_distinct_request(tmp_path: Path) -> None:
    inner = ScriptedModel(["x", "y"])
    model = CachedModel(inner, tmp_path)
    assert model.chat(_req("a")).content == "x"
    assert model.chat(_req("a")).content == "x"
    assert model.chat(_req("a", temperature=0.5)).content == "y"
    assert len(inner.requests) == 2 and model.hits == 1 and model.misses == 2


def test_corrupt_entry_names_the_file(tmp_path: Path) -> None:
    CachedModel(ScriptedModel(["x"]), tmp_path, mode="record").chat(_req("a"))
    (entry,) = tmp_path.rglob("*.json")
    entry.write_text("{truncated")
    with pytest.raises(ModelError, match=entry.name):
        CachedModel(Offline(), tmp_path, mode="replay").chat(_req("a"))


def test_bad_mode() -> None:
    with pytest.raises(ValueError, match="record, replay or auto"):
        CachedModel(Offline(), ".", mode="sometimes")  # type: ignore[arg-type]


@settings(max_examples=50)
@given(st.text(max_size=30), st.text(max_size=30), st.one_of(st.none(), st.floats(0, 2)))
def test_key_depends_on_model_and_request(a: str, b: str, temp: float | None) -> None:
    ra, rb = _req(a, temperature=temp), _req(b, temperature=temp)
    assert (cache_key("m", ra) == cache_key("m", rb)) == (a == b)
    assert cache_key("m", ra) != cache_key("n", ra)
    assert cache_key("m", ra) == cache_key(
        "m", ChatRequest.model_validate_json(ra.model_dump_json())
    )


def test_key_covers_every_generation_option_the_model_settings_and_the_rollout() -> None:
    base = _req("a")
    variants = [
        cache_key("m", base),
        cache_key("m", _req("a", rollout=1)),
        cache_key("m", _req("a", temperature=0.7)),
        cache_key("m", _req("a", max_tokens=5)),
        cache_key("m", _req("a", seed=3)),
        cache_key("m", _req("a", response_schema={"type": "object"})),
        cache_key("m", base, settings={"extra_body": {"top_p": 0.9}}),
        cache_key("m", base, settings={"extra_body": {"top_p": 0.5}}),
    ]
    assert len(set(variants)) == len(variants)
    assert cache_key("m", base, settings={}) == cache_key("m", base)


def test_rollouts_and_model_settings_get_their_own_entries(tmp_path: Path) -> None:
    inner = ScriptedModel(["r0", "r1", "r2", "hot"])
    model = CachedModel(inner, tmp_path)
    assert [model.chat(_req("a", rollout=r)).content for r in range(3)] == ["r0", "r1", "r2"]
    hot = CachedModel(inner, tmp_path, settings={"extra_body": {"top_p": 0.1}})
    assert hot.chat(_req("a")).content == "hot"
    replay = CachedModel(Offline(), tmp_path, mode="replay")
    assert [replay.chat(_req("a", rollout=r)).content for r in range(3)] == ["r0", "r1", "r2"]
    with pytest.raises(ModelError, match="replay cache miss"):
        CachedModel(Offline(), tmp_path, mode="replay", settings={"x": 1}).chat(_req("a"))
