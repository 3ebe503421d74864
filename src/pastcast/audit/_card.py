"""The leakage card: every channel through which the future can reach a replay, with what is
known of each, for one dataset (and the corpus and models of a run, when there is one).

One record, one function computing it, and one rendering (``LeakageCard.rows``) that the command
line, the HTML report and the dashboard all show; docs/audits.md ("The leakage card") lists the
channels and where each figure comes from.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date
from typing import Any

from pydantic import JsonValue

from pastcast.audit._construction import AS_BUILT, audit_construction
from pastcast.audit._texts import audit_texts
from pastcast.dataset import Dataset
from pastcast.models import knowledge_cutoff, remembered
from pastcast.records import CorpusIdentity, Record

CARD_PERMUTATIONS = 200
"""Permutation draws of the card's construction test (``audit construction`` runs more)."""
EXAMPLES = 3


class ModelMemory(Record):
    """The events a model may remember: resolved by its knowledge cutoff."""

    model: str
    knowledge_cutoff: date | None
    events: int
    remembered: int | None
    """None when the cutoff is unknown (then every event may be remembered)."""
    examples: tuple[str, ...] = ()


class LeakageCard(Record):
    """What is known of each leakage channel of a dataset (and of a run's corpus and models)."""

    dataset_id: str
    run_id: str | None = None
    events: int
    steps: int
    construction_auc: float | None = None
    construction_p_value: float | None = None
    construction_verdict: str | None = None
    construction_permutations: int = 0
    events_with_dated_edits: int = 0
    later_text_steps: int = 0
    shortened_steps: int = 0
    dropped_text_steps: int = 0
    sibling_steps: int = 0
    sibling_pairs: int = 0
    sibling_rate: float | None = None
    corpus: str | None = None
    """The corpus's spec (None: no corpus known)."""
    corpus_dating: dict[str, JsonValue] | None = None
    """``options["dating"]`` of its identity (None: built without a record of it)."""
    served_leakage: float | None = None
    """Share of served documents judged to leak, where a retrieval audit measured it."""
    served_leakage_note: str = ""
    models: tuple[ModelMemory, ...] = ()

    def rows(self) -> list[tuple[str, str]]:
        """(channel, what is known) pairs, as every rendering shows them."""
        out = [("dataset", f"{self.dataset_id}: {self.events} events, {self.steps} steps")]
        if self.run_id:
            out.append(("run", self.run_id))
        if self.construction_auc is None:
            construction = f"not measured ({self.construction_verdict or 'no binary events'})"
        else:
            p = "-" if self.construction_p_value is None else f"{self.construction_p_value:.4f}"
            construction = (
                f"AUC {self.construction_auc:.3f}, permutation p = {p} "
                f"({self.construction_permutations} draws): {self.construction_verdict}"
            )
        out.append(("construction audit", construction))
        out.append(
            (
                "question-text edits",
                f"{self.later_text_steps} steps shown a text taken after their cutoff, "
                f"{self.shortened_steps} of them shortened before its first note not dated "
                f"before the cutoff; {self.dropped_text_steps} steps dropped "
                f"({self.events_with_dated_edits} events with dated notes)",
            )
        )
        rate = "-" if self.sibling_rate is None else f"{self.sibling_rate:.2%}"
        out.append(
            (
                "sibling answers",
                f"{self.sibling_steps} steps ({rate}) name the answer of another open event "
                f"({self.sibling_pairs} pairs)",
            )
        )
        out.append(("corpus dating", _dating(self.corpus, self.corpus_dating)))
        served = (
            "not measured"
            if self.served_leakage is None
            else f"{self.served_leakage:.2%} of served documents"
        )
        out.append(
            ("served-document leakage", served + (f" ({self.served_leakage_note})" if
                                                  self.served_leakage_note else ""))
        )  # fmt: skip
        for m in self.models:
            if m.remembered is None:
                text = "knowledge cutoff unknown: every event may be remembered"
            else:
                text = f"cutoff {m.knowledge_cutoff}: {m.remembered} of {m.events} events"
                if m.examples:
                    text += " (e.g. " + ", ".join(m.examples) + ")"
            out.append((f"may remember: {m.model}", text))
        if not self.models:
            out.append(("may remember", "no model named"))
        return out

    def lines(self) -> list[str]:
        return [f"{k}: {v}" for k, v in self.rows()]


