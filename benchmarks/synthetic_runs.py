"""The synthetic run log the run-log benchmarks share (``runlogs.py``, ``dashboard.py``): written
through ``RunLogWriter`` (so its columnar companion is written as the run goes, as a real run's
is). Ten agents: four model-driven ones in two settings, a baseline and the market reference,
over events of five forecast dates. A model-driven step has 10 to 40 tool calls (searches whose
results are dated hits, reads of a document) with 1 to 4 KB of result text (2 to 8 KB
in the log: a result is both a tool message and the tool call's result), one model
call per three tool calls, and a notebook carried in and written under memory-on. Every step
records when its event resolved, and the header each model's knowledge cutoff (so `score
--after-knowledge-cutoff` has events to leave out); a model-driven forecast keeps its answer's
text, and one in twenty-five was unreadable as written (lower-case outcome names, which
`--normalize-labels` reads) or read only from a retry's reply.

    from synthetic_runs import write_run  # with benchmarks/ on the path (a script run there)
"""

from __future__ import annotations

import json
import random
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

from pastcast.records import (
    EpisodeRecord,
    Forecast,
    Message,
    ModelCall,
    Notebook,
    RequestedToolCall,
    ToolCall,
    Usage,
)
from pastcast.runlog import AgentSpec, Grading, RunHeader, RunLogWriter, Scores, StepRecord

__all__ = ["AGENTS", "STEPS_PER_EVENT", "write_run", "write_scoring_run"]

T0 = datetime(2024, 1, 1, tzinfo=UTC)
AGENTS = [
    AgentSpec(name=f"model-{k}", factory="tool-agent", args={"model": f"provider:m{k}"}, setting=s)
    for k in range(4)
    for s in ("memory_free", "memory_on")
] + [
    AgentSpec(name="uniform", factory="uniform"),
    AgentSpec(name="market", factory="market", role="reference"),
]
STEPS_PER_EVENT = 5
SYSTEM = "You are an expert forecaster with research tools. " * 12
_WORDS = "officials said the matter is moving as reported by several sources close to it"
_TOOL_COUNTS = range(10, 41, 3)
_POOL_COPIES = 3
KNOWLEDGE_CUTOFFS = {f"provider:m{k}": date(2024, 2, 5 + 2 * k) for k in range(4)}
"""Each model's knowledge cutoff as the header records it: the latest leaves out the events
resolved by 11 February 2024 (the first seven events of a run: its event ``e`` resolves on day
``e % 300 + 35`` of 2024)."""
_QUIRK_EVERY = 25
_RETRY = "\n\n[reply to the repair request]\n"


def _text(n: int, rng: random.Random) -> str:
    words: list[str] = []
    size = 0
    while size < n:
        w = rng.choice(_WORDS.split())
        words.append(w)
        size += len(w) + 1
    return " ".join(words)[:n]


def _notebook() -> Notebook:
    return Notebook.model_validate(
        {
            "assessment": {"probabilities": {"Yes": 0.6, "No": 0.4}, "summary": "s"},
            "evidence_ledger": [{"id": "E1", "claim": "c", "date_observed": "2024-01-01"}],
        }
    )


