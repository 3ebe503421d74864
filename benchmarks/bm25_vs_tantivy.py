"""The embedded BM25 index of a large corpus against tantivy: the first search after opening
(in a fresh process, as a command-line search pays it) and the latency at the early, middle and
late cutoffs of ``scale.py`` (the late one admits (nearly) every document).

    python benchmarks/scale.py --docs 1000000 --keep ...   # or any built index and its source
    python benchmarks/bm25_vs_tantivy.py --index INDEX --source docs.jsonl [--queries 300]

tantivy indexes the same JSON lines (the same tokenizer and stopwords as in
``retrieval_peers.py``) into a temporary folder beside ``--index``, deleted afterwards (or into
``--peer``, kept for the next run: two versions of pastcast measured against one tantivy); its
query is the terms OR-ed with the cutoff as a range filter on a fast field, top 10 ids. Each
query is timed on both systems in turn (best of ``--repeats``), so the machine's load weighs on
both alike. Per cutoff: pastcast's p50/p95 (whole searches: hits with snippets; and the
ranking alone, ``rank``: ordinals and scores), tantivy's (top 10 ids), their p50 ratios, and
how many top 10s are exact, that is equal to the naive as-of scorer's (``naive_score``):
pastcast's ids in order with their scores bit for bit, tantivy's as a set of ids (its scores
are float32 and its statistics those of every document). Printed with the machine load
(``uptime``) before and after each cutoff.

    python benchmarks/bm25_vs_tantivy.py --build --docs 1000000 [--workers 2] [--rounds 1]

``--build``: the CPU of building each index from the same JSON lines (``scale.py``'s corpus,
written to a fresh folder under ``--tmp`` and deleted afterwards), each build a whole process
of its own: ``pastcast corpus build`` (its worker processes included) and a process reading
the lines into tantivy as above; CPU seconds from the processes' rusage, peak memory of the
process tree sampled, their ratio and the load before and after each build. With ``--rounds``
above 1 the two alternate which goes first.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from datetime import datetime
from functools import partial
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from retrieval_peers import Tantivy
from scale import CUTOFFS, TANTIVY_BUILD, children_cpu, queries, run_tree, write_corpus

from pastcast.corpus.embedded import EmbeddedIndex
from pastcast.records import Document

_COLD = """
import sys, time
t0 = time.perf_counter()
from pastcast.corpus.embedded import EmbeddedIndex
from datetime import datetime
from functools import partial
index = EmbeddedIndex.open(sys.argv[1])
t1 = time.perf_counter()
index.search(sys.argv[2], as_of=datetime.fromisoformat(sys.argv[3]), k=10)
t2 = time.perf_counter()
print(t1 - t0, t2 - t1)
"""


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True, check=True).stdout.strip()


def cold(index: Path, query: str, cutoff: str) -> tuple[float, float]:
    """Seconds to open (imports included) and to run the first search, in a fresh process."""
    out = subprocess.run(
        [sys.executable, "-c", _COLD, str(index), query, cutoff],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return float(out[0]), float(out[1])


def documents(source: Path) -> Iterator[Document]:
    with source.open("rb") as fh:
        for line in fh:
            yield Document.model_validate_json(line)


def pct_ms(times: list[float], q: int) -> float:
    return float(np.percentile(times, q)) * 1000.0


def best(run: Callable[[], object], repeats: int) -> float:
    """The fastest of ``repeats`` runs, in seconds."""
    fastest = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        run()
        fastest = min(fastest, time.perf_counter() - t)
    return fastest


def measure(
    index: EmbeddedIndex, peer: Tantivy | None, qs: list[str], cutoff: datetime, repeats: int
) -> dict[str, object]:
    """One cutoff: both systems' latency per query, in turn, and whose top 10 are exact."""
    n = index.count_before(cutoff)
    ours: list[float] = []
    ranks: list[float] = []  # the ranking alone: ordinals and scores, no hits
    theirs: list[float] = []
    exact = {"pastcast": 0, "tantivy": 0}
    out: dict[str, object] = {"visible": n, "load_before": uptime()}
    for q in qs:
        terms = EmbeddedIndex.query_terms(q)
        ours.append(best(partial(index.search, q, as_of=cutoff, k=10), repeats))
        ranks.append(best(partial(index.score, terms, n, 10), repeats))
        hits = index.search(q, as_of=cutoff, k=10)
        want_o, want_s = index.naive_score(terms, n, 10)
        want = [index.read_ordinal(int(o)).id for o in want_o]
        exact["pastcast"] += [h.id for h in hits] == want and [h.score for h in hits] == [
            float(s) for s in want_s
        ]
        if peer is not None:
            theirs.append(best(partial(peer.search, terms, cutoff, 10), repeats))
            exact["tantivy"] += set(peer.search(terms, cutoff, 10)) == set(want)
    out["pastcast_p50_ms"], out["pastcast_p95_ms"] = pct_ms(ours, 50), pct_ms(ours, 95)
    out["pastcast_rank_p50_ms"], out["pastcast_rank_p95_ms"] = pct_ms(ranks, 50), pct_ms(ranks, 95)
    out["pastcast_exact_top10"] = f"{exact['pastcast']}/{len(qs)}"
    if peer is not None:
        out["tantivy_p50_ms"], out["tantivy_p95_ms"] = pct_ms(theirs, 50), pct_ms(theirs, 95)
        out["ratio_p50"] = pct_ms(ours, 50) / pct_ms(theirs, 50)
        out["ratio_rank_p50"] = pct_ms(ranks, 50) / pct_ms(theirs, 50)
        out["tantivy_exact_top10"] = f"{exact['tantivy']}/{len(qs)}"
    out["load_after"] = uptime()
    return out


