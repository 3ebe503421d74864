"""The dashboard's web application: server-rendered pages over a ``RunIndex``, read-only.

Only GET routes exist and none opens a path a request names: every page is rendered from the
index built at start-up (a trajectory page reads its step's line of a step file the index
holds, by the byte offset the index recorded), so a request naming a path
(``/event/../../etc/passwd``) is just an unknown id. Jinja2
escapes every value (document texts, model outputs, tool results may hold HTML), and a
content-security policy forbids scripts, so markup that slipped through could not run either.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlencode

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse
from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response

from pastcast.reports._leaderboard import fmt_cell, fmt_metric, metric_columns
from pastcast.reports._scorecard import market_age_text
from pastcast.reports._tables import fmt_number
from pastcast.reports.dashboard._compare import add_comparison_page
from pastcast.reports.dashboard._index import FILTERS, Filters, RunIndex
from pastcast.reports.dashboard._views import (
    RESULT_CHARS,
    chart,
    notebook_diff,
    pretty_json,
    question_of,
    timeline,
)
from pastcast.reports.dashboard._views import page as paginate
from pastcast.reports.html import ReportSection
from pastcast.scoring import event_kind

if TYPE_CHECKING:
    from pastcast.audit import LeakageCard

SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
    "form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


def _environment() -> Environment:
    env = Environment(
        loader=PackageLoader("pastcast.reports.dashboard", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["u"] = lambda s: quote(str(s), safe="")
    env.filters["qs"] = lambda d: (
        "?" + urlencode({k: v for k, v in d.items() if v not in ("", None)})
    )
    env.filters["metric"] = lambda m: _breakable(fmt_metric(m))
    env.globals["cell"] = lambda *a: _breakable(fmt_cell(*a))
    env.filters["num"] = fmt_number
    # how old the market belief a step is graded against was at its cutoff
    env.filters["age"] = lambda days: market_age_text([days])
    env.filters["pct"] = lambda x: fmt_number(x, 1, percent=True)
    env.filters["json"] = pretty_json
    env.globals["RESULT_CHARS"] = RESULT_CHARS
    return env


def _breakable(text: str) -> Markup:
    """``text`` ("0.366 [0.317, 0.417]") as a value and its interval that each stay whole but
    may go on two lines, so a wide leaderboard fits its page instead of scrolling."""
    value, space, interval = text.partition(" [")
    nowrap = '<span style="white-space: nowrap">{}</span>'
    if not space:
        return Markup(nowrap).format(text)
    return Markup(nowrap + " " + nowrap).format(value, "[" + interval)


def _number(text: str) -> int:
    return int(text) if text.isdigit() and len(text) < 10 else 1


def create_app(
    index: RunIndex,
    title: str = "pastcast",
    sections: Sequence[ReportSection] = (),
    leakage: Sequence[LeakageCard] = (),
) -> FastAPI:
    """The dashboard over ``index`` (serve it with uvicorn, bound to 127.0.0.1); each of
    ``sections`` (the arena's rounds) is a page of its own, ``/section/SLUG``; ``leakage``: the
    runs' leakage cards, on ``/leakage``."""
    app = FastAPI(title=title, docs_url=None, redoc_url=None, openapi_url=None)
    env = _environment()
    index.leaderboard(Filters())  # the first page: computed now, not on the first request

    def render(name: str, code: int = 200, **context: Any) -> HTMLResponse:
        html = env.get_template(name).render(
            title=title, n_steps=len(index), sections=sections, **context
        )
        return HTMLResponse(html, status_code=code)

    @app.middleware("http")
    async def _headers(
        request: Request, call_next: Callable[[Request], Awaitable[Response]]
    ) -> Response:
        response = await call_next(request)
        response.headers.update(SECURITY_HEADERS)
        return response

    @app.exception_handler(StarletteHTTPException)
    async def _error(request: Request, exc: StarletteHTTPException) -> Response:
        return render("error.html.j2", exc.status_code, status=exc.status_code, detail=exc.detail)

    def not_found(what: str) -> HTMLResponse:
        return render("error.html.j2", 404, status=404, detail=f"no such {what}")

    labels = add_comparison_page(app, index, render)
    env.filters["short"] = lambda name: labels.get(name, name)

    @app.get("/leakage", response_class=HTMLResponse)
    def leakage_cards() -> HTMLResponse:
        cards = [{"dataset": c.dataset_id, "run": c.run_id, "rows": c.rows()} for c in leakage]
        return render("leakage.html.j2", cards=cards)

    @app.get("/", response_class=HTMLResponse)
    def leaderboard(
        split: str = "", setting: str = "", model: str = "", category: str = "", page: str = "1"
    ) -> HTMLResponse:
        f = Filters(split, setting, model, category)
        events = index.events(f)
        pg = paginate(len(events), _number(page))
        shown = events[pg.start : pg.stop]  # each has steps: ``events`` names no other
        rows = [r for e in shown if (r := index.event_rows(e)) is not None]
        event_rows = [
            {
                "id": e,
                "title": index.title_of(e),
                "category": first.category,
                "kind": event_kind(first.grading.labels),
                "truth": first.grading.truth,
                "n": int(r.size),
            }
            for e, r, first in zip(shown, rows, index.rows([int(r[0]) for r in rows]), strict=True)
        ]
        return render(
            "leaderboard.html.j2",
            board=index.leaderboard(f),
            market_age=index.market_age(f),
            shown=metric_columns(lambda m: m.report),
            filters=f,
            choices={c: index.choices(c) for c in FILTERS},
            events=event_rows,
            page=pg,
            runs=zip(index.logs, index.sizes, strict=True),
        )

    @app.get("/forecasts", response_class=HTMLResponse)
    def forecasts(
        agent: str,
        setting: str,
        split: str = "",
        model: str = "",
        category: str = "",
        page: str = "1",
    ) -> HTMLResponse:
        f = Filters(split, "", model, category)
        rows = index.group_rows(agent, setting, f)
        if rows.size == 0:
            return not_found("agent and setting")
        pg = paginate(int(rows.size), _number(page))
        shown = [int(i) for i in rows[pg.start : pg.stop]]
        return render(
            "forecasts.html.j2",
            agent=agent,
            setting=setting,
            filters=f,
            page=pg,
            steps=list(zip(shown, index.rows(shown), strict=True)),
            brier=index.metrics["brier"],
        )

    @app.get("/event/{event_id:path}", response_class=HTMLResponse)
    def event(event_id: str, page: str = "1") -> HTMLResponse:
        rows = index.event_sorted(event_id)
        if rows is None or rows.size == 0:
            return not_found("event")
        ids = [int(i) for i in rows]
        steps = index.rows(ids)
        info = None
        if index.dataset is not None:
            try:
                info = index.dataset.event(event_id)
            except KeyError:
                info = None
        pg = paginate(len(ids), _number(page), size=200)
        return render(
            "event.html.j2",
            event_id=event_id,
            info=info,
            question="" if info else question_of(index.records(ids[:200])),
            first=steps[0],
            chart=chart(steps, index.dataset),
            page=pg,
            rows=list(zip(ids, steps, strict=True))[pg.start : pg.stop],
            brier=index.metrics["brier"],
        )

    by_slug = {s.slug: s for s in sections}

    @app.get("/section/{slug}", response_class=HTMLResponse)
    def section(slug: str) -> HTMLResponse:
        found = by_slug.get(slug)
        if found is None:
            return not_found("section")
        figures = [f.embedded() for f in found.figures]
        return render("section.html.j2", section=found, figures=figures)

    @app.get("/step/{step_id}", response_class=HTMLResponse)
    def step(step_id: str) -> HTMLResponse:
        if not step_id.isdigit() or int(step_id) >= len(index):
            return not_found("step")
        i = int(step_id)
        s = index.record(i)
        chain = index.chain(i)
        pos = chain.index(i)
        log = index.logs[int(index.run_of[i])]
        return render(
            "step.html.j2",
            step_id=i,
            s=s,
            run=log,
            model=index.model_of(i),
            metrics=[
                (m.label, float(index.metrics[m.name][i]))
                for _, m, _ in metric_columns(lambda m: m.leaderboard)
            ],
            timeline=timeline(s),
            diff=notebook_diff(s.episode.notebook_in, s.episode.notebook_out),
            prev=chain[pos - 1] if pos > 0 else None,
            next=chain[pos + 1] if pos + 1 < len(chain) else None,
        )

    return app
