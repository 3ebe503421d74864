"""The demo (``run_demo``): the embedded world and its index, the baselines and the heuristic
research agent run over it, the retrieval audit of what it served, and the report of that run,
in one folder."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pastcast.app._reports import report_runs, score_runs
from pastcast.app._runs import plan_from_agents, run_plan
from pastcast.errors import FieldError
from pastcast.owned import claim_dir
from pastcast.reports import Scorecard
from pastcast.runner import RunConfig, RunResult

if TYPE_CHECKING:
    from pastcast.reports.html import WrittenReport

__all__ = ["DEMO_AGENTS", "Demo", "run_demo"]

DEMO_AGENTS = ("uniform", "base-rate", "heuristic", "heuristic@memory_on", "market")

_log = logging.getLogger("pastcast")


@dataclass(frozen=True)
class Demo:
    """The demo's run, the scorecard of its leaderboard and its report (None without the
    reports extra: a note says so)."""

    run: RunResult
    card: Scorecard
    report: WrittenReport | None


def run_demo(out: str | Path, *, seed: int = 0, notes: Callable[[str], None] | None = None) -> Demo:
    """Run ``DEMO_AGENTS`` over the embedded world of ``seed`` into the folder ``out`` (made
    and marked as a demo's, resumed when it holds one): the run log ``run.jsonl``, the world's
    index ``index/`` and the report ``report/`` (``report_runs``; without the reports extra, only
    the scorecard). ``notes`` gets the lines worth showing (default: the ``pastcast`` logger).
    ``FieldError`` names the field of a problem found before the run; errors of the run itself
    propagate (``ValueError``, ``RuntimeError``), as from ``run_plan``."""
    tell = notes or _log.warning
    dataset = f"world:{seed}"
    plan = plan_from_agents(
        DEMO_AGENTS,
        dataset=dataset,
        concurrency={"episodes": RunConfig.model_fields["workers"].default},
    )
    folder = Path(out)
    try:
        claim_dir(folder, "demo")
    except FileExistsError as exc:
        raise FieldError("out", str(exc)) from None
    except OSError as exc:
        raise FieldError(
            "out", f"{folder}: cannot make the folder ({exc.strerror or exc})"
        ) from None
    log = folder / "run.jsonl"
    result = run_plan(plan, log, notes=tell)
    _audit_served(log, dataset)
    try:
        made = report_runs([log], folder / "report", dataset=dataset)
    except FieldError as exc:
        if exc.field:
            raise
        tell(f"note: no HTML report: {exc.reason}")  # the reports extra is missing
        return Demo(result, score_runs([log], dataset=dataset).card, None)
    return Demo(result, made.written.card, made.written)


PLANTED_JUDGE = "world-planted-documents"
"""The demo's retrieval judge: the embedded worlds' own record of the rewrites they planted."""


def _audit_served(log: Path, spec: str) -> None:
    """The served-document leakage of the demo's run, written beside its log for the leakage
    card (``pastcast audit retrievals``): a stratified sample of the documents the run served,
    judged by a scripted judge that flags exactly the hindsight rewrites the world generator
    planted (it knows them; no model), its errors measured on the planted rewrites and clean
    articles of the calibration world. The rate is measured, not assumed: a corpus that let a
    planted rewrite through would show it."""
    from pastcast.app._audits import DEFAULT_CALIBRATION
    from pastcast.app._reading import read_runs
    from pastcast.audit import (
        audit_served,
        calibration_items,
        served_documents,
        write_retrieval_audit,
    )
    from pastcast.curate import Judge
    from pastcast.models import ChatRequest, ScriptedModel
    from pastcast.world import world_from_spec

    world, known = world_from_spec(spec), world_from_spec(DEFAULT_CALIBRATION)
    planted = [d.text[:200] for w in (world, known) for d in w.documents if d.id in w.hindsight_ids]

    def verdict(request: ChatRequest) -> str:
        shown = request.messages[-1].content  # the question and the document's opening text
        found = any(text in shown for text in planted)
        reason = "a planted hindsight rewrite" if found else "not a planted rewrite"
        return json.dumps({"reveals_later": found, "reason": reason})

    items = calibration_items(known.dataset, known.documents, known.hindsight_ids, known.evidence)
    read = read_runs([log], columns=(), require_steps=False)
    served, docs, unknown = served_documents(read.logs[0], world.documents)
    audit = audit_served(
        served,
        docs,
        world.dataset,
        Judge(ScriptedModel(responder=verdict, name=PLANTED_JUDGE)),
        items,
        run_log=str(read.logs[0].path),
        unknown_documents=len(unknown),
        calibration_name=DEFAULT_CALIBRATION,
        prompt="audit_retrieval.v2",  # the verdict prompt: the judge answers reveals_later
    )
    write_retrieval_audit(audit, log)
