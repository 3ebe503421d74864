"""``check_env``: the environment's contract, checked on one forecast step (after Gymnasium's
``check_env``). Each check tries to break one guarantee the agent's world rests on
(docs/models.md, "Checking an environment"); each was shown to fail on a deliberately broken
environment (``tests/env/test_check_env.py``)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable
from datetime import UTC, datetime, timedelta
from typing import Any

from pastcast.corpus import DocumentNotVisible
from pastcast.cutoff import last_complete_day
from pastcast.dataset import Dataset
from pastcast.env._episode import Episode, ForecastEnv
from pastcast.env._question import question_view
from pastcast.env._toolkit import BudgetExceeded, ToolError
from pastcast.models import ChatRequest, ScriptedModel
from pastcast.records import Message, Record, Resolution, StepSpec

_FAR_FUTURE = datetime(9999, 1, 1, tzinfo=UTC)
_NO_SUCH_TOOL = "pastcast-check-no-such-tool"


class EnvCheckReport(Record):
    """What ``check_env`` checked on one step, and what it found broken."""

    event_id: str
    step_index: int
    passed: tuple[str, ...]
    problems: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.problems


class EnvCheckError(AssertionError):
    """The environment broke its contract; the message lists every problem found."""

    def __init__(self, report: EnvCheckReport) -> None:
        where = f"{report.event_id}#{report.step_index}"
        super().__init__(f"check_env on step {where}: " + "; ".join(report.problems))
        self.report = report


Check = Callable[[ForecastEnv, StepSpec], list[str]]


def _reset_binds_the_step(env: ForecastEnv, step: StepSpec) -> list[str]:
    ep = env.reset(step)
    out = []
    if ep.question.cutoff != step.cutoff or ep.tools.cutoff != step.cutoff:
        out.append(
            f"reset bound cutoff {ep.question.cutoff.isoformat()} (question) / "
            f"{ep.tools.cutoff.isoformat()} (tools), not the step's {step.cutoff.isoformat()}"
        )
    if (ep.question.event_id, ep.question.step_index) != (step.event_id, step.step_index):
        out.append("reset returned the question of another step")
    if ep.notebook_in is not None:
        out.append("reset without a notebook handed one in")
    return out


def _question_is_the_event_alone(env: ForecastEnv, step: StepSpec) -> list[str]:
    ep = env.reset(step)
    event = env.dataset.event_at(step.event_id, step.cutoff)
    expected = question_view(event, step.cutoff, step.step_index)
    out = [
        f"question field {name!r} differs from the event's ({getattr(ep.question, name)!r})"
        for name in type(expected).model_fields
        if getattr(ep.question, name) != getattr(expected, name)
    ]
    secrets = Dataset | Resolution
    held = [
        f"{where} holds a {type(v).__name__}" for where, v in _held(ep) if isinstance(v, secrets)
    ]
    return out + held


def _held(ep: Episode) -> Iterable[tuple[str, Any]]:
    """Every attribute of the episode and its toolbox, and the items of containers in them."""
    for owner, obj in (("episode", ep), ("toolbox", ep.tools)):
        for name, value in vars(obj).items():
            yield f"{owner}.{name}", value
            if isinstance(value, dict):
                value = list(value.values())
            if isinstance(value, list | tuple | set | frozenset):
                for item in value:
                    yield f"{owner}.{name}[...]", item


def _refuses_steps_at_resolution(env: ForecastEnv, step: StepSpec) -> list[str]:
    res = env.dataset.resolutions.get(step.event_id)
    if res is None:
        return []
    out = []
    for late in (res.resolved_at, res.resolved_at + timedelta(seconds=1)):
        try:
            env.reset(step.model_copy(update={"cutoff": late}))
        except ValueError:
            continue
        out.append(f"reset accepted a step at {late.isoformat()}, not before the resolution")
    return out


def _search_is_before_the_cutoff(env: ForecastEnv, step: StepSpec) -> list[str]:
    ep = env.reset(step)
    if not any(t.name == "search" for t in ep.tools.tools()):
        return []
    event = env.dataset.event(step.event_id)
    out = []
    for query in [event.title, *(f"{event.title} {lb}" for lb in event.labels), "resolved outcome"]:
        for hit in ep.tools.search(query, top_k=ep.config.max_search_k):
            shown = datetime.strptime(hit.date, "%Y-%m-%d %H:%M").replace(tzinfo=UTC)
            actual = _timestamp(env, hit.id)
            if shown >= step.cutoff or (actual is not None and actual >= step.cutoff):
                when = actual.isoformat() if actual else hit.date
                out.append(
                    f"search {query!r} returned {hit.id!r} dated {when}, not before the "
                    f"cutoff {step.cutoff.isoformat()}"
                )
    return out


def _timestamp(env: ForecastEnv, doc_id: str) -> datetime | None:
    if env.backend is None:
        return None
    try:
        return env.backend.read(doc_id, as_of=_FAR_FUTURE).timestamp
    except DocumentNotVisible:
        return None


def _read_refuses_unshown_ids(env: ForecastEnv, step: StepSpec) -> list[str]:
    ep = env.reset(step)
    if env.backend is None or not any(t.name == "read" for t in ep.tools.tools()):
        return []
    title = env.dataset.event(step.event_id).title
    visible = [h.id for h in env.backend.search(title, as_of=step.cutoff, k=1)]
    everything = env.backend.search(title, as_of=_FAR_FUTURE, k=50)
    future = [h.id for h in everything if h.timestamp >= step.cutoff][:1]
    out = []
    for doc_id in [*visible, *future, "pastcast-check-no-such-document"]:
        try:
            ep.tools.read(doc_id)
        except ToolError:
            call = ep.tools.calls[-1]
            if call.ok or call.doc_ids:
                out.append(f"the refused read of {doc_id!r} was logged as exposing documents")
            continue
        out.append(f"read returned {doc_id!r}, which no tool had shown in this step")
    return out


def _budgets_are_enforced(env: ForecastEnv, step: StepSpec) -> list[str]:
    out = []
    tools_cfg = env.config.model_copy(update={"max_tool_calls": 2})
    ep = env.reset(step, config=tools_cfg)
    for _ in range(2):
        with contextlib.suppress(ToolError):  # refused, but a call: it is charged
            ep.tools.call(_NO_SUCH_TOOL, {})
    try:
        ep.tools.call(_NO_SUCH_TOOL, {})
        out.append("a tool call after max_tool_calls=2 was not refused")
    except BudgetExceeded as exc:
        if (exc.kind, exc.limit, str(exc)) != ("tool", 2, "tool budget of 2 exhausted"):
            out.append(f"the spent tool budget raised {str(exc)!r}, not the documented error")
    except ToolError:
        out.append("a tool call after max_tool_calls=2 was not refused as over budget")
    model_cfg = env.config.model_copy(update={"max_model_calls": 1})
    ep = env.reset(step, config=model_cfg)
    model = ScriptedModel(responder=lambda _: "ok", name="check")
    request = ChatRequest(messages=(Message(role="user", content="ping"),))
    ep.chat(model, request)
    try:
        ep.chat(model, request)
        out.append("a model call after max_model_calls=1 was not refused")
    except BudgetExceeded as exc:
        if (exc.kind, exc.limit) != ("model", 1):
            out.append(f"the spent model budget raised {str(exc)!r}, not the documented error")
    return out


def _market_only_with_access(env: ForecastEnv, step: StepSpec) -> list[str]:
    out = []
    closed = env.reset(step, config=env.config.model_copy(update={"market_access": False}))
    if any(t.name == "market_history" for t in closed.tools.tools()):
        out.append("the market tool is offered without market access")
    try:
        closed.tools.market_history()
        out.append("market_history answered without market access")
    except ToolError:
        pass
    opened = env.reset(step, config=env.config.model_copy(update={"market_access": True}))
    if not any(t.name == "market_history" for t in opened.tools.tools()):
        return out
    last = last_complete_day(step.cutoff)
    res = env.dataset.resolutions.get(step.event_id)
    if res is not None:
        last = min(last, last_complete_day(res.resolved_at))
    late = [d.day for d in opened.tools.market_history() if d.day > last]
    if late:
        out.append(
            f"market_history showed day {late[0].isoformat()}, which had not ended before the "
            "cutoff and the resolution"
        )
    return out


CHECKS: tuple[tuple[str, Check], ...] = (
    ("reset binds the step", _reset_binds_the_step),
    ("question from the event alone", _question_is_the_event_alone),
    ("steps at resolution refused", _refuses_steps_at_resolution),
    ("search before the cutoff", _search_is_before_the_cutoff),
    ("read refuses unshown ids", _read_refuses_unshown_ids),
    ("budgets enforced", _budgets_are_enforced),
    ("market only with access", _market_only_with_access),
)


def check_env(
    env: ForecastEnv,
    step: StepSpec,
    *,
    strict: bool = True,
) -> EnvCheckReport:
    """Check ``env``'s contract on ``step``.

    Raises ``EnvCheckError`` naming every problem unless ``strict`` is False; the report says
    which checks passed either way.
    """
    passed, problems = [], []
    for name, check in CHECKS:
        try:
            found = check(env, step)
        except Exception as exc:  # a check that cannot even run is a broken contract too
            found = [f"raised {type(exc).__name__}: {exc}"]
        if found:
            problems += [f"{name}: {p}" for p in found]
        else:
            passed.append(name)
    report = EnvCheckReport(
        event_id=step.event_id,
        step_index=step.step_index,
        passed=tuple(passed),
        problems=tuple(problems),
    )
    if strict and problems:
        raise EnvCheckError(report)
    return report
