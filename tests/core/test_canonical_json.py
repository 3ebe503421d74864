"""One canonical JSON for hashes and keys; the ids it already made stay the same."""

from __future__ import annotations

from pathlib import Path

from pastcast.models import ChatRequest
from pastcast.models._cache import cache_key
from pastcast.records import Message
from pastcast.runlog import read_run_log, run_fingerprint
from pastcast.safejson import canonical_json
from pastcast.world import WorldConfig

FIXTURE = Path(__file__).parents[1] / "runlog" / "fixtures" / "run_v1.jsonl"


def test_equal_values_give_equal_text_whatever_the_key_order() -> None:
    assert canonical_json({"b": "é", "a": [1, 2.5]}) == '{"a":[1,2.5],"b":"é"}'
    assert canonical_json({"a": [1, 2.5], "b": "é"}) == canonical_json({"b": "é", "a": [1, 2.5]})
    assert canonical_json({"b": "é"}, ascii_only=True) == '{"b":"\\u00e9"}'


def test_the_digests_already_written_do_not_change() -> None:
    # Values of logs, caches and worlds written before: a changed canonical form would refuse
    # their resume, miss their cache entries and rename their datasets.
    header = read_run_log(FIXTURE).header
    assert run_fingerprint(header) == (
        "7de7bdce3386c94d4d010c3a9bfdd92a16055676dd327b81c9a8d8ab4e15dd16"
    )
    request = ChatRequest(messages=(Message(role="user", content="Prévision ✓"),))
    assert cache_key("openai:gpt-4o", request, {"temperature": 0}) == (
        "d29a0f5ea94ad1f3bfe922a20c472f832b30b9edf5a7170999a707937afabc99"
    )
    assert WorldConfig(n_events=7).short_hash() == "478df58f"
