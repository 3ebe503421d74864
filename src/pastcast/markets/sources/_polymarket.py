"""Polymarket client (Gamma events + CLOB price history + the Data API's trade feed) and event
construction after Forecast-Dojo A.2: the layouts, labels, daily beliefs and trade activity are
described in docs/datasets.md, "Polymarket". Where the trade feed cannot reach a trade, the
activity is unknown (``None``) rather than a false run of days without trades.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from typing import Any

import httpx
from pydantic import Field, ValidationError

from pastcast import safejson
from pastcast.cutoff import parse_timestamp
from pastcast.errors import FieldError
from pastcast.markets._categories import categorize
from pastcast.markets._history import DayActivity, MarketHistory, guard_beliefs
from pastcast.records import BINARY_LABELS, DailyBelief, Event, Record, Resolution, UtcDatetime
from pastcast.retrying import (
    ProviderFailure,
    RetryPolicy,
    call_with_retries,
    failure_kind_of_status,
    retry_after_seconds,
)
from pastcast.validation import first_problem


class PolymarketError(FieldError):
    """A failed request or malformed response; names the endpoint, the record and the field. Its
    own kind of ``FieldError``: the callers that recover from it tell it apart."""

    def __init__(self, reason: str, field: str = "") -> None:
        super().__init__(field, reason)


class PolymarketClient:
    """Minimal Gamma + CLOB client with timeouts, retried as ``pastcast.retrying`` retries."""

    def __init__(
        self,
        gamma_url: str = "https://gamma-api.polymarket.com",
        clob_url: str = "https://clob.polymarket.com",
        data_url: str = "https://data-api.polymarket.com",
        *,
        retries: int = 4,
        backoff_s: float = 0.5,
        window_days: int = 14,
        trade_page: int = 500,
        max_trade_offset: int = 10_000,
    ) -> None:
        self.gamma_url = gamma_url.rstrip("/")
        self.clob_url = clob_url.rstrip("/")
        self.data_url = data_url.rstrip("/")
        self.trade_page, self.max_trade_offset = trade_page, max_trade_offset
        self.retry = RetryPolicy(max_retries=retries, base_delay_s=backoff_s, max_retry_after_s=60)
        self.window_days = window_days
        self._http = httpx.Client(timeout=30.0)

    def __enter__(self) -> PolymarketClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self._http.close()

    def _get(self, url: str, params: dict[str, Any]) -> Any:
        def attempt() -> httpx.Response:
            try:
                resp = self._http.get(url, params=params)
            except httpx.TransportError as exc:
                raise ProviderFailure(f"{type(exc).__name__}: {exc}", kind="connection") from None
            if resp.status_code != 200:
                kind = failure_kind_of_status(resp.status_code)
                wait = retry_after_seconds(resp.headers)
                raise ProviderFailure(f"HTTP {resp.status_code}", kind=kind, retry_after=wait)
            return resp

        try:
            return call_with_retries(attempt, self.retry).json()
        except ProviderFailure as exc:
            raise PolymarketError(f"GET {url} {params}: {exc}") from None
        except json.JSONDecodeError:
            raise PolymarketError(f"GET {url} {params}: response is not JSON") from None

    def iter_events(
        self,
        page_size: int = 100,
        *,
        closed: bool = True,
        order: str | None = None,
        ascending: bool | None = None,
    ) -> Iterator[tuple[str, dict[str, Any]]]:
        """Events with nested markets, paged by limit/offset; yields (where, event). ``order``
        is a Gamma ordering field (``volume24hr``: the trending order, with ``ascending``
        False), ``closed`` False lists the open events a live round is curated from."""
        query: dict[str, Any] = {"closed": "true" if closed else "false"}
        if order is not None:
            query["order"] = order
        if ascending is not None:
            query["ascending"] = "true" if ascending else "false"
        for offset, page in self._pages("events", query, page_size):
            for i, ev in enumerate(page):
                yield f"gamma event {ev.get('id')!r} (offset {offset + i})", ev

    def _pages(
        self, path: str, query: dict[str, Any], page_size: int, max_pages: int | None = None
    ) -> Iterator[tuple[int, list[dict[str, Any]]]]:
        """(offset, page) of a Gamma listing paged by limit/offset, up to the first short page
        (or ``max_pages`` pages)."""
        offset = 0
        while max_pages is None or offset < max_pages * page_size:
            params = {**query, "limit": page_size, "offset": offset}
            page = self._get(f"{self.gamma_url}/{path}", params)
            if not isinstance(page, list) or not all(isinstance(x, dict) for x in page):
                raise PolymarketError(f"GET /{path} offset={offset}: expected a list of objects")
            yield offset, page
            if len(page) < page_size:
                return
            offset += len(page)

    def open_markets(self, end_min: datetime, end_max: datetime) -> list[dict[str, Any]]:
        """Open (active, not closed) Gamma markets ending in [end_min, end_max], by 24-hour
        volume, paged by limit/offset (at most 10 pages of 100)."""
        query = {
            "active": "true",
            "closed": "false",
            "order": "volume24hr",
            "ascending": "false",
            "end_date_min": end_min.astimezone(UTC).isoformat(),
            "end_date_max": end_max.astimezone(UTC).isoformat(),
        }
        return [m for _, page in self._pages("markets", query, 100, 10) for m in page]

    def market(self, market_id: str) -> dict[str, Any]:
        """One Gamma market by id (its resolution: ``closed``, ``outcomePrices``)."""
        body = self._get(f"{self.gamma_url}/markets/{market_id}", {})
        if not isinstance(body, dict):
            raise PolymarketError(f"GET /markets/{market_id}: expected an object")
        return body

    def best_quotes(self, token: str) -> tuple[float, float] | None:
        """(best bid, best ask) of a token's CLOB order book; None when a side is empty."""
        body = self._get(f"{self.clob_url}/book", {"token_id": token})
        try:
            bids = [float(b["price"]) for b in body.get("bids") or ()]
            asks = [float(a["price"]) for a in body.get("asks") or ()]
        except (AttributeError, KeyError, TypeError, ValueError):
            raise PolymarketError(f"book token {token}: field bids/asks: malformed") from None
        return (max(bids), min(asks)) if bids and asks else None

    def _history(self, token: str, start: int, end: int, fidelity: int) -> list[tuple[int, float]]:
        out: list[tuple[int, float]] = []
        step = self.window_days * 86400
        for lo in range(start, end, step):
            params = {
                "market": token,
                "startTs": lo,
                "endTs": min(end, lo + step),
                "fidelity": fidelity,
            }
            body = self._get(f"{self.clob_url}/prices-history", params)
            out += price_observations(body, f"prices-history token {token}")
        return out

    def price_history(
        self, token: str, start: datetime | int, end: datetime | int, fidelity: int = 60
    ) -> list[tuple[int, float]]:
        """Price observations of ``token`` in [start, end) (datetimes or unix seconds) at
        ``fidelity`` minutes; the default hourly series is retried at daily fidelity when
        empty."""
        s, e = (int(t.timestamp()) if isinstance(t, datetime) else t for t in (start, end))
        if e <= s:
            return []
        obs = self._history(token, s, e, fidelity)
        if not obs and fidelity == 60:
            obs = self._history(token, s, e, fidelity=1440)
        return sorted({t: p for t, p in obs if s <= t < e}.items())

    def _trade_page(self, condition_id: str, offset: int, window: tuple[int, int] | None) -> Any:
        params: dict[str, Any] = {
            "market": condition_id,
            "limit": self.trade_page,
            "offset": offset,
            "takerOnly": "true",
        }
        if window is not None:
            params["start"], params["end"] = window
        page = self._get(f"{self.data_url}/trades", params)
        if not isinstance(page, list):
            raise PolymarketError(
                f"GET /trades market {condition_id} offset={offset}: expected a JSON list"
            )
        return trade_rows(page, f"trades market {condition_id}", offset)

    def book(self, token: str) -> dict[str, Any]:
        """The order book of ``token`` now (``GET /book?token_id=``): the raw object with its
        ``bids``, ``asks`` and ``timestamp`` (milliseconds), for ``book_quote`` to read."""
        body = self._get(f"{self.clob_url}/book", {"token_id": token})
        if not isinstance(body, dict):
            raise PolymarketError(f"GET /book token {token}: expected a JSON object")
        return body

    def trades(
        self, condition_id: str, start: int | None = None, end: int | None = None
    ) -> tuple[list[tuple[int, float]], bool]:
        """(timestamp, shares) of every trade of a market in [start, end] (unix seconds, both
        inclusive, as the feed reads them), and whether the history is incomplete.

        The feed refuses offsets past its cap. Where a window's trades reach the cap, the
        newest ones read so far are kept and the window narrows to end at the oldest of them
        (the feed is newest first), which has its own offset budget; the history is cut short
        only without a window, or when one second holds more trades than the cap reaches.
        """
        window = None if start is None or end is None else (start, end)
        out: list[tuple[int, float]] = []
        while True:
            got: list[tuple[int, float]] = []
            offset = 0
            while True:
                if offset > self.max_trade_offset:
                    break
                page = self._trade_page(condition_id, offset, window)
                got += page
                if len(page) < self.trade_page:
                    return out + got, False
                offset += len(page)
            if window is None or not got:
                return out + got, True
            oldest = min(ts for ts, _ in got)
            if oldest >= window[1]:  # one second beyond the cap: nothing left to narrow
                return out + got, True
            # trades at ``oldest`` may continue past the cap: read that second again
            out += [(ts, size) for ts, size in got if ts > oldest]
            window = (window[0], oldest)


