"""Dashboard latency on a large run: time to first byte and full response of the leaderboard and
of trajectory pages, served by uvicorn on 127.0.0.1 (target: p50 under 200 ms each).

A synthetic run log of ``--steps`` forecast steps is written first: model-driven agents in two
settings with realistic episodes (a system prompt, the question, three model calls, a search
and a read with their results, a notebook under memory-on), a baseline and the market
reference, over events of five forecast dates. The dashboard indexes it once (reported, with
the unfiltered leaderboard it computes at start-up), then each page is requested over HTTP:
TTFB is the time until the status line and headers arrive, full is until the last byte. A
filtered leaderboard is reported cold (its first request computes its bootstrap) and warm;
trajectories and events are random. With Debian's chromium and chromium-driver (and selenium)
present, the browser's full render (navigation start to the load event) is measured too.

    python benchmarks/dashboard.py [--steps 100000] [--requests 40] [--keep DIR]
"""

from __future__ import annotations

import argparse
import http.client
import json
import random
import resource
import shutil
import socket
import statistics
import tempfile
import threading
import time
from datetime import UTC, datetime, timedelta
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
from pastcast.reports.dashboard import RunIndex, create_app
from pastcast.runlog import AgentSpec, Grading, RunHeader, Scores, StepRecord, header_path

T0 = datetime(2024, 1, 1, tzinfo=UTC)
AGENTS = [
    AgentSpec(name=f"model-{k}", factory="tool-agent", args={"model": f"provider:m{k}"}, setting=s)
    for k in range(4)
    for s in ("memory_free", "memory_on")
] + [
    AgentSpec(name="uniform", factory="uniform"),
    AgentSpec(name="market", factory="market", role="reference"),
]
SYSTEM = "You are an expert forecaster with research tools. " * 30
STEPS_PER_EVENT = 5


def _episode(
    event: int, step: int, cutoff: datetime, memory: bool, rng: random.Random
) -> EpisodeRecord:
    hits = [
        {
            "id": f"doc-{event}-{j}",
            "title": f"Report {j} on question {event}",
            "date": (cutoff - timedelta(days=j + 1, hours=3)).strftime("%Y-%m-%d %H:%M"),
            "score": round(10 - j * 0.7, 3),
            "snippet": f"Officials said the matter of question {event} is moving. " * 2,
        }
        for j in range(8)
    ]
    search = json.dumps(hits)
    read = json.dumps({**hits[0], "text": "Full text of the report. " * 40})
    nb = Notebook.model_validate(
        {
            "assessment": {"probabilities": {"Yes": 0.6, "No": 0.4}, "summary": "s"},
            "evidence_ledger": [{"id": "E1", "claim": "c", "date_observed": "2024-01-01"}],
        }
    )
    user = f"Forecast date (today): {cutoff:%Y-%m-%d}\n\nQuestion: Will event {event} happen?\n" * 3
    search_call = RequestedToolCall(id="c1", name="search", arguments={"query": f"event {event}"})
    read_call = RequestedToolCall(id="c2", name="read", arguments={"doc_id": hits[0]["id"]})
    msgs = (
        Message(role="system", content=SYSTEM),
        Message(role="user", content=user),
        Message(role="assistant", content="", tool_calls=(search_call,)),
        Message(role="tool", content=search, tool_call_id="c1", name="search"),
        Message(role="assistant", content="", tool_calls=(read_call,)),
        Message(role="tool", content=read, tool_call_id="c2", name="read"),
        Message(role="assistant", content='Done.\n```json\n{"Yes": 0.6, "No": 0.4}\n```'),
    )
    usage = Usage(model_calls=1, input_tokens=2500, output_tokens=120, cost_usd=0.003)
    calls = tuple(
        ModelCall(
            seq=2 * k,
            model="provider:m",
            messages=tuple(range(2 * k + 2)),
            reply=2 * k + 2,
            usage=usage,
            latency_s=rng.random(),
        )
        for k in range(3)
    )
    tools = (
        ToolCall(seq=1, name="search", arguments={"query": f"event {event}"}, result=search,
                 doc_ids=tuple(h["id"] for h in hits), elapsed_s=0.01),
        ToolCall(seq=3, name="read", arguments={"doc_id": hits[0]["id"]}, result=read,
                 doc_ids=(hits[0]["id"],), elapsed_s=0.002),
    )  # fmt: skip
    total = Usage(model_calls=3, input_tokens=7500, output_tokens=360, cost_usd=0.009)
    return EpisodeRecord(
        messages=msgs,
        model_calls=calls,
        tool_calls=tools,
        notebook_in=nb if memory and step else None,
        notebook_out=nb if memory else None,
        usage=total,
        wall_s=2.5,
    )


