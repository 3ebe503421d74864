"""Local agents that finish: no-tools vs the tool agent vs the two-stage agent with the largest
packaged model (Qwen2.5-Coder-1.5B-Instruct, extra ``local-qwen``) on real ForecastBench
questions whose cutoffs fall inside the WCEP news archive, one step each.

A directional check of the papers' central finding (research tools help), not a leaderboard:
a 1.5B model on a handful of questions has wide intervals. Questions are resolved binary
Polymarket markets; each gets Hindcast's single cutoff (the day before close, capped at
``--archive-end``), and the selection takes as many Yes as No outcomes (seeded), as Hindcast
balances its set. Reported per agent: Brier on the [0, 2] scale (uniform fallback for unusable
answers) with a 95% event-bootstrap CI, the usable-forecast rate, the paired Brier difference
against no-tools, and the time, model calls and tokens per step, with the machine's load.

    python benchmarks/local_agents.py --questions 10 --work runs/bench-local

On a machine other processes keep busy, pass ``--threads 1``: llama.cpp's threads wait for each
other at every step, and two threads that each get a slice of a shared core ran 4.5 times slower
than one (a 512-token prompt and 40 tokens of SmolLM2: 174 s against 39 s at a load of 12-14 on
2 cores).

The run log (``WORK/run.jsonl``) resumes: a second call with the same options skips finished
steps, so a long run can be split. The WCEP index is built once into ``WORK/wcep-index``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import statistics
import sys
import time
from datetime import date
from pathlib import Path
from typing import Any

from pastcast.agents import agent_spec, clear_models, prompts_for
from pastcast.corpus.embedded import EmbeddedIndex
from pastcast.corpus.sources import read_wcep
from pastcast.dataset import Dataset
from pastcast.markets import build_dataset, make_schedule
from pastcast.markets.sources import read_forecastbench
from pastcast.reports import Runs, scorecard
from pastcast.runlog import AgentSpec, read_run_log
from pastcast.runner import RunConfig, run_benchmark
from pastcast.scoring import paired_comparison

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("PASTCAST_SHARED_DATA") or ROOT.parent / "shared" / "data")


def agent_specs(model: str, n_ctx: int, threads: int) -> tuple[AgentSpec, ...]:
    """The three agents, bounded for a small model on a CPU (each answer is schema-constrained;
    the episode fits every request to the window)."""
    common: dict[str, Any] = {
        "model": model,
        "model_options": {"n_ctx": n_ctx, "n_threads": threads, "timeout_s": 1800},
        "temperature": 0.0,
    }
    return (
        agent_spec("no-tools", label="no-tools", constrained=True, max_tokens=400, **common),
        agent_spec(
            "tool-agent",
            label="tool-agent",
            max_iterations=8,
            max_tool_calls=6,
            max_result_chars=2500,
            max_tokens=400,  # an action is short; a small model's run-on string is cut early
            **common,
        ),
        agent_spec(
            "two-stage",
            label="two-stage",
            rounds=2,
            seed_queries=3,
            followup_queries=2,
            top_k=5,
            expand=2,
            tally=True,
            constrained=True,
            max_evidence_chars=6000,
            stages={
                "queries": {"max_tokens": 200},
                "reflect": {"max_tokens": 250},
                "report": {"max_tokens": 500},
                "tally": {"max_tokens": 500},
                "forecast": {"max_tokens": 400},
            },
            **common,
        ),
    )


def questions(forecastbench: Path, archive_end: date, n: int, seed: int) -> Dataset:
    """``n`` binary Polymarket questions with one cutoff inside the archive, half Yes, half No."""
    histories = read_forecastbench(forecastbench).histories
    schedule = make_schedule("hindcast", corpus_end=archive_end)
    dataset, _ = build_dataset(
        histories, name="fb-local", schedule=schedule, sources=["polymarket"]
    )
    by_outcome: dict[str, list[str]] = {"Yes": [], "No": []}
    for event_id in sorted(dataset.event_ids_with_steps()):
        res = dataset.resolutions[event_id]
        if dataset.event(event_id).kind == "binary" and res.label in by_outcome:
            by_outcome[res.label].append(event_id)
    rng = random.Random(seed)
    chosen: list[str] = []
    for label, n_label in (("Yes", (n + 1) // 2), ("No", n // 2)):
        pool = by_outcome[label]
        if len(pool) < n_label:
            raise SystemExit(f"only {len(pool)} {label} questions with a step in the archive")
        chosen += rng.sample(pool, n_label)
    steps = [dataset.steps_of(e)[-1] for e in sorted(chosen)]
    return dataset.with_steps(steps)


def wcep_index(wcep: Path, where: Path) -> tuple[EmbeddedIndex, float | None]:
    """The archive's index, built on the first call (and the seconds that took)."""
    try:
        return EmbeddedIndex.open(where), None
    except FileNotFoundError:
        pass
    t0 = time.perf_counter()
    index = EmbeddedIndex.build(read_wcep(wcep), where)
    return index, time.perf_counter() - t0


