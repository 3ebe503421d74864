"""Documents embedded per second through an OpenAI-compatible ``/v1/embeddings`` server, against
that server's own rate: the whole corpus job as ``pastcast corpus build --embedder
openai-compatible:MODEL@URL`` runs it (documents read from the index, batches in flight at
once, each checkpointed to disk as it arrives, vectors validated, normalised and written to the
index's cache).

    python benchmarks/embedding_throughput.py [--docs 20000] [--latency-ms 50] [--slots 8] \\
        [--batch 64] [--dim 384] [--encoding base64 float] [--json out.json]

The server (``tests/corpus/embedding_server.py``, in a process of its own on the loopback)
answers in the real API's shape after ``--latency-ms`` per request, serving ``--slots``
requests at once (a GPU server's capacity; the others wait their turn), so its own rate is
``slots * batch / latency`` documents a second. The client sends ``--slots`` requests at once.
The client's CPU time a document (all its threads: reading the documents, requests, parsing,
checkpoints) says what one free core sustains whatever the load. The load average is printed:
the machine may be shared.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
SERVER = HERE.parent / "tests" / "corpus" / "embedding_server.py"


def corpus(n: int) -> list[object]:
    from pastcast.records import Document

    start = datetime(2024, 1, 1, tzinfo=UTC)
    words = [f"w{i}" for i in range(500)]
    return [
        Document(
            id=f"doc-{i:07d}",
            timestamp=start + timedelta(minutes=7 * i),
            title=f"{words[i % 500]} {words[(i * 7) % 500]}",
            text=" ".join(words[(i * j) % 500] for j in range(60)),
        )
        for i in range(n)
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=int, default=20_000)
    parser.add_argument("--latency-ms", type=float, default=50.0)
    parser.add_argument("--slots", type=int, default=8)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--encoding", nargs="+", default=["base64", "float"])
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()

    from pastcast.corpus import EmbeddedIndex
    from pastcast.corpus.dense import DenseIndex, RemoteEmbedder

    print(f"load average at start: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    options = {"dim": args.dim, "latency_s": args.latency_ms / 1000, "slots": args.slots}
    server = subprocess.Popen(
        [sys.executable, str(SERVER), json.dumps(options)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    rows = []
    try:
        assert server.stdout is not None
        url = server.stdout.readline().strip()
        own = args.slots * args.batch / (args.latency_ms / 1000)
        with tempfile.TemporaryDirectory(prefix="pastcast-embed-") as tmp:
            EmbeddedIndex.build(corpus(args.docs), Path(tmp) / "ix")
            print(
                f"{args.docs} documents, batches of {args.batch}, {args.slots} in flight, "
                f"{args.latency_ms:.0f} ms a batch, {args.dim} dimensions: the server's own "
                f"rate is {own:,.0f} docs/s"
            )
            for encoding in args.encoding:
                for stale in Path(tmp, "ix").glob("dense-*"):
                    stale.unlink()
                embedder = RemoteEmbedder(
                    f"bench-{encoding}",
                    base_url=url,
                    batch_size=args.batch,
                    concurrency=args.slots,
                    encoding_format=encoding,
                )
                t0, cpu0 = time.perf_counter(), time.process_time()
                DenseIndex(EmbeddedIndex.open(Path(tmp) / "ix"), embedder)
                wall = time.perf_counter() - t0
                cpu_us = 1e6 * (time.process_time() - cpu0) / args.docs
                rate = args.docs / wall
                rows.append(
                    {
                        "encoding": encoding,
                        "docs": args.docs,
                        "wall_s": round(wall, 2),
                        "docs_per_s": round(rate),
                        "server_docs_per_s": round(own),
                        "share": round(rate / own, 3),
                        "client_cpu_us_per_doc": round(cpu_us, 1),
                        "load": round(os.getloadavg()[0], 2),
                    }
                )
                print(
                    f"  {encoding:>6}: {wall:6.2f} s, {rate:8,.0f} docs/s = "
                    f"{100 * rate / own:5.1f}% of the server's rate; the client's CPU "
                    f"{cpu_us:.0f} us a document, {1e6 / cpu_us:,.0f} docs/s on one free core "
                    f"(load {os.getloadavg()[0]:.2f})"
                )
    finally:
        if server.stdin is not None:
            server.stdin.close()
        server.wait(timeout=10)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))
    print(f"load average at the end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
