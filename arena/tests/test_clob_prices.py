"""Deadline prices from the CLOB: minute prices and books in the real API's shapes on the
loopback (the core's fakes, tests/markets), a cache that replays offline, and the source recorded
with every benchmark price."""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from pastcast.cli import app
from pastcast.markets import DojoSchedule, build_dataset
from pastcast.markets.sources._clob import ClobCache
from pastcast.markets.sources._polymarket import PolymarketClient
from pastcast_arena import ClobPrices
from pastcast_arena._replay import read_results
from pastcast_arena._rounds import ClobMarket

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "markets"))
from loopback import serve
from markets_factories import binary
from test_clob import BOOK, DT, D, clob_route
from test_polymarket import BINARY, make_route


def _dataset() -> Any:
    h = binary("polymarket:101", [0.2 + 0.03 * i for i in range(14)])
    ds, _ = build_dataset([h], name="t", schedule=DojoSchedule())
    return ds


MARKETS = {"polymarket:101": ClobMarket(token="tok-b-yes", condition="0xcb")}


def test_minute_prices_are_cached_and_replayed_offline(tmp_path: Path) -> None:
    route = clob_route()
    with serve(route=route) as url, PolymarketClient(url, url, url) as client:
        online = ClobPrices(ClobCache(tmp_path, client), MARKETS).benchmark(
            _dataset(), "polymarket:101", D
        )
    (_, q), *_ = [x for x in route.queries if x[0] == "/prices-history"]
    assert q["market"] == ["tok-b-yes"] and q["fidelity"] == ["1"]
    assert (int(q["startTs"][0]), int(q["endTs"][0])) == (DT - 86400, DT)
    assert online is not None and online.source == "clob-minute"
    assert (online.price_bp, online.observed_at) == (4200, D - timedelta(seconds=60))
    stored = tmp_path / "prices" / "tok-b-yes" / f"{DT - 86400}-{DT}-f1.json"
    assert json.loads(stored.read_text())["fidelity"] == 1
    # the server is gone: the same answer from the cache, and nothing at or after D in it
    offline = ClobPrices(ClobCache(tmp_path), MARKETS).benchmark(_dataset(), "polymarket:101", D)
    assert offline == online
    assert all(o["t"] < DT for o in json.loads(stored.read_text())["history"])


def test_a_recorded_book_before_the_deadline_gives_its_mid(tmp_path: Path) -> None:
    late = {**BOOK, "timestamp": str((DT + 5) * 1000), "bids": [{"price": "0.46", "size": "1"}]}
    for book in (BOOK, late):
        with serve(route=clob_route(book)) as url, PolymarketClient(url, url, url) as client:
            assert ClobCache(tmp_path, client).record_book("tok-b-yes")[:2] in {
                (0.44, 0.48),
                (0.46, 0.48),
            }
    b = ClobPrices(ClobCache(tmp_path), MARKETS).benchmark(_dataset(), "polymarket:101", D)
    assert b is not None and b.source == "book-mid"  # the book after D is not used
    assert (b.price_bp, b.observed_at) == (4600, D - timedelta(seconds=600))


def test_without_a_clob_price_the_daily_mean_is_the_labelled_fallback(tmp_path: Path) -> None:
    ds = _dataset()
    with serve(route=clob_route(minutes=[])) as url, PolymarketClient(url, url, url) as client:
        b = ClobPrices(ClobCache(tmp_path, client), MARKETS).benchmark(ds, "polymarket:101", D)
    daily = ds.market_at("polymarket:101", D)
    assert b is not None and b.source == "daily-mean-fallback"
    assert b.price_bp == round(daily.probs["Yes"] * 10_000)
    # a market the import recorded no token for: the fallback too, never a CLOB guess
    other = ClobPrices(ClobCache(tmp_path), {}).benchmark(ds, "polymarket:101", D)
    assert other is not None and other.source == "daily-mean-fallback"
    # offline and not cached: no fetch, the fallback
    later = ClobPrices(ClobCache(tmp_path), MARKETS).benchmark(
        ds, "polymarket:101", D + timedelta(days=1)
    )
    assert later is not None and later.source == "daily-mean-fallback"


def test_trade_windows_give_volumes_past_the_offset_cap(tmp_path: Path) -> None:
    route = make_route([BINARY], fail_first=False, offset_cap=14)
    end = datetime(2025, 6, 10, tzinfo=UTC)
    with (
        serve(route=route) as url,
        PolymarketClient(url, url, url, trade_page=7, max_trade_offset=14) as client,
    ):
        prices = ClobPrices(ClobCache(tmp_path, client), MARKETS)
        day = prices.volume("polymarket:101", end - timedelta(days=1), end)
        week = prices.volume("polymarket:101", datetime(2025, 6, 1, tzinfo=UTC), end)
    assert day == 33.0  # three trades of 10, 11, 12 shares on June 9, none at June 10 00:00
    assert week == 9 * 33.0  # 27 trades: past the cap of 14 offsets, read in narrower windows
    assert all(int(q["offset"][0]) <= 14 for q in route.state["trades_queries"])
    offline = ClobPrices(ClobCache(tmp_path), MARKETS)
    assert offline.volume("polymarket:101", end - timedelta(days=1), end) == 33.0
    assert offline.volume("polymarket:101", end, end + timedelta(days=1)) is None  # not fetched


def _replay(dataset: Path, out: Path, *extra: str) -> Any:
    return CliRunner().invoke(
        app,
        [
            "arena", "replay", "--dataset", str(dataset), "--agent", "market",
            "--markets", "1", "--rounds", "1", "--start", D.isoformat(),
            "--out", str(out), "--json", *extra,
        ],
    )  # fmt: skip


def test_a_polymarket_import_replays_with_clob_prices_offline(tmp_path: Path) -> None:
    pytest.importorskip("eth_account", reason="the arena's ledger signs: the 'arena' extra")
    ds = tmp_path / "pm"
    with serve(route=clob_route()) as url:
        res = CliRunner().invoke(
            app,
            [
                "data", "import", "polymarket", "--base-url", url, "--clob-url", url,
                "--data-url", url, "--out", str(ds), "--schedule", "hindcast",
                "--filter", "min_faithful_fraction=0",
            ],
        )  # fmt: skip
        assert res.exit_code == 0, res.output
        meta = json.loads((ds / "metadata.json").read_text())
        assert meta["provenance"]["clob_tokens"] == {
            "polymarket:101": {"token": "tok-b-yes", "condition": "0xcb"}
        }
        cache = tmp_path / "cache"
        online = _replay(
            ds, tmp_path / "a", "--clob-cache", str(cache), "--clob-url", url, "--data-url", url
        )
    assert online.exit_code == 0, online.output
    offline = _replay(ds, tmp_path / "b", "--clob-cache", str(cache))  # the server is gone
    daily = _replay(ds, tmp_path / "c")
    assert offline.exit_code == 0 and daily.exit_code == 0, offline.output + daily.output
    (a,), (b,), (c,) = (read_results(tmp_path / x / "rounds.jsonl") for x in "abc")
    assert a.round.benchmarks == b.round.benchmarks
    assert [(x.source, x.price_bp) for x in a.round.benchmarks] == [("clob-minute", 4200)]
    assert [x.source for x in c.round.benchmarks] == ["daily"]


def test_clob_urls_without_a_cache_are_one_error_line(tmp_path: Path) -> None:
    res = _replay(tmp_path / "none", tmp_path / "o", "--clob-url", "http://127.0.0.1:9")
    assert res.exit_code == 2 and res.output.startswith("error: --clob-url ")
    assert "give clob_cache too" in res.output or "--clob-cache" in res.output
