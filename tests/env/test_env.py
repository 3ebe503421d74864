"""The environment's leakage guarantees: what an agent can and cannot reach at a step."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta, timezone

import pytest

from _tiny import T0, ListBackend, tiny_dataset, tiny_documents
from pastcast.cutoff import is_visible
from pastcast.env import BudgetExceeded, EnvConfig, ForecastEnv, ToolError
from pastcast.records import Resolution, StepSpec


def _env(**cfg: object) -> ForecastEnv:
    return ForecastEnv(tiny_dataset(), ListBackend(tiny_documents()), EnvConfig(**cfg))  # type: ignore[arg-type]


def _step(event: str = "ev-rocket", days: int = 5) -> StepSpec:
    return StepSpec(event_id=event, step_index=0, cutoff=T0 + timedelta(days=days))


def test_search_never_returns_documents_at_or_after_cutoff() -> None:
    env = _env()
    for days in range(1, 20):
        ep = env.reset(_step(days=days))
        for query in ["Zephyr rocket launch succeeded", "Resolved YES", "rocket"]:
            for hit in ep.tools.search(query, top_k=20):
                doc = env.backend.read(hit.id, as_of=T0 + timedelta(days=100))  # type: ignore[union-attr]
                assert doc.timestamp < ep.question.cutoff


def test_read_refuses_future_and_unshown_ids() -> None:
    ep = _env().reset(_step(days=5))
    with pytest.raises(ToolError, match="not returned by a search"):
        ep.tools.read("d1")  # visible, but not shown yet
    ep.tools.search("Zephyr rocket", top_k=10)
    assert ep.tools.read("d1").id == "d1"
    with pytest.raises(ToolError):
        ep.tools.read("canary-rocket")
    with pytest.raises(ToolError):
        ep.tools.read("d5")  # dated after this cutoff
    failed = [c for c in ep.tools.calls if not c.ok]
    assert len(failed) == 3 and all(c.doc_ids == () for c in failed)


def test_question_carries_no_resolution_and_no_prices() -> None:
    ep = _env().reset(_step())
    dumped = ep.question.model_dump_json()
    assert "Resolved" not in dumped and "resolution" not in dumped.lower().replace(
        "resolution_criteria", ""
    )
    assert [s.name for s in ep.tools.specs()] == ["search", "read"]
    with pytest.raises(ToolError, match="market access is off"):
        ep.tools.market_history()
    assert not hasattr(ep, "dataset")


def test_market_history_only_has_complete_days_before_cutoff() -> None:
    ep = _env(market_access=True).reset(_step(days=5))
    history = ep.tools.market_history()
    assert [h.day.isoformat() for h in history][-1] == "2024-03-05"  # cutoff is 2024-03-06 00:00
    assert len(history) == 5


def test_step_at_resolution_is_refused() -> None:
    with pytest.raises(ValueError, match="not before the resolution"):
        _env().reset(_step(days=20))


def test_tool_budget_is_enforced() -> None:
    ep = _env(max_tool_calls=2).reset(_step())
    ep.tools.search("rocket")
    ep.tools.search("rocket")
    with pytest.raises(BudgetExceeded):
        ep.tools.search("rocket")


def test_public_history_counts_only_earlier_resolutions() -> None:
    env = _env()
    early = env.reset(_step("ev-mayor", days=10))
    assert early.history.binary_resolved == 0
    late = env.reset(_step("ev-mayor", days=25))
    assert late.history.binary_resolved == 1 and late.history.binary_yes == 1


def test_resolutions_public_at_a_cutoff_are_those_strictly_before_it() -> None:
    # Resolved at the cutoff itself is not public yet; a microsecond earlier it is. Instants in
    # another zone and resolutions at the same instant count as any other.
    base = tiny_dataset()
    at = T0 + timedelta(days=12)
    east = timezone(timedelta(hours=2))
    resolutions = {
        "ev-rocket": Resolution(event_id="ev-rocket", label="Yes", resolved_at=at),
        "ev-mayor": Resolution(
            event_id="ev-mayor", label="Chen", resolved_at=(at - timedelta(days=3)).astimezone(east)
        ),
        **{
            f"ev-{i}": Resolution(
                event_id=f"ev-{i}", label="Yes", resolved_at=at + timedelta(days=i)
            )
            for i in (-3, 0, 4)
        },
    }
    dataset = replace(base, resolutions=resolutions)
    tick = timedelta(microseconds=1)
    assert [r.event_id for r in dataset.resolved_before(at)] == ["ev-mayor", "ev--3"]
    assert len(dataset.resolved_before(at + tick)) == 4
    assert [r.event_id for r in dataset.resolved_before(at - timedelta(days=3))] == []
    assert len(dataset.resolved_before((at - timedelta(days=3) + tick).astimezone(east))) == 2
    for r in resolutions.values():
        for cutoff in (r.resolved_at - tick, r.resolved_at, r.resolved_at + tick):
            expected = {e for e, x in resolutions.items() if is_visible(x.resolved_at, cutoff)}
            assert {x.event_id for x in dataset.resolved_before(cutoff)} == expected


def test_python_tool_runs_sandboxed_and_cannot_read_the_data(tmp_path: object) -> None:
    from pastcast.sandbox import sandbox_available

    ok, why = sandbox_available()
    if not ok:
        pytest.skip(f"no isolating sandbox here: {why}")
    env = _env(python_tool=True)
    ep = env.reset(_step())
    assert "python" in [s.name for s in ep.tools.specs()]
    assert ep.tools.python("print(6 * 7)").stdout.strip() == "42"
    secret = __file__  # a file of this repository, outside the sandbox
    out = ep.tools.python(f"print(open({secret!r}).read()[:20])")
    assert out.exit_code != 0 and "Error" in out.stderr
