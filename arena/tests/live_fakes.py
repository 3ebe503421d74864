"""Loopback stand-ins for the live arena: Polymarket's Gamma, CLOB and Data APIs in their real
shapes (JSON-encoded ``outcomes``/``outcomePrices``/``clobTokenIds``, string book levels), over
a clock the test owns, and an RSS news feed; and a virtual clock that moves only when slept."""

from __future__ import annotations

import hashlib
import json
import math
import sys
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

# the loopback server of the core tests (tests/markets/loopback.py)
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "markets"))
from loopback import serve

__all__ = [
    "FakeMarket",
    "FakePolymarket",
    "LateStory",
    "ManualClock",
    "fake_markets",
    "rss",
    "serve",
]


class Clock(Protocol):
    def now(self) -> float: ...


@dataclass
class ManualClock:
    """Virtual time: ``sleep`` moves it on at once (a whole schedule runs in no real time)."""

    t: float

    def now(self) -> float:
        return self.t

    def sleep(self, seconds: float) -> None:
        self.t += max(seconds, 0.001)


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class FakeMarket:
    mid: str
    end: float
    resolve_at: float
    winner: str  # "Yes", "No" or "void"
    volume: float
    start: float
    yes_first: bool = True

    @property
    def condition(self) -> str:
        return "0x" + hashlib.sha256(self.mid.encode()).hexdigest()

    def price(self, t: float) -> float:
        """A YES price that drifts towards the outcome."""
        base = 0.7 if self.winner == "Yes" else 0.3 if self.winner == "No" else 0.5
        # constant within a UTC day: a book read at any moment of a day gives the same mid
        wobble = 0.1 * math.sin(t // 86400 + int(self.mid[1:]))
        return round(min(max(base + wobble, 0.02), 0.98), 3)

    def gamma(self, now: float) -> dict[str, Any]:
        closed = now >= self.resolve_at
        outcomes = ["Yes", "No"] if self.yes_first else ["No", "Yes"]
        tokens = [f"tok-{self.mid}-{o.lower()}" for o in outcomes]
        if closed:
            if self.winner == "void":
                prices = ["0.5", "0.5"]
            else:
                prices = ["1" if o == self.winner else "0" for o in outcomes]
        else:
            p = self.price(now)
            prices = [str(p if o == "Yes" else round(1 - p, 3)) for o in outcomes]
        return {
            "id": self.mid,
            "question": f"Will {self.mid} happen?",
            "conditionId": self.condition,
            "slug": f"will-{self.mid}",
            "outcomes": json.dumps(outcomes),
            "outcomePrices": json.dumps(prices),
            "clobTokenIds": json.dumps(tokens),
            "startDate": _iso(self.start),
            "endDate": _iso(self.end),
            "closedTime": _iso(self.resolve_at) if closed else None,
            "volume24hr": self.volume,
            "liquidity": str(self.volume / 2),
            "liquidityNum": self.volume / 2,
            "active": True,
            "closed": closed,
            "negRisk": False,
            "category": "Politics",
            "umaResolutionStatus": "resolved" if closed else None,
        }


@dataclass
class FakePolymarket:
    clock: Clock
    markets: list[FakeMarket]
    log: list[str] = field(default_factory=list)
    leak: bool = False
    """A careless API: the price history runs on past ``endTs`` with the outcome's price."""

    def _by_token(self, token: str) -> FakeMarket | None:
        for m in self.markets:
            if token.startswith(f"tok-{m.mid}-yes"):
                return m
        return None

    def route(self, path: str, q: dict[str, list[str]]) -> tuple[int, dict[str, str], bytes]:
        now = self.clock.now()
        self.log.append(path)

        def ok(body: Any) -> tuple[int, dict[str, str], bytes]:
            return 200, {"Content-Type": "application/json"}, json.dumps(body).encode()

        if path == "/markets":
            lo = datetime.fromisoformat(q["end_date_min"][0]).timestamp()
            hi = datetime.fromisoformat(q["end_date_max"][0]).timestamp()
            rows = [
                m.gamma(now)
                for m in sorted(self.markets, key=lambda m: -m.volume)
                if lo <= m.end <= hi and now < m.resolve_at and m.start <= now
            ]
            off, lim = int(q["offset"][0]), int(q["limit"][0])
            return ok(rows[off : off + lim])
        if path.startswith("/markets/"):
            mid = path.removeprefix("/markets/")
            for m in self.markets:
                if m.mid == mid:
                    return ok(m.gamma(now))
            return 404, {}, b'{"error": "not found"}'
        if path == "/book":
            m = self._by_token(q["token_id"][0])
            if m is None or now >= m.resolve_at:
                return 404, {}, b'{"error": "No orderbook exists for the requested token id"}'
            p = m.price(now)
            return ok(
                {
                    "market": m.condition,
                    "asset_id": q["token_id"][0],
                    "timestamp": str(int(now * 1000)),
                    "hash": "0x0",
                    "bids": [
                        {"price": f"{p - 0.02:.3f}", "size": "120"},
                        {"price": f"{p - 0.05:.3f}", "size": "50"},
                    ],
                    "asks": [
                        {"price": f"{p + 0.04:.3f}", "size": "90"},
                        {"price": f"{p + 0.06:.3f}", "size": "10"},
                    ],
                    "min_order_size": "5",
                    "tick_size": "0.001",
                    "neg_risk": False,
                }
            )
        if path == "/prices-history":
            m = self._by_token(q["market"][0])
            start, end = int(q["startTs"][0]), int(q["endTs"][0])
            if m is None:
                return ok({"history": []})
            step = 3600 if q["fidelity"][0] == "60" else 86400
            first = int(m.start) - int(m.start) % step
            hist = [
                {"t": t, "p": m.price(t)}
                for t in range(first, int(min(end, now)), step)  # never a price from the future
                if start <= t < end
            ]
            if self.leak:
                hist += [{"t": t, "p": 0.999} for t in range(end, end + 7200, 600)]
            return ok({"history": hist})
        if path == "/trades":
            cond = q["market"][0]
            trades = [
                {
                    "proxyWallet": "0x0",
                    "side": "BUY",
                    "asset": f"tok-{m.mid}-yes",
                    "conditionId": cond,
                    "size": 10.0,
                    "price": m.price(now - 60),
                    "timestamp": int(now - 60),
                    "outcome": "Yes",
                    "outcomeIndex": 0,
                }
                for m in self.markets
                if m.condition == cond
            ]
            return ok(trades)
        return 404, {}, b""


def fake_markets(
    t0: float,
    *,
    base: float = 3700,
    step: float = 600,
    early: str | None = "m07",
    void: str | None = "m05",
    early_at: float = 5000,
    count: int = 12,
) -> list[FakeMarket]:
    """``count`` markets ending every ``step`` s from ``t0 + base``: three rounds of three with
    1800 s phases take m00-m02, m03-m05 and m06-m08. ``early`` resolves at ``t0 + early_at``,
    before its round's reveal window closes; ``void`` is voided at its end."""
    out = []
    for i in range(count):
        mid = f"m{i:02d}"
        end = t0 + base + step * i
        winner = "void" if mid == void else ("Yes" if i % 3 != 1 else "No")
        resolve_at = t0 + early_at if mid == early else end
        out.append(
            FakeMarket(
                mid,
                end,
                resolve_at,
                winner,
                volume=1000.0 + 10 * (count - i),
                start=t0 - 5 * 86400,
                yes_first=i % 2 == 0,
            )
        )
    return out


RSS = '<?xml version="1.0"?><rss version="2.0"><channel><title>News</title>{items}</channel></rss>'
ITEM = """<item><title>{title}</title><link>http://news.test/{n}</link><guid>n{n}</guid>
<pubDate>{date}</pubDate><description>{text}</description></item>"""


def _rfc822(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%a, %d %b %Y %H:%M:%S +0000")


@dataclass(frozen=True)
class LateStory:
    """A story the feed starts carrying at ``appears_at`` (on ``clock``), dated ``dated`` (a
    date after it: a feed that post-dates its items)."""

    clock: Clock
    appears_at: float
    dated: float
    title: str
    text: str


def rss(t0: float, markets: list[FakeMarket], late: LateStory | None = None) -> Any:
    """A feed with one story per market, dated an hour before ``t0`` (and ``late``'s story
    from the moment it appears)."""

    def route(path: str, q: dict[str, list[str]]) -> tuple[int, dict[str, str], bytes]:
        now = t0 - 3600
        items = "".join(
            ITEM.format(
                title=f"{m.mid} happen report",
                n=i,
                date=_rfc822(now),
                text=f"Officials say {m.mid} will happen, analysts expect it.",
            )
            for i, m in enumerate(markets)
        )
        if late is not None and late.clock.now() >= late.appears_at:
            n = len(markets)
            items += ITEM.format(title=late.title, n=n, date=_rfc822(late.dated), text=late.text)
        return 200, {"Content-Type": "application/rss+xml"}, RSS.format(items=items).encode()

    return route


def stop_recorded_node(folder: Path) -> None:
    """Stop the lasting node recorded in ``folder`` if it still runs (a test's clean-up)."""
    from pastcast_arena._node import _is_anvil, _recorded, _stop

    node = _recorded(folder)
    if node is not None and _is_anvil(node.pid):
        _stop(node.pid, None)