def _episode(n_tools: int, model: str, memory: bool, rng: random.Random) -> EpisodeRecord:
    """An episode of ``n_tools`` searches and reads, one model call per three tool calls, with
    1 to 4 KB of tool-result text in all (twice in the log)."""
    budget = rng.randint(1024, 4096) // n_tools
    msgs = [
        Message(role="system", content=SYSTEM),
        Message(
            role="user",
            content="Forecast date (today): 2024-03-01\n\nQuestion: Will the event happen?\n",
        ),
    ]
    tools, calls, seq = [], [], 0
    cutoff = T0 + timedelta(days=60)
    for j0 in range(0, n_tools, 3):  # one model call requests three tool calls
        batch = range(j0, min(j0 + 3, n_tools))
        names = {j: "search" if j % 2 == 0 else "read" for j in batch}
        args = {
            j: {"query": f"q{j}"} if names[j] == "search" else {"doc_id": f"d{j}"} for j in batch
        }
        requested = tuple(
            RequestedToolCall(id=f"c{j}", name=names[j], arguments=args[j]) for j in batch
        )
        calls.append(
            ModelCall(
                seq=seq,
                model=model,
                messages=tuple(range(len(msgs))),
                reply=len(msgs),
                usage=Usage(model_calls=1, input_tokens=900, output_tokens=40, cost_usd=0.001),
                latency_s=rng.random(),
            )
        )
        seq += 1
        msgs.append(Message(role="assistant", content="", tool_calls=requested))
        for j in batch:
            date = (cutoff - timedelta(days=j + 1, hours=3)).strftime("%Y-%m-%d %H:%M")
            if names[j] == "search":
                hits = [
                    {"id": f"d{j}-{h}", "title": f"Report {h}", "date": date,
                     "snippet": _text(max(1, budget // 2 - 60), rng)}
                    for h in range(2)
                ]  # fmt: skip
                result = json.dumps(hits)
                doc_ids = tuple(str(h["id"]) for h in hits)
            else:
                result = json.dumps({"id": f"d{j}", "date": date, "text": _text(budget, rng)})
                doc_ids = (f"d{j}",)
            msgs.append(Message(role="tool", content=result, tool_call_id=f"c{j}", name=names[j]))
            tools.append(
                ToolCall(seq=seq, name=names[j], arguments=args[j], result=result, doc_ids=doc_ids)
            )
            seq += 1
    msgs.append(Message(role="assistant", content='Done.\n```json\n{"Yes": 0.6, "No": 0.4}\n```'))
    n = len(calls)
    total = Usage(model_calls=n, input_tokens=900 * n, output_tokens=40 * n, cost_usd=0.001 * n)
    nb = _notebook() if memory else None
    return EpisodeRecord(
        messages=tuple(msgs),
        model_calls=tuple(calls),
        tool_calls=tuple(tools),
        notebook_in=nb,
        notebook_out=nb,
        usage=total,
        wall_s=2.5,
    )


def _answer(probs: dict[str, float]) -> str:
    return "```json\n" + json.dumps(probs) + "\n```"


def _forecast(probs: dict[str, float], quirks: random.Random) -> Forecast:
    """A model-driven agent's forecast with its answer's text: now and then one unreadable as
    written (outcome names in lower case) or read only from a retry's reply."""
    text = _answer(probs)
    draw = quirks.randrange(_QUIRK_EVERY)
    if draw == 0:
        lower = _answer({k.lower(): v for k, v in probs.items()})
        return Forecast(raw_text=lower, usable=False, failure_reason="unknown_labels")
    if draw == 1:
        return Forecast(probs=probs, raw_text="I think yes." + _RETRY + text)
    return Forecast(probs=probs, raw_text=text)


def write_run(path: Path, n_steps: int, seed: int = 0, run_id: str = "bench") -> int:
    """Write a synthetic run log of about ``n_steps`` steps through the run-log writer; the
    number written. Episodes are drawn from a pool (their JSON is as large as fresh ones)."""
    rng = random.Random(seed)
    quirks = random.Random(seed + 1)  # apart, so the episodes drawn stay those of ``seed``
    header = RunHeader(
        run_id=run_id,
        created_at=T0,
        dataset_id="synthetic",
        config={"rollouts": 1},
        agents=tuple(AGENTS),
        code_version="bench",
        knowledge_cutoffs=KNOWLEDGE_CUTOFFS,
    )
    pool = {
        (k, n, m, c): _episode(n, f"provider:m{k}", m, rng)
        for k in range(4)
        for n in _TOOL_COUNTS
        for m in (False, True)
        for c in range(_POOL_COPIES)
    }
    n_events = max(1, n_steps // (STEPS_PER_EVENT * len(AGENTS)))
    scores = Scores(brier=0.0, accuracy=0.0, log_loss=0.0)
    written = 0
    with RunLogWriter(path, header) as writer:
        for e in range(n_events):
            truth = "Yes" if rng.random() < 0.4 else "No"
            resolved = T0 + timedelta(days=e % 300 + 7 * STEPS_PER_EVENT)
            for s in range(STEPS_PER_EVENT):
                cutoff = T0 + timedelta(days=e % 300 + 7 * s)
                q = min(0.98, max(0.02, rng.random()))
                grading = Grading(
                    truth=truth,
                    labels=("Yes", "No"),
                    market_probs={"Yes": q, "No": 1 - q},
                    resolved_at=resolved,
                )
                for spec in AGENTS:
                    if spec.role == "reference":
                        probs, episode = {"Yes": q, "No": 1 - q}, EpisodeRecord()
                    elif spec.factory == "uniform":
                        probs, episode = {"Yes": 0.5, "No": 0.5}, EpisodeRecord()
                    else:
                        p = min(0.99, max(0.01, q + rng.gauss(0, 0.15)))
                        probs = {"Yes": p, "No": 1 - p}
                        k = int(spec.name[-1])
                        memory = spec.setting == "memory_on"
                        key = (k, rng.choice(_TOOL_COUNTS), memory, rng.randrange(_POOL_COPIES))
                        episode = pool[key]
                    forecast = Forecast(probs=probs)
                    if spec.factory == "tool-agent":
                        forecast = _forecast(probs, quirks)
                    rec = StepRecord(
                        run_id=run_id, agent=spec.name, role=spec.role, setting=spec.setting,
                        event_id=f"event-{e:05d}", step_index=s, cutoff=cutoff,
                        category=("politics", "sports", "economics", "science")[e % 4],
                        forecast=forecast, episode=episode, grading=grading,
                        scores=scores,
                    )  # fmt: skip
                    writer.write(rec, sync=False)
                    written += 1
            writer.sync()  # one fsync per event
    return written


_SCORED_AGENTS = (
    *(
        AgentSpec(name=f"agent-{k}", factory="tool-agent", args={"model": f"provider:m{k % 3}"},
                  setting=s)
        for k in range(4)
        for s in ("memory_free", "memory_on", "no_tools")
    ),
    AgentSpec(name="market", factory="market", role="reference"),
)  # fmt: skip
_OUTCOMES = ("Yes", "No", "Maybe", "Later", "Never")


def _scored_probs(labels: tuple[str, ...], rng: random.Random) -> dict[str, float]:
    """A forecast over ``labels`` with what scoring must get right now and then: an outcome left
    out, one the market does not offer, ties, mass that does not sum to 1."""
    draw = rng.randrange(20)
    if draw == 0:
        return dict.fromkeys(labels, 1.0 / len(labels))  # every outcome tied
    if draw == 1:
        return {labels[0]: 0.4, labels[-1]: 0.4}  # an outcome left out, a tie
    if draw == 2:
        return {**dict.fromkeys(labels, 0.2), "Other": 0.3}  # an outcome not offered
    weights = [rng.random() + 1e-3 for _ in labels]
    total = sum(weights) * (1.0 if draw > 4 else 1.25)  # some do not sum to 1
    return {k: w / total for k, w in zip(labels, weights, strict=True)}


def write_scoring_run(path: Path, n_steps: int, seed: int = 0, run_id: str = "scores") -> int:
    """Write a run log of about ``n_steps`` steps for the scores alone (empty episodes): twelve
    agents in three settings and the market reference, two rollouts, over binary and multi-
    outcome events (3 to 5 outcomes) in two splits and four categories, with unusable forecasts,
    steps without a market or whose market lacks the truth, and outcomes outside the offered
    labels; the number written."""
    rng = random.Random(seed)
    header = RunHeader(
        run_id=run_id,
        created_at=T0,
        dataset_id="synthetic-scores",
        config={"rollouts": 2},
        agents=_SCORED_AGENTS,
        code_version="bench",
    )
    per_event = STEPS_PER_EVENT * len(_SCORED_AGENTS) * 2
    scores = Scores(brier=0.0, accuracy=0.0, log_loss=0.0)
    written = 0
    with RunLogWriter(path, header) as writer:
        for e in range(max(1, n_steps // per_event)):
            labels = ("Yes", "No") if e % 3 else _OUTCOMES[: 3 + e % 5 % 3]
            truth = "Void" if e % 97 == 5 else rng.choice(labels)
            for s in range(STEPS_PER_EVENT):
                market: dict[str, float] | None = _scored_probs(labels, rng)
                if rng.randrange(10) == 0:
                    market = None if rng.randrange(2) else {labels[0]: 1.0}
                grading = Grading(truth=truth, labels=labels, market_probs=market)
                for spec in _SCORED_AGENTS:
                    for rollout in range(2):
                        if spec.role == "reference":
                            forecast = Forecast(probs=market or dict.fromkeys(labels, 0.5))
                        elif rng.randrange(25) == 0:
                            kept = _scored_probs(labels, rng) if rollout else {}
                            forecast = Forecast(
                                probs=kept, usable=False, failure_reason="unknown_labels"
                            )
                        else:
                            forecast = Forecast(probs=_scored_probs(labels, rng))
                        rec = StepRecord(
                            run_id=run_id, agent=spec.name, role=spec.role,
                            setting=spec.setting, event_id=f"event-{e:05d}", step_index=s,
                            cutoff=T0 + timedelta(days=e % 300 + 7 * s), rollout=rollout,
                            split=("train", "test")[e % 2],
                            category=("politics", "sports", "economics", "science")[e % 4],
                            forecast=forecast, episode=EpisodeRecord(), grading=grading,
                            scores=scores,
                        )  # fmt: skip
                        writer.write(rec, sync=False)
                        written += 1
            writer.sync()
    return written


if __name__ == "__main__":
    import argparse
    import time

    parser = argparse.ArgumentParser(description="Write a synthetic run log.")
    parser.add_argument("out", type=Path, help="the step file to write (run.jsonl)")
    parser.add_argument("--steps", type=int, default=100_000)
    a = parser.parse_args()
    a.out.parent.mkdir(parents=True, exist_ok=True)
    t = time.perf_counter()
    n = write_run(a.out, a.steps)
    mb = a.out.stat().st_size / 1e6
    print(json.dumps({"steps": n, "mb": round(mb), "written_s": round(time.perf_counter() - t, 1)}))