def summary(log_path: Path, dataset: Dataset, bootstrap: int) -> dict[str, Any]:
    log = read_run_log(log_path)
    card = scorecard(Runs.from_logs((log,), dataset), ("agent",), "uniform", bootstrap=bootstrap)
    rows: dict[str, Any] = {}
    for group in card.groups:
        agent = group.summary.group[0]
        steps = [s for s in log.steps if s.agent == agent]
        brier = group.summary.metrics["brier"]
        rows[agent] = {
            "n": group.summary.n_recorded,
            "usable_rate": 1.0 - group.summary.failure_rate,
            "failures": dict(
                sorted(
                    (r, sum(s.forecast.failure_reason == r for s in steps))
                    for r in {s.forecast.failure_reason for s in steps if not s.forecast.usable}
                    if r is not None
                )
            ),
            "brier": brier.mean,
            "brier_ci95": [brier.ci_low, brier.ci_high],
            "accuracy": group.summary.metrics["accuracy"].mean,
            "median_step_s": statistics.median(s.episode.wall_s for s in steps),
            "mean_model_calls": statistics.mean(s.episode.usage.model_calls for s in steps),
            "mean_tool_calls": statistics.mean(len(s.episode.tool_calls) for s in steps),
            "mean_output_tokens": statistics.mean(s.episode.usage.output_tokens for s in steps),
        }
    for agent in ("tool-agent", "two-stage"):
        if agent in rows and "no-tools" in rows:
            d = paired_comparison(
                log.steps, {"agent": agent}, {"agent": "no-tools"}, ("brier",), bootstrap=bootstrap
            )["brier"]
            rows[agent]["brier_minus_no_tools"] = d.mean
            rows[agent]["brier_minus_no_tools_ci95"] = [d.ci_low, d.ci_high]
    return rows


def markdown(rows: dict[str, Any]) -> str:
    lines = [
        "| agent | n | usable | Brier [95% CI] | vs no-tools [95% CI] | median s/step | "
        "calls/step | tools/step |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for agent, r in rows.items():
        ci = r["brier_ci95"]
        diff = "-"
        if "brier_minus_no_tools" in r:
            lo, hi = r["brier_minus_no_tools_ci95"]
            diff = f"{r['brier_minus_no_tools']:+.3f} [{lo:+.3f}, {hi:+.3f}]"
        lines.append(
            f"| {agent} | {r['n']} | {r['usable_rate']:.0%} | {r['brier']:.3f} "
            f"[{ci[0]:.3f}, {ci[1]:.3f}] | {diff} | {r['median_step_s']:.0f} | "
            f"{r['mean_model_calls']:.1f} | {r['mean_tool_calls']:.1f} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--forecastbench", type=Path, default=SHARED / "forecastbench")
    parser.add_argument("--wcep", type=Path, default=SHARED / "wcep")
    parser.add_argument("--archive-end", type=date.fromisoformat, default=date(2026, 3, 28))
    parser.add_argument("--questions", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--model", default="local:qwen2.5-coder-1.5b")
    parser.add_argument("--n-ctx", type=int, default=8192)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument(
        "--agents", default="no-tools,tool-agent,two-stage", help="comma-separated subset"
    )
    parser.add_argument("--bootstrap", type=int, default=2000)
    parser.add_argument("--work", type=Path, default=ROOT / "runs" / "bench-local")
    args = parser.parse_args()

    args.work.mkdir(parents=True, exist_ok=True)
    # A terminated benchmark still stops its model server (the finally below).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    load_before = os.getloadavg()
    index, build_s = wcep_index(args.wcep, args.work / "wcep-index")
    dataset = questions(args.forecastbench, args.archive_end, args.questions, args.seed)
    wanted = set(args.agents.split(","))
    specs = tuple(s for s in agent_specs(args.model, args.n_ctx, args.threads) if s.name in wanted)
    log = args.work / "run.jsonl"
    started = time.perf_counter()
    try:
        run_benchmark(
            dataset, index, RunConfig(agents=specs), log, prompts=prompts_for(specs), progress=True
        )
    finally:
        clear_models()
    rows = summary(log, dataset, args.bootstrap)
    out = {
        "model": args.model,
        "questions": [s.event_id for s in dataset.steps],
        "cutoffs": sorted({s.cutoff.date().isoformat() for s in dataset.steps}),
        "cores": os.cpu_count(),
        "load_avg_before": [round(x, 2) for x in load_before],
        "load_avg_after": [round(x, 2) for x in os.getloadavg()],
        "index_build_s": build_s,
        "run_s": round(time.perf_counter() - started, 1),
        "agents": rows,
    }
    print(json.dumps(out, indent=2))
    print(markdown(rows))


if __name__ == "__main__":
    main()
