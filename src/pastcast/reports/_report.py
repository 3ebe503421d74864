"""A Markdown report of one or more run logs (leaderboard, failures, run facts)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console

from pastcast.atomic import write_atomic
from pastcast.reports._tables import leaderboard, to_markdown, to_rich
from pastcast.runlog import RunLog, read_run_log
from pastcast.scoring import summarize, table_from_records

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
    """Print the leaderboard of ``logs`` and write a Markdown report to ``out`` (atomically)."""
    runs: list[RunLog] = [read_run_log(p) for p in logs]
    steps = [s for r in runs for s in r.steps]
    summaries = summarize(table_from_records(steps), by=tuple(by), bootstrap=bootstrap, seed=seed)
    title = (
        f"{len(steps)} forecasts; uniform fallback for unusable outputs; "
        f"95% event-clustered bootstrap CIs ({bootstrap} draws)"
    )
    if console is None:
        console = Console()
        if not console.is_terminal:
            console = Console(width=180)  # keep the table readable in logs and pipes
    console.print(to_rich(leaderboard(summaries, by, title)))
    failures = Counter(
        (s.agent, s.setting, s.forecast.failure_reason) for s in steps if not s.forecast.usable
    )
    terminations = Counter((s.agent, s.setting, s.episode.termination) for s in steps)
    parts = ["# pastcast report", ""]
    for r in runs:
        parts += [
            f"- run `{r.header.run_id}` ({r.path.name}): dataset `{r.header.dataset_id}`, "
            f"code `{r.header.code_version}`, {len(r.steps)} forecast steps, "
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
        to_markdown(leaderboard(summaries, by)),
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
