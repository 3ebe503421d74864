"""Polymarket client and event construction against a loopback server with recorded shapes."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from loopback import serve
from markets_factories import at
from typer.testing import CliRunner

from pastcast.cli._app import app
from pastcast.cutoff import last_complete_day
from pastcast.dataset import load_dataset
from pastcast.markets import DojoSchedule, FilterConfig, build_dataset
from pastcast.markets._history import DayActivity
from pastcast.markets.sources import PolymarketClient, PolymarketError, fetch_histories


def _ts(s: str) -> int:
    return int(datetime.fromisoformat(s).replace(tzinfo=UTC).timestamp())


def _market(mid: str, **kw: Any) -> dict[str, Any]:
    base = {
        "id": mid,
        "question": f"Market {mid}?",
        "conditionId": f"0xc{mid}",
        "slug": f"m-{mid}",
        "outcomes": '["Yes", "No"]',
        "outcomePrices": '["0", "1"]',
        "clobTokenIds": f'["tok-{mid}-yes", "tok-{mid}-no"]',
        "negRisk": False,
        "startDate": "2025-06-01T00:00:00Z",
        "endDate": "2025-06-20T00:00:00Z",
        "closedTime": "2025-06-20 00:00:00+00",
        "umaResolutionStatus": "resolved",
        "groupItemTitle": "",
    }
    base.update(kw)
    return base


BINARY = {  # YES is index 1 here: the importer must look it up
    "id": "101",
    "slug": "will-x",
    "title": "Will X?",
    "description": "X description.",
    "negRisk": False,
    "tags": [{"label": "Politics"}],
    "markets": [
        _market(
            "b",
            outcomes='["No", "Yes"]',
            outcomePrices='["0.0005", "0.9995"]',
            clobTokenIds='["tok-b-no", "tok-b-yes"]',
            closedTime="2025-06-18T12:00:00Z",
        )
    ],
}
NEG_RISK = {
    "id": "202",
    "slug": "who-wins",
    "title": "Who wins?",
    "negRisk": True,
    "markets": [
        _market(
            m,
            negRisk=True,
            groupItemTitle=m.upper(),
            outcomePrices=p,
            startDate="2025-07-01T00:00:00Z",
            endDate="2025-07-25T00:00:00Z",
            closedTime="2025-07-24T00:00:00Z",
        )
        for m, p in (("a", '["0.001", "0.999"]'), ("b2", '["0.999", "0.001"]'), ("c", '["0", "1"]'))
    ],
}
# legs: "a" resolves YES (index 0 price 0.001?) -> outcomes are ["Yes","No"], YES price first
NEG_RISK["markets"][0]["outcomePrices"] = '["0.0", "1.0"]'  # A: NO
NEG_RISK["markets"][1]["outcomePrices"] = '["1.0", "0.0"]'  # B2: YES (the winner)
NEG_RISK["markets"][2]["outcomePrices"] = '["0.0", "1.0"]'  # C: NO
EXCLUDED = {
    "id": "303",
    "title": "Two unrelated",
    "negRisk": False,
    "markets": [_market("x"), _market("y")],
}
UNRESOLVED = {
    "id": "404",
    "title": "Pending",
    "markets": [_market("z", outcomePrices='["0.5","0.5"]')],
}


def _history(token: str, fidelity: int, start: int, end: int) -> list[dict[str, float]]:
    if token == "tok-b-yes":
        if fidelity != 1440:
            return []  # resolved markets: empty at fine fidelity
        days = [at("2025-06-01") + timedelta(days=i) for i in range(19)]
        pts = [
            {"t": int(d.timestamp()), "p": 0.3 + 0.4 * ((i * 7) % 5) / 4}
            for i, d in enumerate(days)
        ]
        pts.append({"t": _ts("2025-06-18T13:00:00"), "p": 0.9995})  # post-resolution print
        return [x for x in pts if start <= x["t"] < end]
    if token in ("tok-a-yes", "tok-b2-yes"):
        out = []
        for i in range(22):
            d = at("2025-07-01") + timedelta(days=i)
            base = 0.5 - 0.01 * i if token == "tok-a-yes" else 0.3 + 0.02 * i
            out += [
                {"t": int(d.timestamp()) + 3600, "p": base},
                {"t": int(d.timestamp()) + 7200, "p": base + 0.02},
            ]
        return [x for x in out if start <= x["t"] < end]
    return []


def _trades(condition: str) -> list[dict[str, Any]]:
    """The public trade feed of a market, newest first: three trades a day on the winning legs
    while they traded (B2 traded only every third day: too few faithful days)."""
    if condition == "0xcb":
        days = [at("2025-06-01") + timedelta(days=i) for i in range(18)]
    elif condition == "0xcb2":
        days = [at("2025-07-01") + timedelta(days=i) for i in range(0, 23, 3)]
    else:
        return []
    out = [
        {"timestamp": int(d.timestamp()) + 600 * k, "size": 10.0 + k, "conditionId": condition}
        for d in days
        for k in range(3)
    ]
    return sorted(out, key=lambda t: -t["timestamp"])


TRADES: dict[str, Any] = {"feed": _trades}


def make_route(
    events: list[dict[str, Any]], fail_first: bool = True, offset_cap: int | None = None
) -> Any:
    """The Gamma, CLOB and Data APIs in their shapes; the trade feed honours ``start``/``end``
    (unix seconds, inclusive) and, like the real one, answers 400 past its offset cap."""
    state = {"events_calls": 0, "clob_calls": 0, "trades_queries": []}

    def route(path: str, q: dict[str, list[str]]) -> tuple[int, dict[str, str], bytes]:
        if path == "/events":
            state["events_calls"] += 1
            if fail_first and state["events_calls"] == 1:
                return 429, {"Retry-After": "0"}, b"slow down"
            assert q["closed"] == ["true"]
            lim, off = int(q["limit"][0]), int(q["offset"][0])
            return 200, {}, json.dumps(events[off : off + lim]).encode()
        if path == "/prices-history":
            state["clob_calls"] += 1
            if fail_first and state["clob_calls"] == 2:
                return 502, {}, b"bad gateway"
            hist = _history(
                q["market"][0], int(q["fidelity"][0]), int(q["startTs"][0]), int(q["endTs"][0])
            )
            return 200, {}, json.dumps({"history": hist}).encode()
        if path == "/trades":
            state["trades_queries"].append(q)
            lim, off = int(q["limit"][0]), int(q["offset"][0])
            if offset_cap is not None and off > offset_cap:
                return 400, {}, b'{"error": "max historical activity offset exceeded"}'
            feed = TRADES["feed"](q["market"][0])
            if "start" in q:
                feed = [t for t in feed if t["timestamp"] >= int(q["start"][0])]
            if "end" in q:
                feed = [t for t in feed if t["timestamp"] <= int(q["end"][0])]
            return 200, {}, json.dumps(feed[off : off + lim]).encode()
        return 404, {}, b""

    route.state = state  # type: ignore[attr-defined]
    return route


def _fetch(events: list[dict[str, Any]]) -> tuple[list[Any], dict[str, int], Any]:
    route = make_route(events)
    with (
        serve(route=route) as url,
        PolymarketClient(url, url, url, backoff_s=0.001, window_days=10, trade_page=7) as c,
    ):
        histories, notes = fetch_histories(c, page_size=2)
    return histories, notes, route


def test_binary_and_neg_risk_events_with_paging_and_retries() -> None:
    histories, notes, route = _fetch([BINARY, NEG_RISK, EXCLUDED, UNRESOLVED])
    assert notes == {
        "imported: binary": 1,
        "imported: multi": 1,
        "excluded: excluded layout": 1,
        "excluded: terminal price not resolved": 1,
        "trades: fetched": 2,
    }
    assert route.state["events_calls"] == 4  # one 429, then offsets 0, 2, 4
    by_id = {h.event.id: h for h in histories}
    b = by_id["polymarket:101"]
    assert b.resolution.label == "Yes" and b.resolution.resolved_at == at("2025-06-18T12:00:00")
    assert b.event.labels == ("Yes", "No") and b.event.tags == ("Politics",)
    assert max(x.day for x in b.beliefs) == date(2025, 6, 17)  # no price at/after resolution
    assert b.beliefs[0].probs["Yes"] == pytest.approx(0.3)
    m = by_id["polymarket:202"]
    assert m.event.kind == "multi" and m.event.labels == ("A", "B2", "C")
    assert m.resolution.label == "B2"
    first = m.beliefs[0]
    a, b2 = 0.51, 0.31  # UTC-day means of two observations
    assert first.probs == pytest.approx({"A": a / (a + b2), "B2": b2 / (a + b2)})
    assert "C" not in first.probs  # an unpriced leg stays undefined
    for h in histories:
        assert all(x.day <= last_complete_day(h.resolution.resolved_at) for x in h.beliefs)


def test_malformed_market_names_event_market_and_field() -> None:
    bad = json.loads(json.dumps(BINARY))
    bad["markets"][0]["outcomePrices"] = "[0.5, oops"
    with pytest.raises(
        PolymarketError, match=r"gamma event '101'.*market 'b'.*field outcomePrices"
    ):
        _fetch([bad])


def test_persistent_server_error_is_reported() -> None:
    def route(path: str, q: dict[str, list[str]]) -> tuple[int, dict[str, str], bytes]:
        return 503, {}, b"down"

    with (
        serve(route=route) as url,
        PolymarketClient(url, url, backoff_s=0.001, retries=2) as c,
        pytest.raises(PolymarketError, match="HTTP 503"),
    ):
        list(c.iter_events())


def test_cli_import_polymarket(tmp_path: Path) -> None:
    route = make_route([BINARY, NEG_RISK, EXCLUDED, UNRESOLVED], fail_first=False)
    out = tmp_path / "pm"
    with serve(route=route) as url:
        res = CliRunner().invoke(
            app,
            [
                "data",
                "import",
                "polymarket",
                "--base-url",
                url,
                "--clob-url",
                url,
                "--out",
                str(out),
                "--limit",
                "2",
                "--schedule",
                "hindcast",
                "--no-trades",
            ],
        )
    assert res.exit_code == 0, res.output
    ds = load_dataset(out)
    assert {e.kind for e in ds.events} == {"binary", "multi"} and ds.id.startswith("polymarket:")
    assert len(ds.steps) == 2  # hindcast: one step per event
    assert all(s.cutoff < ds.resolutions[s.event_id].resolved_at for s in ds.steps)


def test_trades_give_daily_activity_on_the_realised_leg() -> None:
    histories, notes, route = _fetch([BINARY, NEG_RISK])
    assert notes["trades: fetched"] == 2
    by_id = {h.event.id: h for h in histories}
    b = by_id["polymarket:101"].activity
    assert b is not None and len(b) == 18
    assert b[date(2025, 6, 3)] == DayActivity(trades=3, volume=33.0)
    m = by_id["polymarket:202"].activity  # the winning leg B2 only
    assert m is not None and set(m) == {
        date(2025, 7, 1) + timedelta(days=i) for i in range(0, 23, 3)
    }
    queries = route.state["trades_queries"]
    assert {q["market"][0] for q in queries} == {"0xcb", "0xcb2"}
    assert all(q["takerOnly"] == ["true"] for q in queries)
    assert len([q for q in queries if q["market"] == ["0xcb"]]) == 8  # 54 trades, pages of 7


def _capped(events: list[dict[str, Any]], cap: int) -> tuple[list[Any], dict[str, int], Any]:
    route = make_route(events, fail_first=False, offset_cap=cap)
    with (
        serve(route=route) as url,
        PolymarketClient(url, url, url, trade_page=7, max_trade_offset=cap) as c,
    ):
        histories, notes = fetch_histories(c)
    return histories, notes, route


def test_a_feed_past_its_offset_cap_is_paged_by_narrowing_time_windows() -> None:
    (full,), _, _ = _capped([BINARY], cap=10_000)
    (h,), notes, route = _capped([BINARY], cap=14)  # 54 trades; offsets 0, 7, 14 per window
    assert notes["trades: fetched"] == 1 and "trades: feed cut short, activity unknown" not in notes
    assert h.activity == full.activity and sum(a.trades for a in h.activity.values()) == 54
    queries = [q for q in route.state["trades_queries"] if q["market"] == ["0xcb"]]
    assert all(int(q["offset"][0]) <= 14 for q in queries)  # never past the cap
    ends = [int(q["end"][0]) for q in queries if q["offset"] == ["0"]]
    assert len(ends) >= 3 and ends == sorted(ends, reverse=True)  # windows narrowing back in time


def test_more_trades_in_one_second_than_the_cap_leaves_activity_unknown() -> None:
    second = _ts("2025-06-05T00:00:00")
    burst = [{"timestamp": second, "size": 1.0} for _ in range(30)]
    TRADES["feed"] = lambda c: burst if c == "0xcb" else []
    try:
        (h,), notes, _ = _capped([BINARY], cap=14)
    finally:
        TRADES["feed"] = _trades
    assert h.activity is None and notes["trades: feed cut short, activity unknown"] == 1
    assert len(h.beliefs) > 0


def test_faithful_day_filter_runs_on_polymarket_activity() -> None:
    histories, _, _ = _fetch([BINARY, NEG_RISK])
    _, report = build_dataset(histories, name="pm", schedule=DojoSchedule())
    stage = next(s for s in report.funnel if s.stage == "faithful days")
    assert "not available" not in stage.note and "rho >=" in stage.note
    assert stage.removed == 1  # B2 traded on a third of its days only
    _, lenient = build_dataset(
        histories,
        name="pm",
        schedule=DojoSchedule(),
        filters=FilterConfig(min_faithful_fraction=0.3, max_unfaithful_run=2),
    )
    assert next(s for s in lenient.funnel if s.stage == "faithful days").removed == 0


def _cli(url: str, out: Path, *extra: str) -> Any:
    return CliRunner().invoke(
        app,
        [
            "data",
            "import",
            "polymarket",
            "--base-url",
            url,
            "--clob-url",
            url,
            "--data-url",
            url,
            "--out",
            str(out),
            "--schedule",
            "hindcast",
            "--json",
            *extra,
        ],
    )


def test_cli_filters_from_options_and_files(tmp_path: Path) -> None:
    route = make_route([BINARY, NEG_RISK], fail_first=False)
    (tmp_path / "f.toml").write_text("[filters]\nmin_faithful_fraction = 0.3\n")
    (tmp_path / "f.json").write_text('{"min_lifetime_days": 30}')
    with serve(route=route) as url:
        default = _cli(url, tmp_path / "a")
        from_file = _cli(url, tmp_path / "b", "--filters", str(tmp_path / "f.toml"))
        overridden = _cli(
            url,
            tmp_path / "c",
            "--filters",
            str(tmp_path / "f.toml"),
            "--filter",
            "max-unfaithful-run=1",
        )
        longer = _cli(url, tmp_path / "d", "--filters", str(tmp_path / "f.json"))
        no_trades = _cli(url, tmp_path / "e", "--no-trades")
        per_type = _cli(url, tmp_path / "f", "--filter", "binary.min_trades=3")
    for res in (default, from_file, overridden, no_trades):
        assert res.exit_code == 0, res.output
    # every event is too short for 30 days: nothing is written, and the stage is named
    assert longer.exit_code == 2 and "stage 'lifetime': >= 30 UTC days" in longer.stderr

    def removed(res: Any, stage: str) -> int:
        return next(s["removed"] for s in json.loads(res.stdout)["funnel"] if s["stage"] == stage)

    assert removed(default, "faithful days") == 1
    assert removed(from_file, "faithful days") == 0
    assert removed(overridden, "faithful days") == 1  # B2's gaps are 2 days long
    assert removed(no_trades, "faithful days") == 0
    # the binary market trades 3 times a day: with its row at 3, no event is left
    assert per_type.exit_code == 2 and "stage 'faithful days'" in per_type.stderr
    assert "binary: trades > 3, volume > 0; multi: trades > 0" in per_type.stderr
    assert "binary: trades > 1, volume > 0; multi: trades > 0" in str(json.loads(default.stdout))
    meta = json.loads((tmp_path / "c" / "metadata.json").read_text())
    assert meta["filters"]["min_faithful_fraction"] == 0.3
    assert meta["filters"]["max_unfaithful_run"] == 1


@pytest.mark.parametrize(
    ("args", "where"),
    [
        (["--filter", "min_lifetime=3"], "--filter: unknown filter 'min_lifetime'"),
        (["--filter", "min_trades"], "--filter 'min_trades': expected NAME=VALUE"),
        (["--filter", "min_trades=lots"], "--filter: field min_trades: expected an integer"),
        (["--filters", "MISSING.toml"], "MISSING.toml: cannot read"),
    ],
)
def test_cli_bad_filters_are_one_line_before_any_request(
    tmp_path: Path, args: list[str], where: str
) -> None:
    route = make_route([BINARY], fail_first=False)
    with serve(route=route) as url:
        res = _cli(url, tmp_path / "x", *args)
        assert not serve.log  # type: ignore[attr-defined]
    assert res.exit_code == 2
    assert res.output.startswith("error: ") and res.output.count("\n") == 1
    assert where in res.output
    assert not (tmp_path / "x").exists()
