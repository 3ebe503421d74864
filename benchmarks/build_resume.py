"""A corpus build resumed after a kill, and its months indexed on a Dask cluster.

On the synthetic corpus of ``scale.py``: a whole build (``pastcast corpus build``), a build
killed (SIGKILL, its workers too) once ``--kill-at`` of its month partitions are written, and
the build run again, which reuses the read phase and the complete partitions: their CPU seconds
(the build process and its workers) and the ratio. With ``--dask K``, the same build with its
months indexed by a local Dask cluster of K worker processes (``--scheduler``), wall and CPU
(the builder's and the Dask workers'), and whether its files equal the one-machine build's.

    python benchmarks/build_resume.py --docs 150000 [--workers 2] [--dask 2] [--out r.json]

Everything is written under a fresh folder in ``--tmp`` and deleted afterwards.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scale import _load, children_cpu, write_corpus


def _build_cmd(source: Path, out: Path, *extra: str) -> list[str]:
    main = "import sys; from pastcast.cli import main; sys.exit(main())"
    cli = [sys.executable, "-c", main, "corpus", "build", f"jsonl:{source}"]
    return [*cli, "--out", str(out), "--json", *extra]


def build(source: Path, out: Path, *extra: str) -> dict[str, Any]:
    """One build to its end: wall, CPU of its process tree, its report."""
    cpu0, t0 = children_cpu(), time.perf_counter()
    done = subprocess.run(_build_cmd(source, out, *extra), capture_output=True, check=True)
    wall, cpu = time.perf_counter() - t0, children_cpu() - cpu0
    report = json.loads(done.stdout)["build"]
    return {"wall_s": round(wall, 2), "cpu_s": round(cpu, 2), "report": report}


def killed(source: Path, out: Path, fraction: float, months: int, *extra: str) -> dict[str, Any]:
    """A build killed, with its workers, once ``fraction`` of its ``months`` are written."""
    parts = out.with_name(f".{out.name}.building") / "parts"
    cpu0, t0 = children_cpu(), time.perf_counter()
    proc = subprocess.Popen(
        _build_cmd(source, out, *extra),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # its own process group: the workers go with it
    )
    while len(list(parts.glob("*/manifest.json"))) < fraction * months:
        if proc.poll() is not None:
            raise RuntimeError("the build ended before it could be killed")
        time.sleep(0.05)
    written = len(list(parts.glob("*/manifest.json")))
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    wall, cpu = time.perf_counter() - t0, children_cpu() - cpu0
    return {"wall_s": round(wall, 2), "cpu_s": round(cpu, 2), "partitions_written": written}


def tree_digest(index_dir: Path) -> str:
    digest = hashlib.sha256()
    for f in sorted(p for p in index_dir.rglob("*") if p.is_file()):
        rel = f.relative_to(index_dir).as_posix()
        if rel != "build_report.json":
            digest.update(rel.encode() + b"\0" + f.read_bytes() + b"\0")
    return digest.hexdigest()


def _workers_cpu(client: Any) -> float:
    def cpu() -> float:
        use = resource.getrusage(resource.RUSAGE_SELF)
        return use.ru_utime + use.ru_stime

    return float(sum(client.run(cpu).values()))


def on_dask(source: Path, out: Path, workers: int) -> dict[str, Any]:
    import distributed

    with (
        distributed.LocalCluster(
            host="127.0.0.1",
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            silence_logs=logging.ERROR,
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        client.run(lambda: bool(__import__("pastcast.corpus.embedded")))  # as after a month
        before, t0 = _workers_cpu(client), time.perf_counter()
        time.sleep(10)  # what idle workers cost (heartbeats), to tell it from the indexing
        idle_per_s = (_workers_cpu(client) - before) / (time.perf_counter() - t0)
        before = _workers_cpu(client)
        result = build(source, out, "--scheduler", str(cluster.scheduler_address))
        result["dask_workers_cpu_s"] = round(_workers_cpu(client) - before, 2)
        result["dask_workers_idle_cpu_s"] = round(idle_per_s * result["wall_s"], 2)
    return result


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--docs", type=int, default=150_000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--kill-at", type=float, default=0.5, help="fraction of the months written")
    ap.add_argument("--dask", type=int, default=0, help="also build on K Dask worker processes")
    ap.add_argument("--tmp", default=None)
    ap.add_argument("--out", default=None, help="write the results here (JSON)")
    args = ap.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="pastcast-resume-", dir=args.tmp))
    results: dict[str, Any] = {"docs": args.docs, "workers": args.workers, "load": [_load()]}
    try:
        source = folder / "docs.jsonl"
        write_corpus(args.docs, source)
        workers = ("--workers", str(args.workers))
        full = build(source, folder / "full", *workers)
        results["full"] = full
        months = int(full["report"]["partitions"])
        results["killed"] = killed(source, folder / "resumed", args.kill_at, months, *workers)
        resumed = build(source, folder / "resumed", *workers)
        results["resume"] = resumed
        results["resume_over_full_cpu"] = round(resumed["cpu_s"] / full["cpu_s"], 3)
        results["same_files"] = tree_digest(folder / "resumed") == tree_digest(folder / "full")
        results["load"].append(_load())
        print(
            f"{args.docs} docs, {months} months, {args.workers} workers: full build "
            f"{full['cpu_s']} s CPU ({full['wall_s']} s wall); killed after "
            f"{results['killed']['partitions_written']} partitions; resume {resumed['cpu_s']} s "
            f"CPU ({resumed['wall_s']} s wall): ratio {results['resume_over_full_cpu']}, "
            f"same files: {results['same_files']}; load {results['load']}"
        )
        if args.dask:
            dask = on_dask(source, folder / "dask", args.dask)
            dask["same_files"] = tree_digest(folder / "dask") == tree_digest(folder / "full")
            results["dask"] = dask
            results["load"].append(_load())
            print(
                f"on {args.dask} Dask workers: {dask['wall_s']} s wall, builder "
                f"{dask['cpu_s']} s CPU + workers {dask['dask_workers_cpu_s']} s CPU (of which "
                f"idle, as measured idle: {dask['dask_workers_idle_cpu_s']} s) "
                f"(one machine, {args.workers} workers: {full['wall_s']} s wall, "
                f"{full['cpu_s']} s CPU); same files: {dask['same_files']}; "
                f"phases {dask['report']['phase_seconds']}; load {results['load'][-1]}"
            )
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
