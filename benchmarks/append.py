"""Appending to the embedded index against building it again: the corpus of ``scale.py`` (six
years, the volume growing over time), ``--docs`` of it indexed, then ``--share`` more appended,
either the newest ones (a live corpus: the last month and any after it) or ones scattered over
every month (the worst case: every partition touched), against a build of all of them.

    python benchmarks/append.py --docs 100000 [--share 0.01] [--workers 1] [--out results.json]

The appended index is checked to equal the rebuilt one (content hash). Everything is written
under a fresh folder in ``--tmp`` and deleted afterwards.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scale import corpus_lines

from pastcast.corpus.embedded import EmbeddedIndex
from pastcast.records import Document


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=100_000)
    parser.add_argument("--share", type=float, default=0.01)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--tmp", type=Path, default=None)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    extra = max(1, round(args.docs * args.share))
    docs = [Document.model_validate_json(line) for line in corpus_lines(args.docs + extra)]
    docs.sort(key=lambda d: (d.timestamp, d.id))
    scattered = set(random.Random(0).sample(range(len(docs)), extra))
    cases = {
        "newest": (docs[: args.docs], docs[args.docs :]),
        "scattered": (
            [d for i, d in enumerate(docs) if i not in scattered],
            [d for i, d in enumerate(docs) if i in scattered],
        ),
    }
    results: dict[str, Any] = {"docs": args.docs, "appended": extra, "workers": args.workers}
    root = Path(tempfile.mkdtemp(prefix="pastcast-append-", dir=args.tmp))
    try:
        results["load_before"] = _load()
        t0 = time.perf_counter()
        rebuilt = EmbeddedIndex.build(iter(docs), root / "rebuilt", workers=args.workers)
        results["rebuild_s"] = round(time.perf_counter() - t0, 2)
        for name, (base, new) in cases.items():
            target = root / name
            EmbeddedIndex.build(iter(base), target, workers=args.workers)
            t0 = time.perf_counter()
            appended = EmbeddedIndex.append(iter(new), target, workers=args.workers)
            seconds = time.perf_counter() - t0
            report = appended.build_report
            assert report is not None
            same = appended.manifest["content_sha256"] == rebuilt.manifest["content_sha256"]
            results[name] = {
                "append_s": round(seconds, 2),
                "partitions": report.partitions,
                "reindexed": report.partitions - report.partitions_kept,
                "phase_s": report.phase_seconds,
                "equals_rebuild": same,
            }
            if not same:
                raise SystemExit(f"{name}: the appended index differs from the rebuilt one")
        results["load_after"] = _load()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    text = json.dumps(results, indent=2)
    print(text)
    if args.out is not None:
        args.out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
