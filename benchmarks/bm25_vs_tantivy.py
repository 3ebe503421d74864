"""The embedded BM25 index of a large corpus against tantivy: the first search after opening
(in a fresh process, as a command-line search pays it) and the late-cutoff latency, where the
cutoff admits (nearly) every document.

    python benchmarks/scale.py --docs 1000000 --keep ...   # or any built index and its source
    python benchmarks/bm25_vs_tantivy.py --index INDEX --source docs.jsonl [--queries 300]

tantivy indexes the same JSON lines (the same tokenizer and stopwords as in
``retrieval_peers.py``) into a temporary folder beside ``--index``, deleted afterwards; its
query is the terms OR-ed with the cutoff as a range filter on a fast field, top 10 ids. Prints
pastcast's figure, tantivy's and their ratio, with the machine load (``uptime``).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from retrieval_peers import Tantivy
from scale import MONTHS, _month_start, queries

from pastcast.corpus.embedded import EmbeddedIndex
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


def p50_ms(times: list[float]) -> float:
    return statistics.median(times) * 1000.0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--index", type=Path, required=True)
    ap.add_argument("--source", type=Path, help="the JSON lines indexed (tantivy: omitted, none)")
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--repeats", type=int, default=3, help="timed runs per query (best kept)")
    args = ap.parse_args()
    late = _month_start(MONTHS) - timedelta(seconds=1)
    qs = queries(args.queries)
    result: dict[str, object] = {"load_before": uptime()}
    # the first process may compile the kernel (then cached on disk); the second shows a start
    result["cold_open_and_first_search_s"] = [cold(args.index, q, late.isoformat()) for q in qs[:2]]
    index = EmbeddedIndex.open(args.index)
    index.search(qs[0], as_of=late, k=10)
    ours = []
    for q in qs:
        best = float("inf")
        for _ in range(args.repeats):
            t = time.perf_counter()
            index.search(q, as_of=late, k=10)
            best = min(best, time.perf_counter() - t)
        ours.append(best)
    result["visible"] = index.count_before(late)
    result["pastcast_late_p50_ms"] = p50_ms(ours)
    result["load_pastcast"] = uptime()
    print(json.dumps(result, indent=2), flush=True)  # kept if the peer fails
    if args.source is not None:
        folder = Path(tempfile.mkdtemp(prefix="tantivy-", dir=args.index.parent))
        try:
            t = time.perf_counter()
            peer = Tantivy(documents(args.source), folder / "ix")
            result["tantivy_build_s"] = time.perf_counter() - t
            terms = [EmbeddedIndex.query_terms(q) for q in qs]
            theirs = []
            for ts in terms:
                best = float("inf")
                for _ in range(args.repeats):
                    t = time.perf_counter()
                    peer.search(ts, late, 10)
                    best = min(best, time.perf_counter() - t)
                theirs.append(best)
            result["tantivy_late_p50_ms"] = p50_ms(theirs)
            result["ratio"] = p50_ms(ours) / p50_ms(theirs)
            result["load_tantivy"] = uptime()
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
