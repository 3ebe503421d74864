"""The retrieval audit's estimator on a real run of the embedded world with planted leaks, with a
scripted judge of chosen sensitivity and specificity (no model time).

A world with planted hindsight rewrites is built into a corpus that keeps them
(``corpus build ... --include-flagged``), a run served some of them; the true share of planted
documents among what was served is known. The scripted judge flags a planted document with
probability ``--se`` and a clean one with probability ``1 - --sp`` (by a hash of the request);
the judge is measured on another world's planted and clean documents, and the corrected rate is
compared with the truth.

    python benchmarks/retrieval_audit_world.py RUN_LOG --world world:0,hindsight_fraction=0.3 \\
        [--sample 300] [--se 0.8] [--sp 0.9] [--positives 40] [--negatives 60]
"""

from __future__ import annotations

import argparse
import hashlib
import json

from pastcast.audit import audit_served, calibration_items, served_documents
from pastcast.curate import Judge
from pastcast.models import ChatRequest, ScriptedModel
from pastcast.runlog import read_run_log
from pastcast.world import world_from_spec


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run_log")
    ap.add_argument("--world", required=True)
    ap.add_argument("--calibration", default="world:0,hindsight_fraction=0.5")
    ap.add_argument("--sample", type=int, default=300)
    ap.add_argument("--se", type=float, default=0.8)
    ap.add_argument("--sp", type=float, default=0.9)
    ap.add_argument("--positives", type=int, default=40)
    ap.add_argument("--negatives", type=int, default=60)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    world, known = world_from_spec(args.world), world_from_spec(args.calibration)
    planted = {
        d.text[:200]
        for d in (*world.documents, *known.documents)
        if d.id in world.hindsight_ids or d.id in known.hindsight_ids
    }

    def respond(request: ChatRequest) -> str:
        user = request.messages[-1].content
        leaks = any(t in user for t in planted)
        u = int(hashlib.sha256(user.encode()).hexdigest()[:12], 16) / 16**12
        return json.dumps({"reveals_later": u < args.se if leaks else u >= args.sp, "reason": "-"})

    log = read_run_log(args.run_log)
    served, docs, unknown = served_documents(log, world.documents)
    truth = sum(s.doc_id in world.hindsight_ids for s in served) / len(served)
    items = calibration_items(
        known.dataset,
        known.documents,
        known.hindsight_ids,
        known.evidence,
        positives=args.positives,
        negatives=args.negatives,
        seed=args.seed,
    )
    audit = audit_served(
        served,
        docs,
        world.dataset,
        Judge(ScriptedModel(responder=respond)),
        items,
        run_log=str(log.path),
        unknown_documents=len(unknown),
        calibration_name=args.calibration,
        sample=args.sample,
        seed=args.seed,
    )
    o, acc = audit.overall, audit.judge_accuracy
    print(
        f"served {audit.served}, planted share {truth:.1%}; judged {o.judged} in "
        f"{len(audit.strata)} strata"
    )
    print(
        f"judge Se {acc.sensitivity:.2f} ({acc.true_positives}/{acc.positives}), "
        f"Sp {acc.specificity:.2f} ({acc.true_negatives}/{acc.negatives})"
    )
    print(
        f"apparent {o.apparent:.1%} [{o.apparent_low:.1%}, {o.apparent_high:.1%}]; corrected "
        f"{'-' if o.corrected is None else f'{o.corrected:.1%}'} "
        f"[{o.corrected_low:.1%}, {o.corrected_high:.1%}]"
    )


if __name__ == "__main__":
    main()
