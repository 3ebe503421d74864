"""The knowledge-cutoff probe's estimate on real questions with a planted cutoff (no model time),
and its power: how often a drop of a given size is detected at a given number of questions.

A scripted model answers the cached probe questions of a corpus (``models probe-cutoff`` writes
them under its cache's ``questions/``): right with probability ``--before`` through month LAST
and ``--after`` later, otherwise one of the wrong options (all by a hash of the request and the
trial, so a rerun gives the same figures). The defaults (1.0, then chance) plant a clean cutoff;
``--trials N`` repeats with N seeds and prints how often recall was detected, how often the
estimate fell within a month of LAST and how often its interval held LAST.

    python benchmarks/cutoff_probe_planted.py QUESTIONS.json LAST [--draws 1000]
    python benchmarks/cutoff_probe_planted.py QUESTIONS.json 2023-12 --before 0.5 --after 0.36 \
        --trials 50
"""

from __future__ import annotations

import argparse
import hashlib
import json
import time

from pastcast.audit import (
    CutoffProbe,
    ProbeQuestions,
    probe_cutoff,
    read_probe_questions,
    render_options,
)
from pastcast.curate import Judge
from pastcast.models import ChatRequest, ScriptedModel


def _uniform(*parts: object) -> float:
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def planted(
    qs: ProbeQuestions, last: str, before: float, after: float, trial: int, draws: int
) -> CutoffProbe:
    key = {render_options(q): q for q in qs.questions}

    def respond(request: ChatRequest) -> str:
        user = request.messages[-1].content
        q = next(q for opts, q in key.items() if opts in user)
        right = _uniform(trial, "right", user) < (before if q.month <= last else after)
        wrong = [i for i in range(len(q.options)) if i != q.answer]
        pick = q.answer if right else wrong[int(_uniform(trial, "wrong", user) * len(wrong))]
        return json.dumps({"answer": "ABCDEFGH"[pick]})

    return probe_cutoff(qs, Judge(ScriptedModel(responder=respond)), draws=draws, seed=trial)


def _month_gap(a: str, b: str) -> int:
    return abs((int(a[:4]) * 12 + int(a[5:7])) - (int(b[:4]) * 12 + int(b[5:7])))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("questions")
    ap.add_argument("last", help="the last month the scripted model knows (YYYY-MM)")
    ap.add_argument("--before", type=float, default=1.0, help="accuracy through LAST")
    ap.add_argument("--after", type=float, default=0.25, help="accuracy after LAST")
    ap.add_argument("--trials", type=int, default=1)
    ap.add_argument("--draws", type=int, default=1000)
    args = ap.parse_args()
    qs = read_probe_questions(args.questions)
    if qs is None:
        raise SystemExit(f"{args.questions}: no probe questions")
    detected = near = covered = 0
    started = time.perf_counter()
    for trial in range(args.trials):
        probe = planted(qs, args.last, args.before, args.after, trial, args.draws)
        e = probe.estimate
        found = probe.knowledge_cutoff is not None
        if args.trials == 1:
            print(
                f"{probe.questions} questions, {len(probe.months)} months: cutoff "
                f"{probe.knowledge_cutoff} [{probe.low}, {probe.high}]; accuracy {e.before} "
                f"before, {e.after} after; p {e.p_value}"
            )
        if found:
            detected += 1
            month = str(probe.knowledge_cutoff)[:7]
            near += _month_gap(month, args.last) <= 1
            covered += str(probe.low)[:7] <= args.last <= str(probe.high)[:7]
    if args.trials > 1:
        print(
            f"{len(qs.questions)} questions, accuracy {args.before} through {args.last} and "
            f"{args.after} after, {args.trials} trials ({time.perf_counter() - started:.0f} s): "
            f"detected {detected}/{args.trials}; estimate within a month {near}/{args.trials}; "
            f"interval holding {args.last} {covered}/{args.trials}"
        )


if __name__ == "__main__":
    main()
