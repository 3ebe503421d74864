"""A copy of a run log that an older pastcast reads, for "before" measurements: every field its
records and header do not know yet (a validation error of kind ``extra_forbidden``) is dropped,
learned from the first ``--learn`` records; the rest is written as it was. Run it with the older
tree first on the path:

    PYTHONPATH=OLD/src python benchmarks/older_log.py LOG OUT_DIR
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from pastcast.runlog import RunHeader, StepRecord, header_path


def _unknown(model: type[BaseModel], obj: dict[str, Any]) -> set[str]:
    try:
        model.model_validate(obj)
    except ValidationError as exc:
        return {
            ".".join(str(p) for p in e["loc"])
            for e in exc.errors()
            if e["type"] == "extra_forbidden"
        }
    return set()


def _drop(obj: dict[str, Any], paths: set[str]) -> dict[str, Any]:
    for path in paths:
        *parents, last = path.split(".")
        node: Any = obj
        for p in parents:
            node = node.get(p) if isinstance(node, dict) else None
        if isinstance(node, dict):
            node.pop(last, None)
    return obj


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("log", type=Path)
    parser.add_argument("out", type=Path, help="a folder for the copy (run.jsonl and its header)")
    parser.add_argument("--learn", type=int, default=2000, help="records that teach the fields")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    header = json.loads(header_path(args.log).read_text())
    header_drop = _unknown(RunHeader, header)
    copy = args.out / "run.jsonl"
    header_path(copy).write_text(json.dumps(_drop(header, header_drop)))
    drop: set[str] = set()
    with args.log.open() as src, copy.open("w") as out:
        for i, line in enumerate(src):
            obj = _drop(json.loads(line), drop)
            while i < args.learn and (extra := _unknown(StepRecord, obj)):
                drop |= extra
                obj = _drop(obj, extra)
            out.write(json.dumps(obj, separators=(",", ":")) + "\n")
    print(json.dumps({"header_dropped": sorted(header_drop), "dropped": sorted(drop)}))


if __name__ == "__main__":
    main()
