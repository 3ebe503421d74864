"""Documents embedded per second through an OpenAI-compatible ``/v1/embeddings`` server, as a
ratio of that server's rate: the whole corpus job as ``pastcast corpus build --embedder
openai-compatible:MODEL@URL`` runs it (documents read from the index, batches in flight at
once, each checkpointed to disk as it arrives, vectors validated, normalised and written to the
index's cache).

    python benchmarks/embedding_throughput.py [--docs 40000] [--latency-ms 50] [--slots 8] \\
        [--batch 64] [--dim 384] [--encoding base64 float] [--repeat 2] [--json out.json]

The server (``tests/corpus/embedding_server.py``, in a process of its own on the loopback)
answers in the real API's shape after ``--latency-ms`` per request, serving ``--slots``
requests at once (a GPU server's capacity; the others wait their turn), so its nominal rate is
``slots * batch / latency`` documents a second. The job may keep ``--slots`` requests in flight,
exactly what the server serves at once.

The baseline is measured in the same run, on the same work, just before and just after each
job: a bare client (``--slots`` threads, one connection each, the same requests prepared
beforehand, replies read and dropped) sends every batch of the corpus to the same server (once
more before the first job, not counted: the server's threads and connections start). Its
rate is what the server and the loopback deliver on this machine at this moment, whatever else
runs on it; ``job / baseline`` is the share the job's own work (reading the documents, encoding
requests, parsing, validating, checkpointing) loses. The client's and the server's CPU time a
document say what each costs whatever the load, and how late a thread asking to wake every
millisecond woke during the job says how long a ready thread waited for a core. The load
average (1, 5, 15 minutes, as ``uptime`` shows it) is printed at the start, beside every row
and at the end.
"""

from __future__ import annotations

