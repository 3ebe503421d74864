"""A Markdown report of one or more run logs (leaderboard, failures, run facts)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console

from pastcast.atomic import write_atomic
from pastcast.reports._leaderboard import leaderboard_markdown, leaderboard_table
from pastcast.reports._runs import Runs
from pastcast.runlog import read_step_columns
from pastcast.scoring import summarize

__all__ = ["write_report"]


def write_report(
    logs: Sequence[str | Path],
    out: str | Path,
    *,
    by: Sequence[str] = ("agent", "setting"),
    bootstrap: int = 4000,
    seed: int = 0,
    console: Console | None = None,
) -> Path:
    """Print the leaderboard of ``logs`` and write a Markdown report to ``out`` (atomically),
    from the logs' step columns."""
    runs = Runs(tuple(read_step_columns(p) for p in logs))
    summaries = summarize(runs.base_table, by=tuple(by), bootstrap=bootstrap, seed=seed)
    title = (
        f"{len(runs)} forecasts; uniform fallback for unusable outputs; "
        f"95% event-clustered bootstrap CIs ({bootstrap} draws)"
    )
    if console is None:
        console = Console()
        if not console.is_terminal:
            console = Console(width=180)  # keep the table readable in logs and pipes
    console.print(leaderboard_table(summaries, by, title))
    failures: Counter[tuple[str, str, str | None]] = Counter()
    terminations: Counter[tuple[str, str, str]] = Counter()
    names = ("agent", "setting", "usable", "failure_reason", "termination")
    for b in runs.batches(names):
        for agent, setting, usable, reason, termination in zip(*(b[c] for c in names), strict=True):
            if not usable:
                failures[agent, setting, reason] += 1
            terminations[agent, setting, termination] += 1
    parts = ["# pastcast report", ""]
    for r, n in zip(runs.logs, runs.log_sizes(), strict=True):
        parts += [
            f"- run `{r.header.run_id}` ({r.path.name}): dataset `{r.header.dataset_id}`, "
            f"code `{r.header.code_version}`, {n} forecast steps, "
            f"created {r.header.created_at:%Y-%m-%d %H:%M} UTC",
        ]
    parts += [
        "",
        "## Leaderboard",
        "",
        "Ranked by mean multiclass Brier ([0, 2] scale, lower is better). Reference agents (the "
        "market price before the cutoff) are listed last and are not forecasters. Brackets are "
        f"95% event-clustered bootstrap intervals ({bootstrap} draws, seed {seed}).",
        "",
        leaderboard_markdown(summaries, by),
        "",
        "## Unusable forecasts",
        "",
    ]
    if failures:
        parts += ["| agent | setting | reason | count |", "|---|---|---|---|"]
        parts += [
            f"| {a} | {st} | {r} | {n} |" for (a, st, r), n in sorted(failures.items(), key=str)
        ]
    else:
        parts.append("None.")
    parts += ["", "## Episode terminations", ""]
    parts += ["| agent | setting | termination | count |", "|---|---|---|---|"]
    parts += [f"| {a} | {st} | {t} | {n} |" for (a, st, t), n in sorted(terminations.items())]
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    return write_atomic(path, "\n".join(parts) + "\n")