def _dating(corpus: str | None, dating: Mapping[str, Any] | None) -> str:
    if corpus is None:
        return "no corpus"
    if not dating:
        return f"{corpus}: not recorded (built without dating provenance)"
    kinds = dating.get("dated_by") or {}
    total = sum(int(v) for v in kinds.values()) if isinstance(kinds, Mapping) else 0
    shares = ", ".join(
        f"{k} {int(v)} ({int(v) / total:.1%})" for k, v in sorted(kinds.items()) if total
    )
    crawl = dating.get("crawl_or_fetch_dated", 0)
    return (
        f"{corpus}: {shares or 'no documents'}; {crawl} dated only by crawl or fetch time "
        f"(require {dating.get('require', 'any')})"
    )


def _memory(dataset: Dataset, model: str, cutoff: date | None) -> ModelMemory:
    events = [e.id for e in dataset.events if e.id in dataset.resolutions]
    if cutoff is None:
        return ModelMemory(model=model, knowledge_cutoff=None, events=len(events), remembered=None)
    hit = [e for e in events if remembered(dataset.resolutions[e].resolved_at, cutoff)]
    return ModelMemory(
        model=model,
        knowledge_cutoff=cutoff,
        events=len(events),
        remembered=len(hit),
        examples=tuple(hit[:EXAMPLES]),
    )


def leakage_card(
    dataset: Dataset,
    *,
    corpus: CorpusIdentity | None = None,
    models: Mapping[str, date | None] | Sequence[str] = (),
    run_id: str | None = None,
    served_leakage: float | None = None,
    served_leakage_note: str = "",
    permutations: int = CARD_PERMUTATIONS,
    seed: int = 0,
) -> LeakageCard:
    """The leakage card of ``dataset``: its construction audit (the steps as built, judged
    against ``permutations`` draws of the null), its question-text audit, the dating of
    ``corpus`` (its identity), ``served_leakage`` where a retrieval audit measured it, and the
    events each of ``models`` may remember (a name -> knowledge cutoff, as a run header records
    them; or names, their cutoffs from the registry)."""
    texts = audit_texts(dataset)
    auc = p = None
    verdict: str | None = None
    try:
        construction = audit_construction(
            [dataset], [], permutations=permutations, draws=200, seed=seed
        )
        built = next(r for r in construction.results if r.schedule == AS_BUILT)
        auc, p = built.auc, built.p_value
        verdict = "LEAKS" if built.leaks else built.verdict
    except (ValueError, StopIteration) as exc:  # no binary events with steps, say
        verdict = str(exc).splitlines()[0] if str(exc) else "not computable"
    dating = None if corpus is None else corpus.options.get("dating")
    cutoffs = (
        dict(models) if isinstance(models, Mapping) else {m: knowledge_cutoff(m) for m in models}
    )
    return LeakageCard(
        dataset_id=dataset.id,
        run_id=run_id,
        events=len(dataset.events),
        steps=len(dataset.steps),
        construction_auc=auc,
        construction_p_value=p,
        construction_verdict=verdict,
        construction_permutations=permutations,
        events_with_dated_edits=texts.events_with_dated_edits,
        later_text_steps=texts.later_text_steps,
        shortened_steps=texts.shortened_steps,
        dropped_text_steps=len(texts.dropped_steps),
        sibling_steps=texts.sibling_steps,
        sibling_pairs=len(texts.sibling_answers),
        sibling_rate=texts.sibling_rate,
        corpus=None if corpus is None else (corpus.spec or corpus.backend),
        corpus_dating=dating if isinstance(dating, dict) else None,
        served_leakage=served_leakage,
        served_leakage_note=served_leakage_note,
        models=tuple(_memory(dataset, m, c) for m, c in sorted(cutoffs.items())),
    )
