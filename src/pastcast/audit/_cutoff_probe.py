"""Measuring a model's knowledge cutoff from what it recalls of dated news: per month,
multiple-choice questions (one real news item of the month against distractors made from it by
swapping a name or changing a number), then the month after which accuracy falls to chance
(``change_point``: a two-level binomial change point, a bootstrap interval, a permutation test
of the drop). docs/models.md, "Measured knowledge cutoffs", states the method.
"""

from __future__ import annotations

import calendar
import random
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from datetime import date, datetime
from pathlib import Path
from typing import Any

import numpy as np

from pastcast import safejson
from pastcast.agents import load_prompt
from pastcast.atomic import write_atomic
from pastcast.audit._retrievals import progress_bar
from pastcast.curate import Judge
from pastcast.records import Document, Record
from pastcast.safejson import canonical_json
from pastcast.scoring import wilson

PROBE_VERSION = "1"
"""How questions are made and answers scored; part of the questions' cache key."""
PROBE_PROMPT = "probe_cutoff.v1"
OPTIONS = 4
LETTERS = "ABCDEFGH"
PROBE_METHOD = (
    "two-level change point (binomial likelihood, accuracy a through month c, b after, a > b), "
    "percentile bootstrap over questions within months, permutation test of the drop"
)

_CITATION = re.compile(r"\s*\([^()]{1,80}\)\s*\.?\s*$")
_NAME = re.compile(r"(?<!^)(?<![.!?]\s)\b(?:[A-Z][\w'’-]+)(?:\s+(?:of\s+|de\s+)?[A-Z][\w'’-]+)*")
_NUMBER = re.compile(r"(?<![\w.,])\d{1,3}(?:,\d{3})*(?:\.\d+)?(?![\w])")
_MAX_CHARS = 220


class ProbeQuestion(Record):
    """One multiple-choice question: which of ``options`` really happened in ``month``."""

    id: str
    month: str
    """``YYYY-MM``."""
    options: tuple[str, ...]
    answer: int
    """The position of the real item (never shown to the model)."""
    document: str
    """The id of the document the real item comes from."""


class ProbeQuestions(Record):
    """The questions of one corpus, as made and cached."""

    version: str = PROBE_VERSION
    corpus: str
    """The corpus's content hash (and where it was read from)."""
    seed: int
    per_month: int
    options: int
    questions: tuple[ProbeQuestion, ...]


def _item(doc: Document) -> str | None:
    """The news item a document states, in one line (its first sentence, without a trailing
    source citation), if it is short enough to be an option."""
    text = " ".join(doc.text.split())
    text = _CITATION.sub("", text).strip()
    first = re.split(r"(?<=[.!?])\s+(?=[A-Z])", text, maxsplit=1)[0].strip()
    return first if 40 <= len(first) <= _MAX_CHARS else None


def _names(text: str) -> list[str]:
    return [m.group(0) for m in _NAME.finditer(text)]


def _perturb(rng: random.Random, item: str, pool: Sequence[str]) -> list[str]:
    """Every distinct distractor of ``item``: one name replaced by a name of ``pool`` (other
    items of the month), or one number changed; shuffled by ``rng``."""
    out: set[str] = set()
    names = sorted(set(_names(item)))
    for name in names:
        for other in rng.sample(list(pool), min(6, len(pool))):
            if other != name and other not in item:
                out.add(item.replace(name, other))
                break
    for m in _NUMBER.finditer(item):
        digits = m.group(0)
        if "," in digits or "." in digits:
            continue
        value = int(digits)
        changed = value + rng.choice([-1, 1]) * max(1, round(value * rng.uniform(0.2, 0.6)))
        if changed > 0 and changed != value:
            out.add(item[: m.start()] + str(changed) + item[m.end() :])
    found = sorted(out - {item})
    rng.shuffle(found)
    return found


def probe_questions(
    documents: Iterable[Document],
    *,
    corpus: str,
    per_month: int = 20,
    seed: int = 0,
    options: int = OPTIONS,
    since: str | None = None,
    until: str | None = None,
) -> ProbeQuestions:
    """Up to ``per_month`` questions per month of ``documents`` (months ``since`` .. ``until``,
    ``YYYY-MM``, inclusive), the same for the same documents, settings and seed."""
    if not 2 <= options <= len(LETTERS):
        raise ValueError(f"options must lie in 2..{len(LETTERS)}, got {options}")
    by_month: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for doc in documents:
        month = f"{doc.timestamp.year:04d}-{doc.timestamp.month:02d}"
        if (since and month < since) or (until and month > until):
            continue
        item = _item(doc)
        if item is not None:
            by_month[month].append((doc.id, item))
    questions: list[ProbeQuestion] = []
    for month in sorted(by_month):
        items = sorted(set(by_month[month]))
        rng = random.Random(f"probe:{PROBE_VERSION}:{seed}:{month}")
        pool = sorted({n for _, it in items for n in _names(it)})
        made: list[tuple[str, str, list[str]]] = []
        for doc_id, item in rng.sample(items, len(items)):
            if len(made) == per_month:
                break
            distractors = _perturb(rng, item, pool)
            if len(distractors) >= options - 1:
                made.append((doc_id, item, distractors[: options - 1]))
        # positions balanced: each block of ``options`` questions puts the real item once in
        # every position, in an order shuffled per block
        positions: list[int] = []
        while len(positions) < len(made):
            block = list(range(options))
            rng.shuffle(block)
            positions += block
        for i, ((doc_id, item, distractors), pos) in enumerate(zip(made, positions, strict=False)):
            opts = list(distractors)
            opts.insert(pos, item)
            questions.append(
                ProbeQuestion(
                    id=f"{month}-{i:03d}",
                    month=month,
                    options=tuple(opts),
                    answer=pos,
                    document=doc_id,
                )
            )
    return ProbeQuestions(
        corpus=corpus, seed=seed, per_month=per_month, options=options, questions=tuple(questions)
    )


