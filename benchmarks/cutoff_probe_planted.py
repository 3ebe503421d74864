"""The knowledge-cutoff probe's estimate on real questions with a planted cutoff (no model time).

A scripted model answers the cached probe questions of a corpus (``models probe-cutoff`` writes
them under its cache's ``questions/``) correctly through month LAST and guesses after it (by a
hash of the request); the estimate should find LAST.

    python benchmarks/cutoff_probe_planted.py QUESTIONS.json LAST [--draws 1000]
"""

from __future__ import annotations

import argparse
import hashlib
import json

from pastcast.audit import probe_cutoff, read_probe_questions, render_options
from pastcast.curate import Judge
from pastcast.models import ChatRequest, ScriptedModel


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("questions")
    ap.add_argument("last", help="the last month the scripted model knows (YYYY-MM)")
    ap.add_argument("--draws", type=int, default=1000)
    args = ap.parse_args()
    qs = read_probe_questions(args.questions)
    if qs is None:
        raise SystemExit(f"{args.questions}: no probe questions")
    key = {render_options(q): q for q in qs.questions}

    def respond(request: ChatRequest) -> str:
        user = request.messages[-1].content
        q = next(q for opts, q in key.items() if opts in user)
        guess = int(hashlib.sha256(user.encode()).hexdigest(), 16) % len(q.options)
        return json.dumps({"answer": "ABCDEFGH"[q.answer if q.month <= args.last else guess]})

    probe = probe_cutoff(qs, Judge(ScriptedModel(responder=respond)), draws=args.draws)
    e = probe.estimate
    print(
        f"{probe.questions} questions, {len(probe.months)} months: cutoff {probe.knowledge_cutoff} "
        f"[{probe.low}, {probe.high}]; accuracy {e.before} before, {e.after} after; p {e.p_value}"
    )


if __name__ == "__main__":
    main()