def price_observations(body: Any, where: str) -> list[tuple[int, float]]:
    """The (t, p) observations of a ``prices-history`` reply, each p in [0, 1]."""
    hist = body.get("history") if isinstance(body, dict) else None
    if not isinstance(hist, list):
        raise PolymarketError(f"{where}: field history: not a list")
    out = []
    for j, obs in enumerate(hist):
        try:
            t, p = int(obs["t"]), float(obs["p"])
        except (KeyError, TypeError, ValueError):
            raise PolymarketError(f"{where} [{j}]: field t/p: bad observation {obs!r}") from None
        if not 0.0 <= p <= 1.0:
            raise PolymarketError(f"{where} [{j}]: field p: {p}")
        out.append((t, p))
    return out


def trade_rows(rows: list[Any], where: str, first: int = 0) -> list[tuple[int, float]]:
    """The (timestamp, shares) of trade objects (``first``: the index of the first)."""
    out = []
    for j, trade in enumerate(rows, start=first):
        try:
            ts, size = int(trade["timestamp"]), float(trade["size"])
        except (KeyError, TypeError, ValueError):
            raise PolymarketError(
                f"{where} [{j}]: field timestamp/size: bad trade {trade!r}"
            ) from None
        if size < 0:
            raise PolymarketError(f"{where} [{j}]: field size: {size}")
        out.append((ts, size))
    return out


