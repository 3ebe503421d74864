"""The CLOB cache: minute prices and books in the real API's shapes on the loopback (the arena's
deadline prices from it: arena/tests/test_clob_prices.py)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from loopback import serve
from test_polymarket import BINARY, make_route

from pastcast.markets.sources import ClobCache, PolymarketClient, PolymarketError

D = datetime(2025, 6, 10, 16, 0, tzinfo=UTC)
DT = int(D.timestamp())
MINUTES = [  # a sloppy server: it also sends what lies at and after endTs
    {"t": DT - 7200, "p": 0.40},
    {"t": DT - 120, "p": 0.41},
    {"t": DT - 60, "p": 0.42},
    {"t": DT, "p": 0.99},
    {"t": DT + 60, "p": 0.99},
]
BOOK = {
    "market": "0xcb",
    "asset_id": "tok-b-yes",
    "timestamp": str((DT - 600) * 1000),
    "hash": "0xabc",
    "bids": [{"price": "0.30", "size": "10"}, {"price": "0.44", "size": "5"}],
    "asks": [{"price": "0.60", "size": "3"}, {"price": "0.48", "size": "7"}],
}


def clob_route(book: dict[str, Any] | None = None, minutes: list[Any] | None = None) -> Any:
    """``make_route``'s fake, with minute prices for the YES token of ``BINARY`` and its book."""
    base = make_route([BINARY], fail_first=False)
    queries: list[tuple[str, dict[str, list[str]]]] = []

    def route(path: str, q: dict[str, list[str]]) -> tuple[int, dict[str, str], bytes]:
        queries.append((path, q))
        if path == "/prices-history" and q.get("fidelity") == ["1"]:
            if q["market"] != ["tok-b-yes"]:
                return 200, {}, b'{"history": []}'
            lo = int(q["startTs"][0])
            pts = [x for x in (MINUTES if minutes is None else minutes) if x["t"] >= lo]
            return 200, {}, json.dumps({"history": pts}).encode()
        if path == "/book":
            if book is None or q["token_id"] != [book["asset_id"]]:
                return 404, {}, b'{"error": "No orderbook exists for the requested token id"}'
            return 200, {}, json.dumps(book).encode()
        return base(path, q)  # type: ignore[no-any-return]

    route.queries = queries  # type: ignore[attr-defined]
    return route


@pytest.mark.parametrize("token", ["../escape", "a/b", "", ".."])
def test_ids_that_are_not_file_names_are_refused(tmp_path: Path, token: str) -> None:
    with pytest.raises(PolymarketError, match="not a CLOB id"):
        ClobCache(tmp_path).minute_history(token, 0, 60)


def test_a_crossed_or_empty_book_is_refused(tmp_path: Path) -> None:
    crossed = {**BOOK, "bids": [{"price": "0.7", "size": "1"}]}
    empty = {**BOOK, "asks": []}
    for book, field in ((crossed, "crossed book"), (empty, "field asks")):
        with (
            serve(route=clob_route(book)) as url,
            PolymarketClient(url, url, url) as client,
            pytest.raises(PolymarketError, match=field),
        ):
            ClobCache(tmp_path, client).record_book("tok-b-yes")
    assert not (tmp_path / "books").exists()


def test_open_events_in_gamma_s_trending_order() -> None:
    seen: list[dict[str, list[str]]] = []

    def route(path: str, q: dict[str, list[str]]) -> tuple[int, dict[str, str], bytes]:
        seen.append(q)
        hot = [{"id": "2", "volume24hr": 900.5}, {"id": "1", "volume24hr": 12.0}]
        return 200, {}, json.dumps(hot if q["offset"] == ["0"] else []).encode()

    with serve(route=route) as url, PolymarketClient(url) as client:
        got = list(client.iter_events(2, closed=False, order="volume24hr", ascending=False))
    assert [ev["volume24hr"] for _, ev in got] == [900.5, 12.0]
    assert seen[0]["closed"] == ["false"] and seen[0]["order"] == ["volume24hr"]
    assert seen[0]["ascending"] == ["false"]