def timed_build(cmd: list[str]) -> dict[str, object]:
    """One build as a process tree: its CPU seconds (the finished processes' rusage), wall
    seconds and sampled peak memory, with the load before and after."""
    env = dict(os.environ)
    env.setdefault("PYTHONPATH", str(Path(__file__).resolve().parents[1] / "src"))
    out: dict[str, object] = {"load_before": uptime()}
    cpu = children_cpu()
    wall, peak, _ = run_tree(cmd, env)
    out.update(cpu_s=round(children_cpu() - cpu, 2), wall_s=round(wall, 1))
    out.update(peak_rss_mb=round(peak / 2**20), load_after=uptime())
    return out


def build_cpu(docs: int, workers: int, rounds: int, tmp: Path) -> dict[str, object]:
    """pastcast's and tantivy's build CPU on the same documents, side by side."""
    tmp.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="build-cpu-", dir=tmp))
    result: dict[str, object] = {"docs": docs, "workers": workers, "nproc": os.cpu_count()}
    try:
        source = work / "docs.jsonl"
        write_corpus(docs, source)
        cli = "import sys; from pastcast.cli import main; sys.exit(main())"
        here = str(Path(__file__).resolve().parent)
        for r in range(rounds):
            runs: dict[str, dict[str, object]] = {}
            order = ["pastcast", "tantivy"] if r % 2 == 0 else ["tantivy", "pastcast"]
            for name in order:
                index = work / f"{name}-{r}"
                if name == "pastcast":
                    cmd = [sys.executable, "-c", cli, "corpus", "build", f"jsonl:{source}"]
                    cmd += ["--out", str(index), "--workers", str(workers), "--json"]
                else:
                    cmd = [sys.executable, "-c", TANTIVY_BUILD, str(source), str(index), here]
                runs[name] = timed_build(cmd)
                if name == "pastcast":
                    report = json.loads((index / "build_report.json").read_text())
                    runs[name]["phase_cpu_s"] = report["phase_cpu_seconds"]
                shutil.rmtree(index, ignore_errors=True)
            ours, theirs = runs["pastcast"]["cpu_s"], runs["tantivy"]["cpu_s"]
            runs["ratio_cpu"] = round(float(ours) / float(theirs), 3)  # type: ignore[arg-type]
            result[f"round_{r}"] = runs
            print(json.dumps({f"round_{r}": runs}), flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return result


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--index", type=Path)
    ap.add_argument("--build", action="store_true", help="build CPU against tantivy's instead")
    ap.add_argument("--docs", type=int, default=1_000_000, help="--build: corpus size")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="--build")
    ap.add_argument("--rounds", type=int, default=1, help="--build: builds of each")
    ap.add_argument("--tmp", type=Path, default=Path("/work/tmp"), help="--build: data folder")
    ap.add_argument("--source", type=Path, help="the JSON lines indexed (tantivy: omitted, none)")
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--repeats", type=int, default=3, help="timed runs per query (best kept)")
    ap.add_argument(
        "--peer",
        type=Path,
        help="tantivy's index folder: built there if absent and kept, so that a second run (the "
        "other code's, on the same documents) opens it (default: a temporary folder)",
    )
    args = ap.parse_args()
    if args.build:
        print(json.dumps(build_cpu(args.docs, args.workers, args.rounds, args.tmp), indent=2))
        return 0
    if args.index is None:
        ap.error("--index is required (or --build)")
    late = CUTOFFS["late"]
    qs = queries(args.queries)
    result: dict[str, object] = {"load_before": uptime()}
    # the first process may compile the kernel (then cached on disk); the second shows a start
    result["cold_open_and_first_search_s"] = [cold(args.index, q, late.isoformat()) for q in qs[:2]]
    index = EmbeddedIndex.open(args.index)
    index.search(qs[0], as_of=late, k=10)
    folder = Path(tempfile.mkdtemp(prefix="tantivy-", dir=args.index.parent))
    try:
        peer = None
        if args.source is not None:
            t = time.perf_counter()
            ix = args.peer or folder / "ix"
            peer = Tantivy(() if (ix / "meta.json").is_file() else documents(args.source), ix)
            result["tantivy_build_s"] = time.perf_counter() - t
        for name, cutoff in CUTOFFS.items():
            result[name] = measure(index, peer, qs, cutoff, args.repeats)
            print(json.dumps({name: result[name]}), flush=True)  # kept if a later one fails
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