def write_probe_questions(questions: ProbeQuestions, path: str | Path) -> Path:
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    return write_atomic(target, canonical_json(questions.model_dump(mode="json")) + "\n")


def read_probe_questions(path: str | Path) -> ProbeQuestions | None:
    """The cached questions at ``path``, or None when there are none (or of another version)."""
    try:
        data = safejson.loads(Path(path).read_bytes())
        found = ProbeQuestions.model_validate(data)
    except FileNotFoundError:
        return None
    except ValueError as exc:
        raise ValueError(f"{path}: not a file of probe questions: {str(exc)[:200]}") from None
    return found if found.version == PROBE_VERSION else None


def render_options(q: ProbeQuestion) -> str:
    return "\n".join(f"{LETTERS[i]}. {text}" for i, text in enumerate(q.options))


def probe_schema(options: int) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"answer": {"type": "string", "enum": list(LETTERS[:options])}},
        "required": ["answer"],
        "additionalProperties": False,
    }


class ProbeAnswer(Record):
    question: str
    month: str
    chosen: int | None
    """The position chosen (None: no usable answer, scored as wrong)."""
    correct: bool


class MonthAccuracy(Record):
    month: str
    questions: int
    correct: int
    accuracy: float
    low: float
    high: float
    """Wilson interval."""


class ChangePoint(Record):
    """The month knowledge falls to chance, with its interval (months ``YYYY-MM``)."""

    chance: float
    detected: bool
    """Whether accuracy through ``month`` is above chance (Wilson lower bound > ``chance``)
    and the drop beats the permutation test."""
    month: str | None = None
    """The last month recalled above the later level (None: no recall detected)."""
    low: str | None = None
    high: str | None = None
    before: float | None = None
    """Accuracy through ``month`` ..."""
    after: float | None = None
    """... and after it."""
    p_value: float | None = None
    """Of the permutation test of the drop."""
    best_split: str | None = None
    """The best split even when recall is not detected (for a human: never a cutoff)."""


def _loglik(k: float, n: float) -> float:
    p = k / n
    return 0.0 if p in (0.0, 1.0) else float(k * np.log(p) + (n - k) * np.log(1 - p))


def _split_loglik(k: np.ndarray, n: np.ndarray) -> tuple[int, float, float, float] | None:
    """The best split (index of the last month of the first level) of per-month counts, the
    two levels and the log-likelihood gained over one level; None when no split has a higher
    first level."""
    ck, cn = np.cumsum(k), np.cumsum(n)
    tk, tn = float(ck[-1]), float(cn[-1])
    best: tuple[float, int, float, float] | None = None
    for c in range(len(k) - 1):
        k1, n1 = float(ck[c]), float(cn[c])
        k2, n2 = tk - k1, tn - n1
        if n1 == 0 or n2 == 0:
            continue
        a, b = k1 / n1, k2 / n2
        if a <= b:
            continue
        ll = _loglik(k1, n1) + _loglik(k2, n2)
        if best is None or ll > best[0] + 1e-12:
            best = (ll, c, a, b)
    return None if best is None else (best[1], best[2], best[3], best[0] - _loglik(tk, tn))