def book_quote(book: dict[str, Any], where: str) -> tuple[float, float, datetime]:
    """(best bid, best ask, observed at) of a CLOB book object; the levels' order is not
    relied on (best bid = highest, best ask = lowest price)."""
    sides = []
    for name in ("bids", "asks"):
        levels = book.get(name)
        if not isinstance(levels, list) or not levels:
            raise PolymarketError(f"{where}: field {name}: expected a non-empty list of levels")
        try:
            prices = [float(level["price"]) for level in levels if float(level["size"]) > 0]
        except (KeyError, TypeError, ValueError):
            raise PolymarketError(f"{where}: field {name}: bad level (price, size)") from None
        if not prices or not all(0.0 <= p <= 1.0 for p in prices):
            raise PolymarketError(f"{where}: field {name}: no level priced in [0, 1]")
        sides.append(max(prices) if name == "bids" else min(prices))
    try:
        observed = datetime.fromtimestamp(int(book["timestamp"]) / 1000, UTC)
    except (KeyError, TypeError, ValueError, OverflowError, OSError):
        raise PolymarketError(f"{where}: field timestamp: expected milliseconds") from None
    if sides[0] > sides[1]:
        raise PolymarketError(f"{where}: field bids/asks: crossed book {sides[0]} > {sides[1]}")
    return sides[0], sides[1], observed


