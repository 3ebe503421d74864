"""The two-stage agent with Hindcast's settings (``two-stage-hindcast``) walks every stage on a
threaded corpus: seed queries, search, expansion of hits with the full text, the thread and the
author's recent posts and comments, reflection, follow-up rounds, the evidence report, the
evidence tally and the final forecast in Hindcast's answer object. Each stage's prompt and
request settings are checked, and nothing dated at or after the cutoff reaches the model.

The zero-shot baseline (``zero-shot``) is checked the same way: Hindcast's prompt, settings and
answer, with the chosen option and the confidence recorded in the forecast."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from agent_scripts import use

from pastcast.agents import agent_spec, prompts_for
from pastcast.corpus.embedded import EmbeddedIndex
from pastcast.dataset import Dataset
from pastcast.models import ChatRequest
from pastcast.records import Document, Event, Resolution, StepSpec
from pastcast.runlog import RunLog, read_run_log
from pastcast.runner import RunConfig, run_benchmark

T0 = datetime(2024, 4, 1, tzinfo=UTC)
CUTOFF = datetime(2024, 5, 1, tzinfo=UTC)
FUTURE = "Zephyr rocket launch succeeded, the payload reached orbit"


def _doc(i: str, day: float, thread: str, author: str, text: str, title: str = "") -> Document:
    return Document(
        id=i,
        timestamp=T0 + timedelta(days=day),
        title=title,
        text=text,
        thread_id=thread,
        author=author,
        parent_id=None if thread == i else thread,
    )


DOCS = (
    _doc(
        "s1", 1, "s1", "alice", "The Zephyr rocket launch is set for May.", "Zephyr rocket launch"
    ),
    _doc("c1", 2, "s1", "bob", "Weather looks good for the Zephyr window."),
    _doc("c2", 3, "s1", "carol", "Engineers finished the static fire test."),
    _doc("s2", 4, "s2", "bob", "Zephyr rocket engines passed review.", "Zephyr engines review"),
    _doc("s3", 5, "s3", "bob", "A thread about satellite insurance.", "Satellite insurance"),
    _doc("c3", 6, "s3", "bob", "Insurers price launches cheaper this year."),
    _doc("s4", 7, "s4", "dave", "Zephyr rocket fuel supply secured.", "Zephyr rocket fuel"),
    _doc("f1", 31, "s1", "alice", FUTURE),  # after the cutoff
)


def _dataset() -> Dataset:
    event = Event(
        id="ev-zephyr",
        title="Will the Zephyr rocket launch succeed",
        description="The Zephyr rocket is scheduled to launch in May 2024.",
        resolution_criteria="Yes if the launch reaches orbit by May 31, 2024.",
        kind="binary",
        labels=("Yes", "No"),
        open_time=T0,
        close_time=datetime(2024, 5, 31, tzinfo=UTC),
    )
    resolution = Resolution(event_id=event.id, label="Yes", resolved_at=event.close_time)
    step = StepSpec(event_id=event.id, step_index=0, cutoff=CUTOFF)
    return Dataset("zephyr-v1", (event,), {event.id: resolution}, {}, (step,))


def _stage(request: ChatRequest) -> str:
    system = request.messages[0].content
    props = (request.response_schema or {}).get("properties", {})
    if system.startswith("You are labelling evidence"):
        return "tally"
    if system.startswith(("You are a calibrated forecasting judge", "You are a forecaster.")):
        return "forecast"
    if "confidence" in props:
        return "reflect"
    if "queries" in props:
        return "queries"
    return "report"


class Hindcast:
    """Answers every stage of the agent; records the stage of each request."""

    def __init__(self) -> None:
        self.stages: list[str] = []

    def __call__(self, request: ChatRequest) -> str:
        stage = _stage(request)
        self.stages.append(stage)
        if stage == "queries":
            return json.dumps({"queries": ["static fire test", "static fire test"]})
        if stage == "reflect":  # one new query a round, each finding one new submission
            follow = "engines review" if "round 1 of" in request.messages[1].content else "fuel"
            return json.dumps({"confidence": 0.3, "missing": "more", "queries": [follow]})
        if stage == "report":
            return "Key facts: [s1] launch set for May.\nSuggested direction: leans Yes."
        if stage == "tally":
            ids = re.findall(r"^\[(\w+)\]", request.messages[1].content, re.MULTILINE)
            labels = [{"id": i, "sides": {"Yes": "strong", "No": "contra"}} for i in ids]
            labels.append({"id": "invented", "sides": {"Yes": "strong", "No": "strong"}})
            return json.dumps({"labels": labels, "evidence_quality": "strong"})
        return json.dumps(
            {
                "choice": "Yes",
                "prob_yes": 0.8,
                "prob_no": 0.2,
                "confidence": 0.7,
                "reasoning": "Prior 0.55 (favorite). Evidence leans yes.",
            }
        )


def _run(tmp_path: Path, spec_name: str, responder: Hindcast, **args: object) -> RunLog:
    spec = agent_spec(spec_name, model=use(spec_name, responder), **args)  # type: ignore[arg-type]
    out = tmp_path / "run.jsonl"
    index = EmbeddedIndex.in_memory(DOCS)
    cfg = RunConfig(agents=(spec,))
    run_benchmark(_dataset(), index, cfg, out, prompts=prompts_for([spec]), progress=False)
    return read_run_log(out)


def _user(request_messages: tuple[int, ...], log: RunLog) -> str:
    messages = log.steps[0].episode.messages
    return messages[request_messages[-1]].content


def test_every_stage_of_the_hindcast_agent(tmp_path: Path) -> None:
    script = Hindcast()
    log = _run(tmp_path, "two-stage-hindcast", script)
    (rec,) = log.steps
    ep = rec.episode
    assert ep.termination == "forecast", ep.error
    # Stages in order: seed queries, two reflections (3 rounds), report, tally, forecast.
    assert script.stages == ["queries", "reflect", "reflect", "report", "tally", "forecast"]
    # Each call with its stage's settings (Hindcast Table 4), top-p 1 throughout.
    settings = [(c.temperature, c.max_tokens, c.top_p) for c in ep.model_calls]
    assert settings == [
        (0.2, 4096, 1.0),
        (0.3, 4096, 1.0),
        (0.3, 4096, 1.0),
        (0.1, 3500, 1.0),
        (0.1, 2200, 1.0),
        (0.1, 3200, 1.0),
    ]
    prompts = [_user(c.messages, log) for c in ep.model_calls]
    queries, reflect1, reflect2, report, tally, forecast = prompts
    assert "Write 6 diverse, short search queries" in queries
    # Tools: top-20 searches; every new hit read, with its thread and its author's history
    # (once per author).
    calls = [(c.name, c.arguments) for c in ep.tool_calls]
    searches = [a for n, a in calls if n == "search"]
    assert [a["query"] for a in searches] == ["static fire test", "engines review", "fuel"]
    assert all(a["top_k"] == 20 for a in searches)
    read = [a["doc_id"] for n, a in calls if n == "read"]
    assert read == [a["doc_id"] for n, a in calls if n == "thread"] == ["c2", "s2", "s4"]
    authors = [a["author"] for n, a in calls if n == "author_posts"]
    assert authors == ["carol", "bob", "dave"]
    assert all(a["limit"] == 20 for n, a in calls if n == "author_posts")
    # The reflections read the expanded evidence: the comment found, its thread, and in the
    # next round bob's history (his other thread and his comments).
    assert "[c2]" in reflect1 and "[s1]" in reflect1 and "(thread of [c2])" in reflect1
    assert "(post by bob)" in reflect2 and "[s3]" in reflect2
    assert "(comment by bob)" in reflect2 and "[c3]" in reflect2
    assert "Insurers price launches" in report
    # The tally labels every document shown to it; the counts are computed, not taken from
    # the model, and only for documents it was shown.
    shown = re.findall(r"^\[(\w+)\]", tally, re.MULTILINE)
    assert '"sides": {"Yes": "strong" | "weak" | "irrel" | "contra"' in tally
    assert f"- Yes: {len(shown)} strong, 0 weak, 0 irrel, 0 contra; score {2 * len(shown)}" in (
        forecast
    )
    assert f"- No: 0 strong, 0 weak, 0 irrel, {len(shown)} contra; score {-len(shown)}" in forecast
    assert "evidence_quality: strong" in forecast and "Key facts: [s1]" in forecast
    assert 'Allowed options: "Yes" | "No"' in forecast and '"prob_yes": 0.0-1.0' in forecast
    # Nothing after the cutoff reached the model.
    assert all(FUTURE not in m.content for m in ep.messages)
    assert all("f1" not in c.doc_ids for c in ep.tool_calls)
    # Hindcast's answer, with the chosen option and the confidence in the forecast.
    f = rec.forecast
    assert f.usable and f.probs == pytest.approx({"Yes": 0.8, "No": 0.2})
    assert (f.choice, f.confidence) == ("Yes", 0.7)
    assert set(log.header.prompts) == {
        "research_queries.v1",
        "research_reflect.v1",
        "research_report.v1",
        "research_tally.v1",
        "forecast_stage.v3",
    }


def test_preset_values_can_be_overridden(tmp_path: Path) -> None:
    script = Hindcast()
    log = _run(
        tmp_path, "two-stage-hindcast", script, rounds=1, tally=False, top_p=0.9, constrained=True
    )
    assert script.stages == ["queries", "report", "forecast"]
    calls = log.steps[0].episode.model_calls
    assert {c.top_p for c in calls} == {0.9}
    assert '"prob_yes"' in calls[-1].response_schema  # the forecast under Hindcast's schema
    assert "research_tally.v1" not in log.header.prompts


def test_the_default_two_stage_agent_is_unchanged(tmp_path: Path) -> None:
    script = Hindcast()
    log = _run(tmp_path, "two-stage", script)
    ep = log.steps[0].episode
    assert "tally" not in script.stages
    assert {c.name for c in ep.tool_calls} == {"search", "read"}
    assert {(c.temperature, c.max_tokens, c.top_p) for c in ep.model_calls} == {(None, None, None)}
    assert "forecast_stage.v2" in log.header.prompts


def test_zero_shot_baseline(tmp_path: Path) -> None:
    script = Hindcast()
    log = _run(tmp_path, "zero-shot", script)
    (rec,) = log.steps
    (call,) = rec.episode.model_calls
    system, user = (rec.episode.messages[i].content for i in call.messages)
    assert system == "You are a forecaster. Predict the probability of the event."
    assert user.startswith(
        "Question: Will the Zephyr rocket launch succeed\n\nResolution criteria:"
    )
    assert "Forecast cutoff date: 2024-05-01" in user
    assert "Output a single JSON object only, matching:" in user
    assert (call.temperature, call.max_tokens, call.top_p) == (0.1, 4096, 1.0)
    assert rec.forecast.usable and (rec.forecast.choice, rec.forecast.confidence) == ("Yes", 0.7)
    assert rec.episode.tool_calls == ()
    assert set(log.header.prompts) == {"zero_shot.v1"}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"stages": {"query": {"temperature": 0.2}}}, "(query.[key]: Input should be 'queries'"),
        ({"stages": {"queries": {"temprature": 0.2}}}, "(queries.temprature: Extra inputs"),
        ({"stages": {"tally": {"max_tokens": 0}}}, "(tally.max_tokens: Input should be greater"),
    ],
)
def test_stage_settings_are_checked(args: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)) as caught:
        agent_spec("two-stage", model=use("bad", Hindcast()), **args)  # type: ignore[arg-type]
    assert "argument 'stages' must be dict[" in str(caught.value)


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ('two-stage-hindcast:model=scripted:x.json,stages={"query": {}}', "argument 'stages'"),
        ("zero-shot:model=scripted:x.json,reasoning_effort=huge", "argument 'reasoning_effort'"),
        ("no-tools:model=scripted:x.json,top_p=2", "argument 'top_p'"),
        ("tool-agent:model=scripted:x.json,max_tokens=0", "argument 'max_tokens'"),
    ],
)
def test_request_settings_are_checked_before_a_run(option: str, message: str) -> None:
    from pastcast.app import parse_agent_option

    with pytest.raises(ValueError, match=re.escape(message)) as caught:
        parse_agent_option(option)
    assert "\n" not in str(caught.value)
    assert parse_agent_option("two-stage-hindcast:model=scripted:x.json,rounds=2").args == {
        "model": "scripted:x.json",
        "rounds": 2,
    }


def test_the_tally_and_the_stop_reason_are_typed_fields_of_the_log(tmp_path: Path) -> None:
    """The counts the forecast stage read are the log's ``evidence_tally``; they come back
    from the JSONL line exactly, and the research loop says why it stopped."""
    log = _run(tmp_path, "two-stage-hindcast", Hindcast())
    (rec,) = log.steps
    tally = rec.episode.evidence_tally
    assert tally is not None and tally.quality == "strong"
    yes, no = tally.sides
    assert (yes.label, no.label) == ("Yes", "No")
    assert yes.strong == tally.documents > 0 and (yes.weak, yes.irrel, yes.contra) == (0, 0, 0)
    assert no.contra == tally.documents and no.score == -tally.documents
    assert yes.score == 2 * tally.documents
    # Three rounds at confidence 0.3: the round budget ended the research.
    assert rec.episode.stop_reason == "rounds"
    line = (tmp_path / "run.jsonl").read_text().splitlines()[0]
    assert json.loads(line)["episode"]["evidence_tally"]["sides"][0]["label"] == "Yes"


def test_a_confident_reflection_is_the_stop_reason(tmp_path: Path) -> None:
    class Confident(Hindcast):
        def __call__(self, request: ChatRequest) -> str:
            if _stage(request) == "reflect":
                self.stages.append("reflect")
                return json.dumps({"confidence": 0.9, "missing": "", "queries": ["more"]})
            return super().__call__(request)

    script = Confident()
    (rec,) = _run(tmp_path, "two-stage-hindcast", script).steps
    assert rec.episode.stop_reason == "confident"
    assert script.stages.count("reflect") == 1