def change_point(
    answers: Sequence[ProbeAnswer],
    *,
    options: int = OPTIONS,
    draws: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> ChangePoint:
    """The month after which accuracy drops to its later level. Recall counts as detected when
    accuracy through that month is above chance (its Wilson lower bound above ``1 / options``)
    and the likelihood gained by the best split beats that of ``draws`` random reassignments of
    the answers to months (maximising over the split makes a chi-squared threshold too
    lenient)."""
    chance = 1.0 / options
    months = sorted({a.month for a in answers})
    by_month = [[a.correct for a in answers if a.month == m] for m in months]
    k = np.array([sum(x) for x in by_month], dtype=float)
    n = np.array([len(x) for x in by_month], dtype=float)
    found = _split_loglik(k, n) if len(months) >= 2 else None
    if found is None:
        return ChangePoint(chance=chance, detected=False)
    c, a, b, gain = found
    rng = np.random.default_rng(seed)
    flat = np.concatenate([np.array(x, dtype=float) for x in by_month])
    bounds = np.cumsum(n).astype(int)[:-1]
    beaten = 0
    for _ in range(draws):
        shuffled = rng.permutation(flat)
        kp = np.array([part.sum() for part in np.split(shuffled, bounds)])
        got = _split_loglik(kp, n)
        beaten += got is not None and got[3] >= gain - 1e-12
    p_value = (1 + beaten) / (1 + draws)
    k1, n1 = int(k[: c + 1].sum()), int(n[: c + 1].sum())
    detected = wilson(k1, n1, level)[0] > chance and p_value < 1.0 - level
    picks: list[int] = []
    arrays = [np.array(x, dtype=float) for x in by_month]
    for _ in range(draws):
        kb = np.array([rng.choice(x, x.size).sum() if x.size else 0.0 for x in arrays])
        got = _split_loglik(kb, n)
        if got is not None:
            picks.append(got[0])
    tail = (1.0 - level) / 2.0 * 100.0
    lo, hi = (
        (int(np.floor(np.percentile(picks, tail))), int(np.ceil(np.percentile(picks, 100 - tail))))
        if picks
        else (0, len(months) - 1)
    )
    return ChangePoint(
        month=months[c] if detected else None,
        low=months[lo] if detected else None,
        high=months[hi] if detected else None,
        before=a,
        after=b,
        chance=chance,
        p_value=p_value,
        detected=detected,
        best_split=months[c],
    )


def month_end(month: str) -> date:
    """The last day of ``YYYY-MM``."""
    year, mon = map(int, month.split("-"))
    return date(year, mon, calendar.monthrange(year, mon)[1])


class CutoffProbe(Record):
    """One model probed on one corpus's questions."""

    version: str = PROBE_VERSION
    model: str
    prompt: str
    prompt_sha256: str
    corpus: str
    questions: int
    unusable: int
    """Questions without a usable answer (scored as wrong)."""
    months: tuple[MonthAccuracy, ...]
    estimate: ChangePoint
    knowledge_cutoff: date | None
    """The last day of ``estimate.month``."""
    low: date | None
    high: date | None
    level: float
    draws: int
    method: str = PROBE_METHOD
    calls: int
    cached: int


def _parse_answer(options: int) -> Any:
    def parse(data: dict[str, Any]) -> int:
        value = str(data.get("answer", "")).strip().upper().rstrip(".)")
        if len(value) != 1 or value not in LETTERS[:options]:
            raise ValueError(f"answer: expected one of {LETTERS[:options]}, got {value!r}")
        return LETTERS.index(value)

    return parse


def probe_cutoff(
    questions: ProbeQuestions,
    judge: Judge,
    *,
    draws: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    progress: bool = False,
) -> CutoffProbe:
    """Ask ``judge``'s model every question, score it month by month and estimate where its
    recall falls to chance."""
    schema = probe_schema(questions.options)
    parse = _parse_answer(questions.options)
    answers: list[ProbeAnswer] = []
    with progress_bar(progress, len(questions.questions), "probing recall", "questions") as advance:
        for q in questions.questions:
            month = datetime.strptime(q.month, "%Y-%m").strftime("%B %Y")
            fields = {"month": month, "options": render_options(q)}
            chosen, _ = judge.ask("cutoff_probe", q.id, PROBE_PROMPT, fields, schema, parse)
            answers.append(
                ProbeAnswer(question=q.id, month=q.month, chosen=chosen, correct=chosen == q.answer)
            )
            advance()
    months: list[MonthAccuracy] = []
    for m in sorted({a.month for a in answers}):
        mine = [a for a in answers if a.month == m]
        k = sum(a.correct for a in mine)
        lo, hi = wilson(k, len(mine), level)
        months.append(
            MonthAccuracy(
                month=m, questions=len(mine), correct=k, accuracy=k / len(mine), low=lo, high=hi
            )
        )
    est = change_point(answers, options=questions.options, draws=draws, seed=seed, level=level)
    prompt = load_prompt(PROBE_PROMPT)
    calls = [j for j in judge.judgements if j.kind == "cutoff_probe"]
    return CutoffProbe(
        model=judge.name,
        prompt=prompt.id,
        prompt_sha256=prompt.sha256,
        corpus=questions.corpus,
        questions=len(answers),
        unusable=sum(a.chosen is None for a in answers),
        months=tuple(months),
        estimate=est,
        knowledge_cutoff=month_end(est.month) if est.month else None,
        low=month_end(est.low) if est.low else None,
        high=month_end(est.high) if est.high else None,
        level=level,
        draws=draws,
        calls=len(calls),
        cached=sum(j.cached for j in calls),
    )