def daily_activity(trades: list[tuple[int, float]]) -> dict[date, DayActivity]:
    """Trades and share volume per UTC day."""
    counts: Counter[date] = Counter()
    volume: dict[date, float] = defaultdict(float)
    for ts, size in trades:
        day = datetime.fromtimestamp(ts, UTC).date()
        counts[day] += 1
        volume[day] += size
    return {d: DayActivity(trades=counts[d], volume=volume[d]) for d in sorted(counts)}


def _json_list(market: dict[str, Any], name: str, where: str) -> list[Any]:
    raw = market.get(name)
    try:
        value = safejson.loads(raw) if isinstance(raw, str) else raw
    except json.JSONDecodeError:
        raise PolymarketError(f"{where}: field {name}: not a JSON-encoded list") from None
    if not isinstance(value, list):
        raise PolymarketError(f"{where}: field {name}: not a list")
    return value


def _ts(obj: dict[str, Any], name: str, where: str) -> datetime | None:
    raw = obj.get(name)
    if not raw:
        return None
    try:
        return parse_timestamp(str(raw))
    except ValueError as exc:
        raise PolymarketError(f"{where}: field {name}: {exc}") from None


def _leg(market: dict[str, Any], where: str) -> dict[str, Any]:
    """Token, terminal YES price and times of one market, the YES index looked up."""
    mwhere = f"{where} market {market.get('id')!r}"
    outcomes = _json_list(market, "outcomes", mwhere)
    prices = _json_list(market, "outcomePrices", mwhere)
    tokens = _json_list(market, "clobTokenIds", mwhere)
    if "Yes" not in outcomes:
        return {"skip": "outcomes are not Yes/No"}
    k = outcomes.index("Yes")
    if not (len(prices) == len(tokens) == len(outcomes)):
        raise PolymarketError(f"{mwhere}: field outcomePrices/clobTokenIds: not index-aligned")
    try:
        final = float(prices[k])
    except (TypeError, ValueError):
        raise PolymarketError(f"{mwhere}: field outcomePrices: not a number") from None
    if not 0.0 <= final <= 1.0:  # NaN, an infinity, a negative price: no outcome to read
        return {"skip": "terminal price is not a probability"}
    return {
        "token": str(tokens[k]),
        "final": final,
        "title": str(market.get("groupItemTitle") or market.get("question") or ""),
        "start": _ts(market, "startDate", mwhere),
        "end": _ts(market, "endDate", mwhere) or _ts(market, "closedTime", mwhere),
        "closed": _ts(market, "closedTime", mwhere),
        "status": market.get("umaResolutionStatus"),
        "condition": str(market.get("conditionId") or ""),
    }


