"""The embedded BM25 index of a large corpus against tantivy: the first search after opening
(in fresh processes, as a command-line search pays it) and the latency at the early, middle and
late cutoffs of ``scale.py`` (the late one admits (nearly) every document).

    python benchmarks/scale.py --docs 1000000 --keep ...   # or any built index and its source
    python benchmarks/bm25_vs_tantivy.py --index INDEX --source docs.jsonl [--queries 300]
        [--cold 5] [--cold-only]

First search (``cold``, ``--cold`` processes each, in turn, one query each, medians): pastcast's
Python API (``EmbeddedIndex.open`` with its imports, then the first search), the whole
``pastcast corpus search --json`` command, and tantivy's import and open, then its first search
of the same documents (each process's wall and CPU seconds), their ratios and the load, and the
API's steps apart (imports, open, numba's import, numba's compiler set-up, the search); with
``--compare-src DIR`` pastcast's two
also from that checkout's ``src`` (``_earlier``), in turn with the others; with ``--uncached``
every file of both indexes is dropped from the page cache before each process (the first
search after a reboot, or after other work evicted the index). ``--cold-only`` stops there.

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
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from retrieval_peers import Tantivy
from scale import (
    CUTOFFS,
    TANTIVY_BUILD,
    children_cpu,
    queries,
    run_tree,
    uncache,
    write_corpus,
)

from pastcast.corpus.embedded import EmbeddedIndex, to_micros
from pastcast.records import Document

_COLD = """
import sys, time
t0 = time.perf_counter()
from pastcast.corpus.embedded import EmbeddedIndex
from datetime import datetime
index = EmbeddedIndex.open(sys.argv[1])
t1 = time.perf_counter()
index.search(sys.argv[2], as_of=datetime.fromisoformat(sys.argv[3]), k=10)
t2 = time.perf_counter()
print(t1 - t0, t2 - t1)
"""

# the same steps split: imports, open, numba's import (with the kernel's module), numba's
# compiler set-up (scipy's import among it, whatever the kernel uses), the search
_PHASES = """
import sys, time
t = [time.perf_counter()]
from pastcast.corpus.embedded import EmbeddedIndex
from datetime import datetime
t.append(time.perf_counter())
index = EmbeddedIndex.open(sys.argv[1])
t.append(time.perf_counter())
import pastcast.corpus.embedded._kernel
t.append(time.perf_counter())
from numba.core.registry import cpu_target
cpu_target.target_context.refresh()
t.append(time.perf_counter())
index.search(sys.argv[2], as_of=datetime.fromisoformat(sys.argv[3]), k=10)
t.append(time.perf_counter())
print(*(b - a for a, b in zip(t, t[1:])))
"""

# tantivy's side of the same: its import and open, then the query of ``Tantivy.search`` (the
# query's terms as pastcast tokenizes them, the cutoff in microseconds) and the ten ids
_COLD_TANTIVY = """
import sys, time
t0 = time.perf_counter()
import tantivy as t
index = t.Index.open(sys.argv[1])
schema, searcher = index.schema, index.searcher()
t1 = time.perf_counter()
text = t.Query.boolean_query(
    [(t.Occur.Should, t.Query.term_query(schema, "body", w)) for w in sys.argv[2].split()]
)
before = t.Query.range_query(
    schema, "ts", t.FieldType.Integer, None, int(sys.argv[3]), include_upper=False
)
query = t.Query.boolean_query([(t.Occur.Must, text), (t.Occur.Must, before)])
ids = [searcher.doc(a)["id"][0] for _, a in searcher.search(query, 10).hits]
t2 = time.perf_counter()
print(t1 - t0, t2 - t1)
"""


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True, check=True).stdout.strip()


def _process(
    *args: str, timed: bool = True, src: Path | None = None, drop: tuple[Path, ...] = ()
) -> list[float]:
    """A fresh process's open and first-search seconds (``timed``: as it printed them) and
    their sum, its wall time and its CPU seconds (user and system: what the load does not
    stretch); pastcast imported from ``src`` if given; ``drop``'s files uncached first."""
    uncache(*drop)
    env = os.environ | ({"PYTHONPATH": str(src)} if src else {})
    t, cpu = time.perf_counter(), children_cpu()
    out = subprocess.run(
        [sys.executable, "-c", *args], capture_output=True, text=True, check=True, env=env
    )
    wall, cpu = time.perf_counter() - t, children_cpu() - cpu
    if not timed:
        return [wall, cpu]
    opened, first, *phases = map(float, out.stdout.split())
    return [opened, first, *phases] if phases else [opened, first, opened + first, wall, cpu]


