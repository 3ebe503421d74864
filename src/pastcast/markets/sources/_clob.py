"""Deadline prices and volumes from Polymarket's CLOB and trade feed, kept in a cache folder so
that a replay reads them offline and the same way every time.

Each fetch is stored under the key it was asked by, as the API answered it:

    prices/<token>/<startTs>-<endTs>-f1.json  GET /prices-history?market=&startTs=&endTs=&fidelity=1
    trades/<condition>/<start>-<end>.json     GET /trades?market=&start=&end= (windowed paging)
    books/<token>/<timestamp ms>.json         GET /book?token_id= (recorded live, when taken)

A key that is not stored is fetched only when the cache has a client; without one (the offline
replay) it is ``None``, never a guess. Windows are given by the caller (a deadline and how far
back), so one round plan asks for the same keys every time.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from pathlib import Path
from typing import Any

from pastcast import safejson
from pastcast.atomic import write_atomic
from pastcast.markets.sources._polymarket import (
    PolymarketClient,
    PolymarketError,
    book_quote,
    price_observations,
    trade_rows,
)

_NAME = re.compile(r"^[0-9A-Za-z_-][0-9A-Za-z_.-]{0,199}$")


def _name(value: str, what: str) -> str:
    """A token or condition id as a file name: no separators, no dot-dot, nothing odd."""
    if not _NAME.match(value):
        raise PolymarketError(f"{what} {value!r}: not a CLOB id (letters, digits, '_', '-', '.')")
    return value


class ClobCache:
    """Minute prices, windowed trades and recorded books under ``root``; fetched through
    ``client`` where it is given and the key is not stored yet."""

    def __init__(self, root: str | Path, client: PolymarketClient | None = None) -> None:
        self.root = Path(root)
        self.client = client

    def _read(self, path: Path) -> Any:
        try:
            return safejson.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise PolymarketError(f"{path}: not a readable cache entry ({exc})") from None

    def _write(self, path: Path, obj: Any) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, json.dumps(obj, sort_keys=True) + "\n")

    def minute_history(self, token: str, start: int, end: int) -> list[tuple[int, float]] | None:
        """Minute prices of ``token`` in [start, end) (unix seconds); ``None`` when not stored
        and there is no client to fetch them."""
        path = self.root / "prices" / _name(token, "token") / f"{start}-{end}-f1.json"
        if path.is_file():
            obs = price_observations(self._read(path), str(path))
            return [(t, p) for t, p in obs if start <= t < end]
        if self.client is None:
            return None
        obs = self.client.price_history(token, start, end, fidelity=1)
        self._write(
            path,
            {
                "market": token,
                "startTs": start,
                "endTs": end,
                "fidelity": 1,
                "history": [{"t": t, "p": p} for t, p in obs],
            },
        )
        return obs

    def trades(self, condition: str, start: int, end: int) -> list[tuple[int, float]] | None:
        """(timestamp, shares) of the market's trades in [start, end); ``None`` when not stored
        without a client, or when the feed could not give the whole window."""
        path = self.root / "trades" / _name(condition, "condition") / f"{start}-{end}.json"
        if path.is_file():
            body = self._read(path)
            rows = body.get("trades") if isinstance(body, dict) else None
            if not isinstance(rows, list) or not isinstance(body.get("complete"), bool):
                raise PolymarketError(f"{path}: fields trades/complete: not a trade window")
            return trade_rows(rows, f"{path}: field trades") if body["complete"] else None
        if self.client is None:
            return None
        got, cut = self.client.trades(condition, start, end - 1)  # the feed's end is inclusive
        got = [(t, s) for t, s in got if start <= t < end]
        self._write(
            path,
            {
                "market": condition,
                "start": start,
                "end": end,
                "complete": not cut,
                "trades": [{"timestamp": t, "size": s} for t, s in got],
            },
        )
        return None if cut else got

    def record_book(self, token: str) -> tuple[float, float, datetime]:
        """Take the book of ``token`` now (needs a client) and store it under its timestamp."""
        if self.client is None:
            raise PolymarketError(f"book token {token}: recording a book needs a client")
        body = self.client.book(_name(token, "token"))
        quote = book_quote(body, f"book token {token}")
        self._write(self.root / "books" / token / f"{int(body['timestamp'])}.json", body)
        return quote

    def books(self, token: str) -> list[tuple[float, float, datetime]]:
        """Every recorded book of ``token`` as (best bid, best ask, observed at), oldest first."""
        folder = self.root / "books" / _name(token, "token")
        if not folder.is_dir():
            return []
        out = []
        for path in sorted(folder.glob("*.json")):
            body = self._read(path)
            if not isinstance(body, dict):
                raise PolymarketError(f"{path}: not a book object")
            out.append(book_quote(body, str(path)))
        return sorted(out, key=lambda q: q[2])
