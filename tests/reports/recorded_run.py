"""A small recorded run for the report and dashboard tests, written by the real runner.

Eight events (binary and multi-option, four forecast dates each), dated documents (one whose
title and text carry HTML and script tags), daily market beliefs; agents: baselines, the
heuristic agent in all three settings, the market reference, and a tool agent driven by a
scripted model that searches, reads the first hit and answers (with a notebook under memory-on),
reporting tokens and a cost per call. Two rollouts.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

from _tiny import ListBackend
from pastcast.agents import agent_spec, clear_models
from pastcast.dataset import Dataset
from pastcast.models import ChatRequest, ChatResponse, Model, ScriptedModel, register_provider
from pastcast.records import (
    DailyBelief,
    Document,
    Event,
    RequestedToolCall,
    Resolution,
    StepSpec,
    Usage,
)
from pastcast.runner import RunConfig, run_benchmark

T0 = datetime(2024, 3, 1, tzinfo=UTC)
XSS_TITLE = 'Zephyr rocket launch <script>alert("title")</script> update'
XSS_TEXT = (
    "Will the Zephyr rocket launch succeed? <script>alert(document.cookie)</script>"
    '<img src=x onerror="alert(1)"> ' + "Will the Zephyr rocket launch succeed? " * 3
)
TOPICS = [
    ("rocket", "Will the Zephyr rocket launch succeed", "science", None, "Yes"),
    (
        "mayor",
        "Who wins the Lakeview mayoral race",
        "politics",
        ("Alvarez", "Brooks", "Chen"),
        "Chen",
    ),
    ("rain", "Will Harbor City record rain in April", "science", None, "No"),
    ("cup", "Will the Rovers win the Northern cup", "sports", None, "Yes"),
    ("chip", "Which firm ships the Quasar chip first", "technology", ("Arcor", "Bitwise"), "Arcor"),
    ("strike", "Will the dockworkers strike end in March", "economics", None, "No"),
    ("summit", "Which city hosts the Pelican summit", "politics", ("Oslo", "Lima", "Pune"), "Lima"),
    ("merger", "Will the Teal merger close", "economics", None, "Yes"),
]


def report_dataset() -> Dataset:
    events, res, beliefs, steps = [], {}, {}, []
    for i, (key, title, category, options, truth) in enumerate(TOPICS):
        labels = options or ("Yes", "No")
        eid = f"ev-{key}"
        events.append(
            Event(
                id=eid,
                title=title,
                description=f"About the {key}.",
                kind="multi" if options else "binary",
                labels=labels,
                open_time=T0,
                close_time=T0 + timedelta(days=30 + i),
                category=category,
            )
        )
        res[eid] = Resolution(event_id=eid, label=truth, resolved_at=T0 + timedelta(days=30 + i))
        daily = []
        for d in range(30 + i):
            lean = 0.15 + 0.6 * d / (30 + i) if i % 3 else 0.2  # some markets never move
            probs = {lb: (1 - lean) / (len(labels) - 1) for lb in labels}
            probs[truth] = lean
            daily.append(
                DailyBelief(event_id=eid, day=date(2024, 3, 1) + timedelta(days=d), probs=probs)
            )
        beliefs[eid] = tuple(daily)
        for s, day in enumerate((4, 11, 18, 26)):
            steps.append(StepSpec(event_id=eid, step_index=s, cutoff=T0 + timedelta(days=day)))
    return Dataset("report-test-v1", tuple(events), res, beliefs, tuple(steps))


def report_documents() -> tuple[Document, ...]:
    docs = [Document(id="d-xss", timestamp=T0 + timedelta(days=2), title=XSS_TITLE, text=XSS_TEXT)]
    for i, (key, title, _, options, truth) in enumerate(TOPICS):
        for j, day in enumerate((1, 6, 9, 15, 20, 24)):
            lean = truth if j % 2 else (options[0] if options else "No")
            docs.append(
                Document(
                    id=f"d-{key}-{j}",
                    timestamp=T0 + timedelta(days=day, hours=i),
                    title=f"{title}: {lean} ahead",
                    text=f"{title}. Observers say {lean} is on track and likely; report {j}.",
                )
            )
    return tuple(docs)


def _labels(text: str) -> list[str]:
    m = re.search(r"Possible outcomes[^\n]*:\n((?:- .*\n?)+)", text)
    assert m, text
    return [line[2:].strip() for line in m.group(1).splitlines() if line.startswith("- ")]


def _responder(request: ChatRequest) -> ChatResponse:
    user = next(m.content for m in request.messages if m.role == "user")
    title = re.search(r"^Question: (.*)$", user, re.MULTILINE)
    cutoff = re.search(r"Forecast date \(today\): (\d{4}-\d{2}-\d{2})", user)
    assert title and cutoff
    labels = _labels(user)
    usage = Usage(model_calls=1, input_tokens=1000, output_tokens=50, cost_usd=0.002)
    last = request.messages[-1]
    result: Any = None
    if last.role == "tool" and last.content.startswith(("[", "{")):
        try:
            result = json.loads(last.content)
        except ValueError:
            result = None
    n = len(request.messages)
    if n == 2:
        call = RequestedToolCall(id="c1", name="search", arguments={"query": title.group(1)})
        return ChatResponse(content="", tool_calls=(call,), usage=usage, finish_reason="tool_calls")
    if isinstance(result, list) and result:
        call = RequestedToolCall(id=f"c{n}", name="read", arguments={"doc_id": result[0]["id"]})
        return ChatResponse(content="", tool_calls=(call,), usage=usage, finish_reason="tool_calls")
    probs = {lb: 0.6 if k == 0 else 0.4 / (len(labels) - 1) for k, lb in enumerate(labels)}
    answer: dict[str, Any] = {"probabilities": probs, "rationale": "scripted"}
    if "belief notebook" in request.messages[0].content:
        seen = date.fromisoformat(cutoff.group(1)) - timedelta(days=1)
        answer["notebook"] = {
            "assessment": {"probabilities": probs, "summary": "scripted view"},
            "evidence_ledger": [
                {
                    "id": f"E{seen.isoformat()}",
                    "claim": f"news of {seen.isoformat()}",
                    "date_observed": seen.isoformat(),
                    "source": "d",
                }
            ],
        }
    return ChatResponse(
        content=f"Done.\n```json\n{json.dumps(answer)}\n```", usage=usage, finish_reason="stop"
    )


@register_provider("reports-test")
def _provider(rest: str, **options: Any) -> Model:
    return ScriptedModel(responder=_responder, name=f"reports-test:{rest}")


AGENTS = (
    agent_spec("uniform"),
    agent_spec("heuristic"),
    agent_spec("heuristic", setting="memory_on"),
    agent_spec("heuristic", setting="no_tools"),
    agent_spec("market"),
    agent_spec("tool-agent", label="scripted", model="reports-test:m", action_mode="native"),
    agent_spec(
        "tool-agent",
        setting="memory_on",
        label="scripted",
        model="reports-test:m",
        action_mode="native",
    ),
)


def record_run(out: Path, rollouts: int = 2) -> Path:
    """Run the agents over the report dataset; returns the run log's path."""
    config = RunConfig(agents=AGENTS, rollouts=rollouts)
    try:
        run_benchmark(
            report_dataset(), ListBackend(report_documents()), config, out, progress=False
        )
    finally:
        clear_models()
    return out