def cold(
    index: Path,
    peer: Path | None,
    qs: list[str],
    cutoff: datetime,
    earlier: Path | None,
    uncached: bool = False,
) -> dict[str, object]:
    """The first search after opening, in fresh processes, one query each, in turn: pastcast's
    Python API (open with its imports, then the first search), ``pastcast corpus search`` (the
    whole command, as a user runs it), the same two of the ``earlier`` checkout's ``src`` if
    given, tantivy (open with its import, then the first search) on the same documents, and
    the API's steps timed apart (``_PHASES``). Medians, seconds. A first process of each
    pastcast, uncounted, compiles the kernel if none is cached on disk."""
    late, stamp = cutoff.isoformat(), str(to_micros(cutoff))
    cli = "import sys; from pastcast.cli import main; sys.exit(main())"
    pastcasts = {"": None} | ({"_earlier": earlier} if earlier else {})
    drop = (index, *((peer,) if peer else ())) if uncached else ()
    runs: dict[str, list[list[float]]] = {"tantivy": [], "api_phases": []}
    for tag, src in pastcasts.items():
        _process(_COLD, str(index), qs[0], late, src=src)
        runs |= {f"api{tag}": [], f"cli{tag}": []}
    out: dict[str, Any] = {"load_before": uptime(), "uncached": uncached}
    for q in qs:
        for tag, src in pastcasts.items():
            runs[f"api{tag}"].append(_process(_COLD, str(index), q, late, src=src, drop=drop))
            search = ("corpus", "search", str(index), q, "--as-of", late, "--json")
            runs[f"cli{tag}"].append(_process(cli, *search, timed=False, src=src, drop=drop))
        if peer is not None:
            terms = " ".join(EmbeddedIndex.query_terms(q))
            runs["tantivy"].append(_process(_COLD_TANTIVY, str(peer), terms, stamp, drop=drop))
        runs["api_phases"].append(_process(_PHASES, str(index), q, late, drop=drop))
    names = ("open_s", "first_search_s", "open_and_first_search_s", "process_s", "process_cpu_s")
    phases = ("import_s", "open_s", "numba_import_s", "numba_setup_s", "search_s")
    for name, got in ((n, g) for n, g in runs.items() if g):
        keys = phases if name == "api_phases" else names[-len(got[0]) :]
        cols = zip(keys, zip(*got, strict=True), strict=True)
        out[name] = {k: float(np.median(c)) for k, c in cols}
    if runs["tantivy"]:
        ours, theirs = out["api"], out["tantivy"]
        both = ours["open_and_first_search_s"], theirs["open_and_first_search_s"]
        out["ratio_open_and_first_search"] = both[0] / both[1]
        out["ratio_process_cli"] = out["cli"]["process_s"] / theirs["process_s"]
        out["ratio_process_cpu_cli"] = out["cli"]["process_cpu_s"] / theirs["process_cpu_s"]
    out["load_after"] = uptime()
    return out


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
    ap.add_argument("--cold", type=int, default=5, help="fresh processes of each, first search")
    ap.add_argument("--cold-only", action="store_true", help="no latency at the cutoffs")
    ap.add_argument("--uncached", action="store_true", help="--cold: indexes out of the page cache")
    ap.add_argument("--compare-src", type=Path, help="--cold: also another checkout's src")
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
    folder = Path(tempfile.mkdtemp(prefix="tantivy-", dir=args.index.parent))
    try:
        peer, ix = None, args.peer or folder / "ix"
        if args.source is not None:
            t = time.perf_counter()
            peer = Tantivy(() if (ix / "meta.json").is_file() else documents(args.source), ix)
            result["tantivy_build_s"] = time.perf_counter() - t
        result["cold"] = cold(
            args.index, ix if peer else None, qs[: args.cold], late, args.compare_src, args.uncached
        )
        print(json.dumps({"cold": result["cold"]}), flush=True)
        index = EmbeddedIndex.open(args.index)
        index.search(qs[0], as_of=late, k=10)
        for name, cutoff in CUTOFFS.items() if not args.cold_only else ():
            result[name] = measure(index, peer, qs, cutoff, args.repeats)
            print(json.dumps({name: result[name]}), flush=True)  # kept if a later one fails
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