import argparse
import http.client
import itertools
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import urlsplit

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


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def cpu_seconds(pid: int) -> float:
    """User and system CPU seconds of process ``pid`` so far (Linux ``/proc``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class WakeProbe:
    """While it runs, a thread asks to wake every millisecond and records how late it woke: the
    time a thread of this process, ready to run, waited for a core (the machine's share)."""

    def __init__(self) -> None:
        self.late: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            t0 = time.perf_counter()
            time.sleep(0.001)
            self.late.append(time.perf_counter() - t0 - 0.001)

    def __enter__(self) -> WakeProbe:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def summary_ms(self) -> tuple[float, float]:
        """Mean and 90th percentile of the lateness, in milliseconds."""
        late = sorted(self.late) or [0.0]
        return 1e3 * sum(late) / len(late), 1e3 * late[int(0.9 * (len(late) - 1))]


def bare_client(url: str, bodies: list[bytes], slots: int) -> tuple[float, float]:
    """Wall and CPU seconds for ``slots`` threads to send every body and read every reply,
    nothing else."""
    parts = urlsplit(url)
    path = f"{parts.path}/embeddings"
    headers = {"Content-Type": "application/json"}
    order = itertools.count()
    failed: list[str] = []

    def worker() -> None:
        conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=120)
        try:
            while (i := next(order)) < len(bodies):
                conn.request("POST", path, body=bodies[i], headers=headers)
                resp = conn.getresponse()
                resp.read()
                if resp.status != 200:
                    failed.append(f"HTTP {resp.status}")
        finally:
            conn.close()

    threads = [threading.Thread(target=worker) for _ in range(slots)]
    t0, cpu0 = time.perf_counter(), time.process_time()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if failed:
        raise SystemExit(f"the bare client failed: {failed[0]}")
    return time.perf_counter() - t0, time.process_time() - cpu0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=int, default=40_000)
    parser.add_argument("--latency-ms", type=float, default=50.0)
    parser.add_argument("--slots", type=int, default=8)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--encoding", nargs="+", default=["base64", "float"])
    parser.add_argument("--repeat", type=int, default=2, help="jobs per encoding")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()

    from pastcast.corpus.dense import DenseIndex, RemoteEmbedder, embedding_text
    from pastcast.corpus.embedded import EmbeddedIndex

    print(f"load average at start: {load()} on {os.cpu_count()} cores")
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
        nominal = args.slots * args.batch / (args.latency_ms / 1000)
        with tempfile.TemporaryDirectory(prefix="pastcast-embed-") as tmp:
            ix_dir = Path(tmp) / "ix"
            EmbeddedIndex.build(corpus(args.docs), ix_dir)
            ix = EmbeddedIndex.open(ix_dir)
            texts = [embedding_text(ix.read_ordinal(i)) for i in range(len(ix))]
            print(
                f"{args.docs} documents, batches of {args.batch}, {args.slots} in flight, "
                f"{args.latency_ms:.0f} ms a batch, {args.dim} dimensions: the server's nominal "
                f"rate is {nominal:,.0f} docs/s"
            )
            for encoding in args.encoding:
                bodies = [
                    json.dumps(
                        {
                            "model": f"bench-{encoding}",
                            "input": texts[lo : lo + args.batch],
                            "encoding_format": encoding,
                        }
                    ).encode()
                    for lo in range(0, len(texts), args.batch)
                ]

                bare_cpu: list[float] = []

                def baseline(bodies: list[bytes] = bodies, cpu: list[float] = bare_cpu) -> float:
                    wall, seconds = bare_client(url, bodies, args.slots)
                    cpu.append(1e6 * seconds / args.docs)
                    return args.docs / wall

                baseline()  # a warm-up: the server's threads and the client's connections
                for run in range(args.repeat):
                    before = baseline()
                    for stale in ix_dir.glob("dense-*"):
                        stale.unlink()
                    embedder = RemoteEmbedder(
                        f"bench-{encoding}",
                        base_url=url,
                        batch_size=args.batch,
                        concurrency=args.slots,
                        encoding_format=encoding,
                    )
                    t0, cpu0 = time.perf_counter(), time.process_time()
                    server0 = cpu_seconds(server.pid)
                    with WakeProbe() as probe:
                        DenseIndex(EmbeddedIndex.open(ix_dir), embedder)
                    wall = time.perf_counter() - t0
                    embedder.close()
                    late_mean, late_p90 = probe.summary_ms()
                    cpu_us = 1e6 * (time.process_time() - cpu0) / args.docs
                    server_us = 1e6 * (cpu_seconds(server.pid) - server0) / args.docs
                    after = baseline()
                    rate, base = args.docs / wall, (before + after) / 2
                    row = {
                        "encoding": encoding,
                        "run": run + 1,
                        "docs": args.docs,
                        "wall_s": round(wall, 2),
                        "docs_per_s": round(rate),
                        "nominal_docs_per_s": round(nominal),
                        "baseline_docs_per_s": [round(before), round(after)],
                        "ratio_to_nominal": round(rate / nominal, 3),
                        "ratio_to_baseline": round(rate / base, 3),
                        "baseline_to_nominal": round(base / nominal, 3),
                        "client_cpu_us_per_doc": round(cpu_us, 1),
                        "bare_client_cpu_us_per_doc": round(bare_cpu[-1], 1),
                        "server_cpu_us_per_doc": round(server_us, 1),
                        "wake_late_ms_mean_p90": [round(late_mean, 2), round(late_p90, 2)],
                        "load": load(),
                    }
                    rows.append(row)
                    print(
                        f"  {encoding:>6} #{run + 1}: {wall:5.2f} s, {rate:6,.0f} docs/s; "
                        f"baseline {before:,.0f} / {after:,.0f} docs/s; ratio to the nominal rate "
                        f"{rate / nominal:.3f}, to the baseline {rate / base:.3f} (baseline to "
                        f"nominal {base / nominal:.3f}); CPU a document: client {cpu_us:.0f} us "
                        f"(bare client {bare_cpu[-1]:.0f}), server {server_us:.0f} us; a 1 ms "
                        f"sleep woke {late_mean:.2f} ms late on average, p90 {late_p90:.2f} "
                        f"(load {load()})"
                    )
    finally:
        if server.stdin is not None:
            server.stdin.close()
        server.wait(timeout=10)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))
    print(f"load average at the end: {load()}")


if __name__ == "__main__":
    main()
