"""Search latency and environment overhead per forecast step on the embedded world.

Prints, for the embedded corpus: search latency (median, p95) through the environment's tool
(cutoff-bound BM25) next to a naive baseline measured in the same run (score every document with
the same BM25 statistics in plain numpy, drop documents at or after the cutoff, rank the matching
rest), and the environment's
overhead per forecast step with a scripted model (reset, a scripted search/read/answer loop,
grading and run-log write, minus the scripted model's own time, which is negligible).

    python benchmarks/env_overhead.py [--seed 0] [--queries 300]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from pastcast.agents import ToolAgent, agent_spec
from pastcast.corpus import tokenize
from pastcast.corpus.embedded import EmbeddedIndex
from pastcast.env import ForecastEnv
from pastcast.models import ChatRequest, ScriptedModel
from pastcast.runner import RunConfig, run_benchmark
from pastcast.world import build_world


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--queries", type=int, default=300)
    args = parser.parse_args()

    t = time.perf_counter()
    world = build_world(args.seed)
    t_world = time.perf_counter() - t
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        index = EmbeddedIndex.build(world.documents, Path(tmp) / "index")
        t_index = time.perf_counter() - t
        print(
            f"world: {len(world.dataset.events)} events, {len(world.documents)} documents, "
            f"built in {t_world:.2f} s; index built in {t_index:.2f} s"
        )

        env = ForecastEnv(world.dataset, index)
        steps = list(world.dataset.steps)
        lat: list[float] = []
        naive: list[float] = []
        for i in range(args.queries):
            step = steps[i % len(steps)]
            query = world.dataset.event(step.event_id).title
            ep = env.reset(step)
            t = time.perf_counter()
            ep.tools.search(query, top_k=10)
            lat.append((time.perf_counter() - t) * 1e3)
            t = time.perf_counter()
            # Naive: rank every document with whole-corpus statistics, then drop the future.
            n_visible = index.count_before(step.cutoff)
            ordinals, scores = index.naive_score(
                list(dict.fromkeys(tokenize(query))), n_visible, 10
            )
            _ = index.hits(zip(ordinals.tolist(), scores.tolist(), strict=True), query, step.cutoff)
            naive.append((time.perf_counter() - t) * 1e3)
        print(
            f"search via env tool: median {statistics.median(lat):.3f} ms, "
            f"p95 {_pct(lat, 0.95):.3f} ms ({args.queries} queries)"
        )
        ratio = statistics.median(naive) / statistics.median(lat)
        print(
            f"naive rank-all-then-drop baseline: median {statistics.median(naive):.3f} ms, "
            f"p95 {_pct(naive, 0.95):.3f} ms; naive/env ratio {ratio:.1f}x"
        )

        # Environment overhead per step: a JSON-action agent driven by a scripted model that
        # searches, reads the first hit and answers. Model time is ~0, so this is all overhead.
        def responder(request: ChatRequest) -> str:
            last = request.messages[-1].content
            if len(request.messages) == 2:
                return json.dumps({"action": "search", "query": "latest news", "top_k": 5})
            if len(request.messages) == 4 and last.startswith("[{"):
                return json.dumps({"action": "read", "doc_id": json.loads(last)[0]["id"]})
            return json.dumps({"action": "final", "probabilities": {}})

        per_step: list[float] = []
        for step in steps:
            event = world.dataset.event(step.event_id)
            agent = ToolAgent(ScriptedModel(responder=responder), max_iterations=20)
            t = time.perf_counter()
            ep = env.reset(step)
            forecast = agent.forecast(ep)
            ep.record("forecast")
            per_step.append((time.perf_counter() - t) * 1e3)
            assert not forecast.usable or set(forecast.probs) <= set(event.labels)
        print(
            f"environment overhead per forecast step (scripted model, search+read+answer): "
            f"median {statistics.median(per_step):.2f} ms, p95 {_pct(per_step, 0.95):.2f} ms "
            f"over {len(per_step)} steps"
        )

        cfg = RunConfig(agents=(agent_spec("heuristic"),))
        t = time.perf_counter()
        res = run_benchmark(world.dataset, index, cfg, Path(tmp) / "run.jsonl", progress=False)
        total = time.perf_counter() - t
        print(
            f"heuristic agent full run: {res.written} steps in {total:.2f} s "
            f"({1e3 * total / res.written:.1f} ms per step incl. grading and log writes)"
        )


if __name__ == "__main__":
    main()