def write_run(path: Path, n_steps: int, seed: int = 0) -> int:
    """Write a synthetic run log of about ``n_steps`` steps; returns the number written."""
    rng = random.Random(seed)
    header = RunHeader(
        run_id="bench",
        created_at=T0,
        dataset_id="synthetic",
        config={"rollouts": 1},
        agents=tuple(AGENTS),
        code_version="bench",
    )
    header_path(path).write_text(header.model_dump_json(indent=2) + "\n")
    n_events = max(1, n_steps // (STEPS_PER_EVENT * len(AGENTS)))
    scores = Scores(brier=0.0, accuracy=0.0, log_loss=0.0)
    written = 0
    with path.open("w", encoding="utf-8") as fh:
        for e in range(n_events):
            truth = "Yes" if rng.random() < 0.4 else "No"
            for s in range(STEPS_PER_EVENT):
                cutoff = T0 + timedelta(days=e % 300 + 7 * s)
                q = min(0.98, max(0.02, rng.random()))
                grading = Grading(
                    truth=truth, labels=("Yes", "No"), market_probs={"Yes": q, "No": 1 - q}
                )
                for spec in AGENTS:
                    if spec.role == "reference":
                        probs, episode = {"Yes": q, "No": 1 - q}, EpisodeRecord()
                    elif spec.factory == "uniform":
                        probs, episode = {"Yes": 0.5, "No": 0.5}, EpisodeRecord()
                    else:
                        p = min(0.99, max(0.01, q + rng.gauss(0, 0.15)))
                        probs = {"Yes": p, "No": 1 - p}
                        episode = _episode(e, s, cutoff, spec.setting == "memory_on", rng)
                    rec = StepRecord(
                        run_id="bench", agent=spec.name, role=spec.role, setting=spec.setting,
                        event_id=f"event-{e:05d}", step_index=s, cutoff=cutoff,
                        category=("politics", "sports", "economics", "science")[e % 4],
                        forecast=Forecast(probs=probs), episode=episode, grading=grading,
                        scores=scores,
                    )  # fmt: skip
                    fh.write(rec.model_dump_json() + "\n")
                    written += 1
    return written


def _get(port: int, path: str) -> tuple[float, float, int]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    t = time.perf_counter()
    conn.request("GET", path)
    res = conn.getresponse()  # returns once the status line and headers are in
    ttfb = time.perf_counter() - t
    body = res.read()
    full = time.perf_counter() - t
    conn.close()
    assert res.status == 200, (path, res.status)
    return ttfb, full, len(body)


def _stats(name: str, samples: list[tuple[float, float, int]]) -> dict[str, object]:
    ttfb = [s[0] * 1000 for s in samples]
    full = [s[1] * 1000 for s in samples]
    q = statistics.quantiles(full, n=20) if len(full) > 1 else [full[0]] * 19
    out = {
        "page": name,
        "n": len(samples),
        "ttfb_p50_ms": round(statistics.median(ttfb), 1),
        "full_p50_ms": round(statistics.median(full), 1),
        "full_p95_ms": round(q[18], 1),
        "bytes": int(statistics.median(s[2] for s in samples)),
    }
    print(json.dumps(out))
    return out


def _browser(port: int, paths: list[str]) -> None:
    """Full render in headless Chromium: navigation start to the load event."""
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        print("browser: skipped (selenium not installed)")
        return
    if not (Path("/usr/bin/chromium").exists() and Path("/usr/bin/chromedriver").exists()):
        print("browser: skipped (install Debian chromium and chromium-driver)")
        return
    opts = webdriver.ChromeOptions()
    opts.binary_location = "/usr/bin/chromium"
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--disable-background-networking", "--disable-component-update"):  # fmt: skip
        opts.add_argument(flag)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=opts)
    try:
        for label, group in (("leaderboard", paths[:1] * 20), ("trajectory", paths[1:21])):
            times = []
            for p in group:
                driver.get(f"http://127.0.0.1:{port}{p}")
                t = driver.execute_script(
                    "const n = performance.getEntriesByType('navigation')[0];"
                    "return [n.responseStart - n.requestStart, n.loadEventEnd - n.startTime];"
                )
                times.append(t)
            print(json.dumps({
                "page": f"{label} (chromium)", "n": len(times),
                "ttfb_p50_ms": round(statistics.median(t[0] for t in times), 1),
                "render_p50_ms": round(statistics.median(t[1] for t in times), 1),
            }))  # fmt: skip
    finally:
        driver.quit()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100_000)
    parser.add_argument("--requests", type=int, default=40)
    parser.add_argument(
        "--keep", type=Path, default=None, help="Write the run log here and keep it."
    )
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="pastcast-dashboard-"))
    folder = args.keep or tmp
    folder.mkdir(parents=True, exist_ok=True)
    log = folder / "run.jsonl"
    try:
        t = time.perf_counter()
        n = write_run(log, args.steps)
        size = log.stat().st_size / 1e6
        print(f"run log: {n} steps, {size:.0f} MB, written in {time.perf_counter() - t:.1f} s")
        t = time.perf_counter()
        index = RunIndex.load([folder])
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6
        print(
            f"index: {len(index)} steps in {time.perf_counter() - t:.1f} s (peak RSS {rss:.1f} GB)"
        )

        import uvicorn

        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        t = time.perf_counter()
        app = create_app(index)  # computes the unfiltered leaderboard
        print(f"leaderboard computed at start-up in {time.perf_counter() - t:.2f} s")
        server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
        thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
        thread.start()
        while not server.started:
            time.sleep(0.05)

        rng = random.Random(1)
        _stats("leaderboard, first request", [_get(port, "/")])
        filters = ["/?setting=memory_on", "/?category=sports", "/?model=provider%3Am1"]
        _stats(
            "leaderboard, first request of a filter (computed)", [_get(port, f) for f in filters]
        )
        _stats("leaderboard", [_get(port, "/") for _ in range(args.requests)])
        _stats("leaderboard, events page 7", [_get(port, "/?page=7") for _ in range(args.requests)])
        model_steps = [i for i, s in enumerate(index.steps) if s.episode.model_calls]
        picks = [rng.choice(model_steps) for _ in range(args.requests)]
        _stats("trajectory", [_get(port, f"/step/{i}") for i in picks])
        events = index.event_names
        _stats("event", [_get(port, f"/event/{rng.choice(events)}") for _ in range(args.requests)])
        _browser(port, ["/", *(f"/step/{i}" for i in picks[:20])])
        server.should_exit = True
        thread.join(timeout=10)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
