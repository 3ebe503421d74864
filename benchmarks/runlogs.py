"""The readers of a large run log: wall time and peak memory of `pastcast score`, `report`,
`export table|sft|rewards`, `audit run|retrievals`, `stats longitudinal|coverage|recoveries` and
the dashboard's index, each in a fresh process measured by ``/usr/bin/time -v`` (peak resident
set), under one or more source trees (``--src NAME=PATH``, e.g. ``--src before=/path/to/main/src
--src after=src``).

`audit retrievals` reads the log's served documents against a corpus and a dataset: the reader
is given a JSONL corpus of the documents the synthetic log's tool calls name, an empty dataset
of the log's id (so no sampled document is shown to the judge: what is measured is the reading)
and a scripted judge; it writes its result beside the log (``RUN.retrieval-audit.json``).

The synthetic run log (``synthetic_runs.write_run``, shared with ``dashboard.py``) is written
through ``RunLogWriter`` (so its columnar companion is written as the run goes, as a real run's
is): model-driven agents in two settings with 10 to 40 tool calls per step and a few KB of
text, a baseline and the market reference, over events of five forecast dates (``--log``: an
existing one instead). ``--rebuild`` also times the first read of the log with no companion
under each tree (``read_step_columns`` alone, and ``score --bootstrap 0``), beside a plain read
of the step file and Arrow's JSON reader of it, with the ratios to both (``--readers ""``:
only that).

    python benchmarks/runlogs.py --steps 100000 [--src NAME=PATH ...] [--readers score,table]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

from synthetic_runs import T0, write_run

from pastcast.dataset import Dataset, save_dataset
from pastcast.runlog import header_path, read_step_columns

CLI = "import sys; from pastcast.cli import main; sys.exit(main())"
INDEX = "import sys; from pastcast.reports.dashboard import RunIndex; RunIndex.load([sys.argv[1]])"


def _readers(log: Path, out: Path) -> dict[str, list[str]]:
    return {
        "score": ["-c", CLI, "score", str(log), "--bootstrap", "1000"],
        "score-options": ["-c", CLI, "score", str(log), "--paired",
                          "model-0@memory_free:model-1@memory_free", "--normalize-labels",
                          "--after-knowledge-cutoff"],
        "report": ["-c", CLI, "report", str(log), "--out", str(out / "out" / "report"),
                   "--bootstrap", "1000"],
        "table": ["-c", CLI, "export", "table", str(log), "--out", str(out / "out" / "table")],
        "sft": ["-c", CLI, "export", "sft", str(log), "--split", "unsplit",
                "--out", str(out / "out" / "sft.jsonl")],
        "rewards": ["-c", CLI, "export", "rewards", str(log), "--split", "unsplit",
                    "--out", str(out / "out" / "rewards.jsonl")],
        "audit": ["-c", CLI, "audit", "run", str(log)],
        "stats": ["-c", CLI, "stats", "longitudinal", str(log), "--bootstrap", "1000"],
        "coverage": ["-c", CLI, "stats", "coverage", str(log), "--bootstrap", "1000"],
        "recoveries": ["-c", CLI, "stats", "recoveries", str(log), "--a", _A, "--b", _B,
                       "--model", f"m0:{_A};{_B}", "--model", f"m1:{_A1};{_B}"],
        "retrievals": ["-c", CLI, "audit", "retrievals", str(log), "--judge",
                       f"scripted:{out / 'retrievals' / 'judge.json'}", "--prompt",
                       "audit_retrieval.v2", "--dataset", str(out / "retrievals" / "dataset"),
                       "--corpus", f"jsonl:{out / 'retrievals' / 'corpus.jsonl'}",
                       "--cache", str(out / "out" / "judge-cache"), "--json"],
        "index": ["-c", INDEX, str(log.parent)],
    }  # fmt: skip


# the pipelines of ``stats recoveries``: a model-driven agent against the uniform baseline
_A = "agent=model-0,setting=memory_free"
_A1 = "agent=model-1,setting=memory_on"
_B = "agent=uniform"


def _retrieval_inputs(log: Path, out: Path) -> None:
    """What ``audit retrievals`` reads besides the log: a corpus of the documents the synthetic
    log's tool calls name (``synthetic_runs._episode``: ``dJ`` and ``dJ-H``), an empty dataset of
    the log's id, a scripted judge's answer."""
    folder = out / "retrievals"
    folder.mkdir(parents=True, exist_ok=True)
    ids = [i for j in range(40) for i in (f"d{j}", f"d{j}-0", f"d{j}-1")]
    day = (T0 - timedelta(days=1)).isoformat()
    lines = [
        json.dumps({"id": i, "timestamp": day, "title": f"Report {i}", "text": "Officials met."})
        for i in ids
    ]
    (folder / "corpus.jsonl").write_text("".join(line + "\n" for line in lines))
    dataset_id = json.loads(header_path(log).read_text())["dataset_id"]
    save_dataset(Dataset(dataset_id, (), {}, {}, ()), folder / "dataset")
    answer = json.dumps({"reveals_later": False, "reason": "nothing after the cutoff"})
    (folder / "judge.json").write_text(json.dumps([answer]))


def _rss_mb(pid: int) -> int:
    """The resident memory of ``pid``'s children (the reader under ``/usr/bin/time``)."""
    total = 0
    try:
        kids = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        for kid in kids:
            for line in Path(f"/proc/{kid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) // 1024
    except OSError:
        pass
    return total


def measure(src: str, args: list[str], timeout: float, max_mb: int) -> dict[str, object]:
    """Wall time and peak RSS of ``python ARGS`` with ``src`` first on the path; stopped (the
    whole process group) past ``timeout`` seconds or ``max_mb`` resident, so a reader that
    loads every record cannot take a shared machine's memory."""
    env = os.environ | {"PYTHONPATH": src}
    cmd = ["/usr/bin/time", "-v", sys.executable, *args]
    t = time.perf_counter()
    with tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(
            cmd, env=env, stdout=subprocess.DEVNULL, stderr=err, text=True, start_new_session=True
        )
        stopped, seen = None, 0
        while proc.poll() is None:
            seen = max(seen, _rss_mb(proc.pid))
            if time.perf_counter() - t > timeout:
                stopped = f"timeout after {timeout:.0f} s"
            elif seen > max_mb:
                stopped = f"stopped over {max_mb} MB resident"
            if stopped:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                return {"rc": stopped, "wall_s": round(time.perf_counter() - t, 1), "peak_mb": seen}
            time.sleep(0.2)
        wall = time.perf_counter() - t
        err.seek(0)
        stderr = err.read()
    peak = re.search(r"Maximum resident set size \(kbytes\): (\d+)", stderr)
    cpu = [
        float(m.group(1)) if (m := re.search(rf"{k} time \(seconds\): ([\d.]+)", stderr)) else 0.0
        for k in ("User", "System")
    ]
    return {
        "rc": proc.returncode,
        "wall_s": round(wall, 1),
        "cpu_s": round(sum(cpu), 1),  # the machine may be shared: CPU time says what it cost
        "peak_mb": round(int(peak.group(1)) / 1024) if peak else None,
        "error": stderr.strip().splitlines()[0][:200] if proc.returncode else None,
    }


def _rebuilds(log: Path, trees: dict[str, str], timeout: float, max_mb: int) -> None:
    """The first read of the log with no companion, under each tree (the companion removed before
    each): ``read_step_columns`` alone and ``score --bootstrap 0``, each beside a plain read of
    the step file and Arrow's JSON reader of it (the peer: every field parsed into columns
    against the step schema), in a fresh process, with their ratios to both."""
    plain = "import sys\nwith open(sys.argv[1], 'rb') as f:\n while f.read(8 << 20): pass"
    arrow = (
        "import sys, pyarrow.json as j; from pastcast.runlog import step_schema as s; "
        "j.read_json(sys.argv[1], parse_options=j.ParseOptions(explicit_schema=s()))"
    )
    rebuild = "import sys; from pastcast.runlog import read_step_columns as r; r(sys.argv[1])"
    runs = [
        ("plain read", "", ["-c", plain, str(log)]),
        ("arrow json read", "", ["-c", arrow, str(log)]),
    ]
    for tree in trees:
        runs += [("companion rebuild", tree, ["-c", rebuild, str(log)]),
                 ("score --bootstrap 0, first read", tree,
                  ["-c", CLI, "score", str(log), "--bootstrap", "0"])]  # fmt: skip
    peers: dict[str, dict[str, object]] = {}
    for name, tree, argv in runs:
        shutil.rmtree(log.with_suffix(".columns"), ignore_errors=True)
        load = os.getloadavg()[0]  # the machine may be shared: its load beside each row
        row = measure(trees.get(tree, next(iter(trees.values()))), argv, timeout, max_mb)
        peers.update({name.split()[0]: row} if not tree else {})
        ratio = {
            f"{k}_vs_{peer}": round(float(row[k]) / float(of[k]), 2)  # type: ignore[arg-type]
            for peer, of in peers.items()
            for k in ("wall_s", "cpu_s", "peak_mb")
            if tree and row.get(k) and of.get(k)
        }
        loads = [round(load, 1), round(os.getloadavg()[0], 1)]
        print(
            json.dumps({"reader": name, "code": tree or None, **row, **ratio, "load_1m": loads}),
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100_000)
    parser.add_argument("--src", action="append", default=[], help="NAME=PATH of a source tree")
    parser.add_argument(
        "--readers",
        default="score,score-options,report,table,sft,rewards,audit,stats,coverage,recoveries,"
        "retrievals,index",
    )
    parser.add_argument("--timeout", type=float, default=1800)
    parser.add_argument("--max-mb", type=int, default=8000, help="Stop a reader past this RSS")
    parser.add_argument("--rebuild", action="store_true", help="Time a rebuild from the JSONL")
    parser.add_argument("--log", type=Path, default=None, help="An existing run log to read")
    args = parser.parse_args()
    trees = dict(s.split("=", 1) for s in args.src) or {"here": os.environ.get("PYTHONPATH", "")}
    tmp = Path(tempfile.mkdtemp(prefix="pastcast-runlogs-", dir=os.environ.get("TMPDIR")))
    try:
        log = args.log or tmp / "run" / "run.jsonl"
        t = time.perf_counter()
        # an existing log: its rows, as its companion counts them
        n = read_step_columns(log).table.num_rows if args.log else write_run(log, args.steps)
        size = log.stat().st_size / 1e6
        print(
            json.dumps(
                {"steps": n, "mb": round(size), "written_s": round(time.perf_counter() - t, 1)}
            ),
            flush=True,
        )
        readers = _readers(log, tmp)
        if "retrievals" in args.readers.split(","):
            _retrieval_inputs(log, tmp)
        for name in filter(None, args.readers.split(",")):
            for tree, src in trees.items():
                shutil.rmtree(tmp / "out", ignore_errors=True)
                load = os.getloadavg()[0]  # the machine may be shared: its load beside each row
                row = {
                    "reader": name,
                    "code": tree,
                    **measure(src, readers[name], args.timeout, args.max_mb),
                    "load_1m": [round(load, 1), round(os.getloadavg()[0], 1)],
                }
                print(json.dumps(row), flush=True)
        if args.rebuild:
            _rebuilds(log, trees, args.timeout, args.max_mb)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