def build_event(
    gamma_event: dict[str, Any], where: str = "gamma event"
) -> tuple[Event, Resolution, list[dict[str, Any]]] | str:
    """The event, its resolution and its legs; or the reason the layout is excluded."""
    markets = gamma_event.get("markets")
    if not isinstance(markets, list) or not markets:
        return "no markets"
    neg_risk = bool(gamma_event.get("negRisk")) or any(bool(m.get("negRisk")) for m in markets)
    if len(markets) == 1 and not neg_risk:
        kind = "binary"
    elif neg_risk and len(markets) >= 2:
        kind = "multi"
    else:
        return "excluded layout"
    legs = [_leg(m, where) for m in markets]
    skipped = next((leg["skip"] for leg in legs if "skip" in leg), None)
    if skipped is not None:
        return str(skipped)
    if any(leg["status"] not in (None, "resolved") for leg in legs):
        return "not resolved by the oracle"
    starts = [leg["start"] for leg in legs if leg["start"]]
    ends = [leg["end"] for leg in legs if leg["end"]]
    if not starts or not ends:
        return "missing start or end date"
    if kind == "binary":
        final = legs[0]["final"]
        if final >= 0.99:
            label, winner = "Yes", legs[0]
        elif final <= 0.01:
            label, winner = "No", legs[0]
        else:
            return "terminal price not resolved"
        labels: tuple[str, ...] = BINARY_LABELS
        title = str(markets[0].get("question") or gamma_event.get("title") or "")
    else:
        labels = tuple(leg["title"] for leg in legs)
        if len(set(labels)) != len(labels) or not all(labels):
            return "option titles missing or not unique"
        winners = [leg for leg in legs if leg["final"] >= 0.99]
        if len(winners) != 1:
            return "not exactly one YES option"
        winner, label = winners[0], winners[0]["title"]
        title = str(gamma_event.get("title") or "")
    close = max(ends)
    resolved_at = min(winner["closed"] or close, close)
    eid = f"polymarket:{gamma_event.get('id')}"
    slug = gamma_event.get("slug")
    desc = gamma_event.get("description") or markets[0].get("description") or ""
    raw_tags = gamma_event.get("tags")
    tags: list[Any] = raw_tags if isinstance(raw_tags, list) else []
    labels_of_tags = tuple(
        str(t.get("label")) for t in tags if isinstance(t, dict) and t.get("label")
    )
    try:
        event = Event(
            id=eid,
            title=title or eid,
            description=str(desc),
            kind="binary" if kind == "binary" else "multi",
            labels=labels,
            category=categorize(title or eid, str(desc), labels_of_tags),
            tags=labels_of_tags,
            open_time=min(starts),
            close_time=max(close, min(starts)),
            source="polymarket",
            url=f"https://polymarket.com/event/{slug}" if slug else None,
        )
    except ValidationError as err:
        raise PolymarketError(first_problem(err, where)) from None
    legs = [{**leg, "winner": leg is winner} for leg in legs]
    return event, Resolution(event_id=eid, label=label, resolved_at=resolved_at), legs


class OpenMarket(Record):
    """An open binary Gamma market as the live arena discovers it (no price, no outcome)."""

    market_id: str = Field(min_length=1)
    condition_id: str = Field(min_length=1)
    question: str = ""
    category: str = ""
    yes_token: str = Field(min_length=1)
    yes_index: int = Field(ge=0, le=1)
    start_date: UtcDatetime | None = None
    end_date: UtcDatetime
    volume_24h: float = 0.0
    liquidity: float = 0.0


def _number_field(market: dict[str, Any], *names: str) -> float:
    for name in names:
        try:
            return float(market[name])
        except (KeyError, TypeError, ValueError):
            continue
    return 0.0


def open_market(market: dict[str, Any]) -> OpenMarket | None:
    """The Gamma market as an ``OpenMarket`` when it is an open Yes/No market with an end date
    (None otherwise); ``PolymarketError`` names the market and field of a malformed one."""
    where = f"gamma market {market.get('id')!r}"
    if market.get("closed") is True or market.get("active") is False:
        return None
    outcomes = [str(o).strip().lower() for o in _json_list(market, "outcomes", where)]
    if sorted(outcomes) != ["no", "yes"]:
        return None
    tokens = _json_list(market, "clobTokenIds", where)
    end = _ts(market, "endDate", where)
    if len(tokens) != 2 or end is None:
        return None
    yes = outcomes.index("yes")
    try:
        return OpenMarket(
            market_id=str(market.get("id")),
            condition_id=str(market.get("conditionId") or ""),
            question=str(market.get("question") or ""),
            category=categorize(
                str(market.get("question") or ""),
                tags=[str(market["category"])] if market.get("category") else [],
            ),
            yes_token=str(tokens[yes]),
            yes_index=yes,
            start_date=_ts(market, "startDate", where),
            end_date=end,
            volume_24h=_number_field(market, "volume24hr", "volume24hrClob"),
            liquidity=_number_field(market, "liquidityNum", "liquidity"),
        )
    except ValidationError as exc:
        raise PolymarketError(f"{where}: {first_problem(exc)}") from None


