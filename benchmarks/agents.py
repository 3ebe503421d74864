"""Environment and agent overhead per forecast step with a scripted model (no model time).

The tool agent (JSON and native modes, memory off and on) and the no-tools agent run on every
step of the embedded world; the scripted model searches the question title, reads the first hit
and answers. Reported: median and p95 of the wall time per step (reset, prompt rendering, tool
calls, parsing, notebook validation, episode record). Target: median <= 5 ms.

    python benchmarks/agents.py [--seed 0]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

from pastcast.agents import NoToolsAgent, ToolAgent
from pastcast.corpus.embedded import EmbeddedIndex
from pastcast.env import ForecastEnv
from pastcast.models import ChatRequest, ChatResponse, ScriptedModel
from pastcast.records import RequestedToolCall
from pastcast.world import build_world


def _labels(request: ChatRequest) -> list[str]:
    user = request.messages[1].content
    block = user.split("(exactly one will occur):\n", 1)[1].split("\n\n", 1)[0]
    return [line[2:] for line in block.splitlines() if line.startswith("- ")]


def _final(request: ChatRequest, memory: bool) -> dict[str, object]:
    labels = _labels(request)
    out: dict[str, object] = {"probabilities": dict.fromkeys(labels, 1 / len(labels))}
    if memory:
        out["notebook"] = {
            "assessment": {"probabilities": out["probabilities"], "summary": "s"},
            "evidence_ledger": [
                {"id": "E1", "claim": "c", "date_observed": "2024-01-01", "supports": []}
            ],
        }
    return out


def responder(request: ChatRequest) -> str | ChatResponse:
    memory = "belief notebook" in request.messages[0].content
    title = request.messages[1].content.split("Question: ", 1)[1].split("\n", 1)[0]
    last = request.messages[-1].content
    hits = json.loads(last) if last.startswith("[{") else None
    if request.tools:
        if len(request.messages) == 2:
            call = RequestedToolCall(id="1", name="search", arguments={"query": title})
            return ChatResponse(content="", tool_calls=(call,))
        if hits:
            call = RequestedToolCall(id="2", name="read", arguments={"doc_id": hits[0]["id"]})
            return ChatResponse(content="", tool_calls=(call,))
        return ChatResponse(content=json.dumps(_final(request, memory)))
    if request.response_schema and "action" in request.response_schema["properties"]:
        if len(request.messages) == 2:
            return json.dumps({"action": "search", "query": title, "top_k": 10})
        if hits:
            return json.dumps({"action": "read", "doc_id": hits[0]["id"]})
        return json.dumps({"action": "final", **_final(request, memory)})
    return json.dumps(_final(request, memory))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    world = build_world(args.seed)
    env = ForecastEnv(world.dataset, EmbeddedIndex.in_memory(world.documents))
    model = ScriptedModel(responder=responder)
    agents = {
        "tool-agent json": ToolAgent(model, action_mode="json", memory=False),
        "tool-agent native": ToolAgent(model, action_mode="native", memory=False),
        "tool-agent json memory-on": ToolAgent(model, action_mode="json", memory=True),
        "no-tools": NoToolsAgent(model),
    }
    for name, agent in agents.items():
        per_step: list[float] = []
        usable = 0
        for step in world.dataset.steps:
            t = time.perf_counter()
            episode = env.reset(step)
            forecast = agent.forecast(episode)
            episode.record("forecast")
            per_step.append((time.perf_counter() - t) * 1e3)
            usable += forecast.usable
        ordered = sorted(per_step)
        print(
            f"{name:28s} median {statistics.median(per_step):6.2f} ms  "
            f"p95 {ordered[int(0.95 * (len(ordered) - 1))]:6.2f} ms  "
            f"({len(per_step)} steps, {usable} usable)"
        )


if __name__ == "__main__":
    main()