def resolution_payouts(market: dict[str, Any]) -> tuple[tuple[int, ...], datetime] | None:
    """A closed, resolved Gamma market's payout numerators in outcome order (the conditional
    tokens' slots: 1 for a winning outcome, equal shares when it was voided) and when it closed;
    None while it is open or its resolution is pending."""
    where = f"gamma market {market.get('id')!r}"
    if market.get("closed") is not True:
        return None
    status = market.get("umaResolutionStatus")
    if status not in (None, "resolved"):
        return None
    try:
        prices = [float(p) for p in _json_list(market, "outcomePrices", where)]
    except (TypeError, ValueError):
        raise PolymarketError(f"{where}: field outcomePrices: not numbers") from None
    closed = _ts(market, "closedTime", where) or _ts(market, "endDate", where)
    if closed is None or len(prices) < 2:
        return None
    if all(p in (0.0, 1.0) for p in prices) and sum(prices) == 1.0:
        return tuple(int(p) for p in prices), closed
    if all(abs(p - prices[0]) < 1e-9 for p in prices):  # voided: every slot pays the same
        return tuple(1 for _ in prices), closed
    return None


def daily_yes_beliefs(event_id: str, obs: list[tuple[int, float]]) -> tuple[DailyBelief, ...]:
    """A binary market's daily beliefs from YES-price observations (the UTC-day means)."""
    return tuple(
        DailyBelief(event_id=event_id, day=d, probs={"Yes": p, "No": 1.0 - p})
        for d, p in sorted(_daily_means(obs).items())
    )


def _daily_means(obs: list[tuple[int, float]]) -> dict[date, float]:
    acc: dict[date, list[float]] = defaultdict(list)
    for t, p in obs:
        acc[datetime.fromtimestamp(t, UTC).date()].append(p)
    return {d: sum(v) / len(v) for d, v in acc.items()}


def fetch_histories(
    client: PolymarketClient,
    *,
    page_size: int = 100,
    max_events: int | None = None,
    trades: bool = True,
    tokens: dict[str, dict[str, str]] | None = None,
) -> tuple[list[MarketHistory], dict[str, int]]:
    """Resolved events with daily beliefs (and, with ``trades``, daily trading activity on the
    realised leg), and counts of what was excluded and why. ``tokens``, where given, is filled
    with each binary event's YES token and condition id (``{"token", "condition"}``), what
    deadline prices and volumes are later read by."""
    out: list[MarketHistory] = []
    notes: Counter[str] = Counter()
    for n, (where, gev) in enumerate(client.iter_events(page_size)):
        if max_events is not None and n >= max_events:
            break
        built = build_event(gev, where)
        if isinstance(built, str):
            notes[f"excluded: {built}"] += 1
            continue
        event, resolution, legs = built
        if tokens is not None and event.kind == "binary":
            tokens[event.id] = {"token": legs[0]["token"], "condition": legs[0]["condition"]}
        span = (event.open_time - timedelta(days=1), resolution.resolved_at)
        series = {
            leg["title"] if event.kind == "multi" else "Yes": _daily_means(
                client.price_history(leg["token"], *span)
            )
            for leg in legs
        }
        beliefs = []
        for day in sorted({d for s in series.values() for d in s}):
            priced = {k: s[day] for k, s in series.items() if day in s}
            if event.kind == "binary":
                probs = {"Yes": priced["Yes"], "No": 1.0 - priced["Yes"]}
            else:
                total = sum(priced.values())
                if total <= 0:
                    continue
                probs = {k: v / total for k, v in priced.items()}
            beliefs.append(DailyBelief(event_id=event.id, day=day, probs=probs))
        # Daily activity on the realised outcome's leg over the span; None (counted) if unknown.
        activity = None
        condition = next(leg["condition"] for leg in legs if leg["winner"])
        if trades and not condition:
            notes["trades: no conditionId, activity unknown"] += 1
        elif trades:
            got, cut = client.trades(condition, int(span[0].timestamp()), int(span[1].timestamp()))
            notes["trades: feed cut short, activity unknown" if cut else "trades: fetched"] += 1
            activity = None if cut else daily_activity(got)
        out.append(MarketHistory(event, resolution, guard_beliefs(beliefs, resolution), activity))
        notes[f"imported: {event.kind}"] += 1
    return out, dict(notes)
