"""Live feeds: nothing a feed dates, backdates or re-publishes enters a cutoff earlier than when
pastcast first saw it, and hostile servers and crashes are one error line or a retry."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pastcast.app import build_corpus, fetch_feeds, open_corpus
from pastcast.cli._app import app
from pastcast.corpus.feeds import SpoolBusy, fetch_round
from pastcast.corpus.feeds._config import FeedConfig, FeedsFile
from pastcast.corpus.feeds._round import date_item
from pastcast.corpus.feeds._spool import SpoolWriter
from pastcast.corpus.feeds._xml import parse_feed
from pastcast.corpus.sources import FeedItem, read_feed_spool
from pastcast.corpus.sources._feed import spool_documents
from pastcast.cutoff import is_visible
from pastcast.errors import FieldError

T0 = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
SRC = str(Path(__file__).resolve().parents[2] / "src")


class Clock:
    """An injectable clock: fetch time moves only when the test says so."""

    def __init__(self, now: datetime = T0) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


@dataclass
class Reply:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    trickle: float = 0.0  # seconds between bytes
    length: bool = True  # send Content-Length


class FeedServer:
    """A loopback HTTP server: each path answers its queued replies in turn (the last one
    repeats); a reply with an ETag answers 304 to a request that names it."""

    def __init__(self) -> None:
        self.routes: dict[str, list[Reply]] = {}
        self.requests: list[tuple[str, dict[str, str]]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *_: object) -> None:
                pass

            def do_GET(self) -> None:
                server.requests.append((self.path, dict(self.headers.items())))
                queue = server.routes.get(self.path, [Reply(404)])
                reply = queue.pop(0) if len(queue) > 1 else queue[0]
                time.sleep(reply.delay)
                etag = reply.headers.get("ETag")
                if etag and self.headers.get("If-None-Match") == etag:
                    self.send_response(304)
                    self.end_headers()
                    return
                self.send_response(reply.status)
                for k, v in reply.headers.items():
                    self.send_header(k, v)
                if reply.length:
                    self.send_header("Content-Length", str(len(reply.body)))
                self.end_headers()
                try:
                    if reply.trickle:
                        for i in range(len(reply.body)):
                            self.wfile.write(reply.body[i : i + 1])
                            self.wfile.flush()
                            time.sleep(reply.trickle)
                    else:
                        self.wfile.write(reply.body)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}{path}"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server() -> Iterator[FeedServer]:
    s = FeedServer()
    yield s
    s.close()


def rfc822(when: datetime) -> str:
    return when.strftime("%a, %d %b %Y %H:%M:%S GMT")


def rss(*items: tuple[str, str, str, datetime | None]) -> bytes:
    """RSS 2.0 of (guid, title, text, pubDate) items."""
    parts = []
    for guid, title, text, when in items:
        date = f"<pubDate>{rfc822(when)}</pubDate>" if when else ""
        parts.append(
            f"<item><guid>{guid}</guid><title>{title}</title>"
            f"<description>{text}</description>{date}</item>"
        )
    return (
        '<?xml version="1.0"?><rss version="2.0"><channel><title>t</title>'
        + "".join(parts)
        + "</channel></rss>"
    ).encode()


def feeds(*configs: FeedConfig) -> FeedsFile:
    return FeedsFile(feed=configs)


def url_feed(server: FeedServer, path: str = "/rss", **options: object) -> FeedConfig:
    values: dict[str, object] = {"name": "wire", "url": server.url(path), "backoff_s": 0.0}
    return FeedConfig.model_validate(values | options)


def no_sleep(_: float) -> None:
    pass


def fetch(
    spool: Path, config: FeedsFile, clock: Callable[[], datetime] = Clock()
) -> tuple[list[str], list[FeedItem]]:
    spool.mkdir(exist_ok=True)
    round_ = fetch_round(config, spool, clock=clock, sleep=no_sleep)
    return [f.line() for f in round_.feeds], list(read_feed_spool(spool))


def visible_ids(spool: Path, cutoff: datetime) -> set[str]:
    return {d.id for d in spool_documents(spool) if is_visible(d.timestamp, cutoff)}


# -- the dating rule ------------------------------------------------------------------------


def test_dating_rule() -> None:
    past, future = T0 - timedelta(days=3), T0 + timedelta(hours=1)
    assert date_item(past, None, T0) == (past, "published", False)
    assert date_item(None, past, T0) == (past, "updated", False)
    assert date_item(future, None, T0) == (T0, "first_seen", True)
    assert date_item(None, None, T0) == (T0, "first_seen", False)
    assert date_item(T0, None, T0) == (T0, "published", False)


def test_future_and_after_fetch_dates_never_reach_earlier_cutoffs(
    server: FeedServer, tmp_path: Path
) -> None:
    """Built into a real index and searched: between the claimed date's side and the fetch the
    item is not found; after the fetch it is."""
    after_fetch = T0 + timedelta(hours=6)
    far = datetime(2035, 1, 1, tzinfo=UTC)
    body = rss(
        ("g-after", "Harbour zeppelin", "zeppelin moored early", after_fetch),
        ("g-far", "Orbital quokka", "quokka in orbit", far),
        ("g-none", "Undated walrus", "walrus without a date", None),
    )
    server.routes["/rss"] = [Reply(body=body)]
    spool = tmp_path / "spool"
    lines, items = fetch(spool, feeds(url_feed(server)))
    assert lines == [
        "wire: 3 items, 3 new, 0 new versions, 0 seen before, 2 clamped to fetch time, "
        "1 dated by fetch time"
    ]
    assert {i.key: i.timestamp for i in items} == {"g-after": T0, "g-far": T0, "g-none": T0}
    assert all(i.first_seen == T0 and i.date_provenance == "first_seen" for i in items)
    assert {i.key: i.published for i in items}["g-far"] == far  # the claim is kept as given

    built = build_corpus(f"feed:{spool}", out=tmp_path / "index")
    assert built.indexed == 3
    corpus = open_corpus(tmp_path / "index")
    try:
        for word in ("zeppelin", "quokka", "walrus"):
            before = corpus.search(word, as_of=T0 - timedelta(microseconds=1), k=5)
            at_fetch = corpus.search(word, as_of=T0, k=5)  # strictly before: not yet
            after = corpus.search(word, as_of=T0 + timedelta(seconds=1), k=5)
            assert (before, at_fetch, len(after)) == ([], [], 1), word
    finally:
        corpus.close()


def test_republished_guid_with_backdated_date_stays_where_it_was(
    server: FeedServer, tmp_path: Path
) -> None:
    published = T0 - timedelta(days=1)
    backdated = T0 - timedelta(days=30)
    spool = tmp_path / "spool"
    server.routes["/rss"] = [Reply(body=rss(("g1", "Budget", "budget passed", published)))]
    fetch(spool, feeds(url_feed(server)), Clock(T0))
    # The same guid again, same text, now claiming a month earlier: nothing new is written.
    t1 = T0 + timedelta(days=2)
    server.routes["/rss"] = [Reply(body=rss(("g1", "Budget", "budget passed", backdated)))]
    lines, items = fetch(spool, feeds(url_feed(server)), Clock(t1))
    assert "0 new, 0 new versions, 1 seen before" in lines[0]
    assert [(i.timestamp, i.first_seen) for i in items] == [(published, T0)]
    assert visible_ids(spool, published) == set()  # not moved to the backdated claim
    # The same guid with changed text, still backdated: a new version dated by its own sight.
    t2 = T0 + timedelta(days=5)
    server.routes["/rss"] = [
        Reply(body=rss(("g1", "Budget", "budget repealed secretly", backdated)))
    ]
    lines, items = fetch(spool, feeds(url_feed(server)), Clock(t2))
    assert "0 new, 1 new versions" in lines[0]
    edit = items[-1]
    assert (edit.version, edit.timestamp, edit.first_seen) == (2, t2, t2)
    assert edit.id.endswith(".v2") and edit.date_provenance == "first_seen"
    for cutoff in (backdated + timedelta(hours=1), published + timedelta(hours=1), t2):
        assert edit.id not in visible_ids(spool, cutoff)
    assert edit.id in visible_ids(spool, t2 + timedelta(microseconds=1))


def test_naive_dating_is_caught(
    server: FeedServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The hostile checks fail against dating by the feed's claim alone: the spool refuses the
    leaked record outright."""

    def naive(
        published: datetime | None, updated: datetime | None, first_seen: datetime
    ) -> tuple[datetime, str, bool]:
        return published or first_seen, "published", False

    monkeypatch.setattr("pastcast.corpus.feeds._round.date_item", naive)
    server.routes["/rss"] = [Reply(body=rss(("g", "x", "y", T0 + timedelta(days=1))))]
    with pytest.raises(ValueError, match="timestamp is after first_seen"):
        fetch(tmp_path / "spool", feeds(url_feed(server)))


def test_clock_stepped_back_cannot_date_new_items_before_old_ones(
    server: FeedServer, tmp_path: Path
) -> None:
    spool = tmp_path / "spool"
    server.routes["/rss"] = [Reply(body=rss(("a", "a", "first", None)))]
    fetch(spool, feeds(url_feed(server)), Clock(T0))
    server.routes["/rss"] = [Reply(body=rss(("a", "a", "first", None), ("b", "b", "x", None)))]
    _, items = fetch(spool, feeds(url_feed(server)), Clock(T0 - timedelta(days=9)))
    assert items[-1].first_seen == T0


# -- hostile servers and bodies ---------------------------------------------------------------

LAUGHS = b"""<?xml version="1.0"?>
<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
<!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
<!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
<!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
<!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
<!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
<!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">]>
<rss version="2.0"><channel><item><guid>g</guid><title>&lol9;</title></item></channel></rss>"""

EXTERNAL = b"""<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]>
<rss version="2.0"><channel><item><guid>g</guid><title>&x;</title></item></channel></rss>"""


@pytest.mark.parametrize(
    ("reply", "options", "error"),
    [
        (Reply(body=b"<rss><channel><item>"), {}, "malformed XML"),
        (Reply(body=b"{}"), {}, "malformed XML"),
        (Reply(body=b"<html></html>"), {}, "not an RSS 2.0 or Atom feed"),
        (Reply(body=LAUGHS), {}, "document type declaration"),
        (Reply(body=EXTERNAL), {}, "document type declaration"),
        (Reply(body=b"x" * 5000), {"max_bytes": 1000}, "body of 5000 bytes, over max_bytes=1000"),
        (Reply(body=b"x" * 5000, length=False), {"max_bytes": 1000}, "over max_bytes=1000"),
        (Reply(delay=3.0, body=rss()), {"timeout_s": 0.3, "retries": 0}, "timed out"),
        (Reply(body=rss() * 100, trickle=0.01), {"timeout_s": 0.3, "retries": 0}, "within"),
        (Reply(status=404), {}, "HTTP 404"),
        (Reply(status=500), {"retries": 2}, "HTTP 500 Internal Server Error (3 attempts)"),
    ],
)
def test_hostile_bodies_are_one_error_line(
    server: FeedServer, tmp_path: Path, reply: Reply, options: dict[str, object], error: str
) -> None:
    server.routes["/rss"] = [reply]
    started = time.monotonic()
    lines, items = fetch(tmp_path / "spool", feeds(url_feed(server, **options)))
    assert time.monotonic() - started < 2.5  # no hang: the limits hold
    assert len(lines) == 1 and lines[0].startswith("wire: error: ") and error in lines[0]
    assert "\n" not in lines[0] and items == []


def test_one_bad_feed_does_not_stop_the_others(server: FeedServer, tmp_path: Path) -> None:
    server.routes["/bad"] = [Reply(body=LAUGHS)]
    server.routes["/good"] = [Reply(body=rss(("g", "t", "fine", T0 - timedelta(hours=1))))]
    config = feeds(url_feed(server, "/bad", name="bad"), url_feed(server, "/good", name="good"))
    lines, items = fetch(tmp_path / "spool", config)
    assert lines[0].startswith("bad: error:") and lines[1].startswith("good: 1 items, 1 new")
    assert [i.feed for i in items] == ["good"]


def test_500_then_success_is_retried_with_backoff(server: FeedServer, tmp_path: Path) -> None:
    server.routes["/rss"] = [Reply(500), Reply(503), Reply(body=rss(("g", "t", "x", None)))]
    waits: list[float] = []
    spool = tmp_path / "spool"
    spool.mkdir()
    config = feeds(url_feed(server, retries=3, backoff_s=0.5))
    report = fetch_round(config, spool, clock=Clock(), sleep=waits.append).feeds[0]
    assert (report.status, report.attempts, report.new, waits) == ("ok", 3, 1, [0.5, 1.0])


def test_conditional_get_and_304_across_restarts(server: FeedServer, tmp_path: Path) -> None:
    body = rss(("g", "t", "x", None))
    headers = {"ETag": '"v1"', "Last-Modified": "Mon, 01 Jun 2026 11:00:00 GMT"}
    server.routes["/rss"] = [Reply(body=body, headers=headers)]
    spool = tmp_path / "spool"
    fetch(spool, feeds(url_feed(server)))
    lines, items = fetch(spool, feeds(url_feed(server)))  # a new round: state read from disk
    assert lines == ["wire: not modified"] and len(items) == 1
    sent = server.requests[-1][1]
    assert sent["If-None-Match"] == '"v1"'
    assert sent["If-Modified-Since"] == "Mon, 01 Jun 2026 11:00:00 GMT"
    # After a 304 the validators are kept: the next round is conditional again.
    fetch(spool, feeds(url_feed(server)))
    assert server.requests[-1][1]["If-None-Match"] == '"v1"'


# -- crashes and restarts ---------------------------------------------------------------------


def test_partial_line_from_a_crash_is_never_read_and_is_repaired(
    server: FeedServer, tmp_path: Path
) -> None:
    server.routes["/rss"] = [Reply(body=rss(("a", "a", "alpha", None), ("b", "b", "beta", None)))]
    spool = tmp_path / "spool"
    _, items = fetch(spool, feeds(url_feed(server)))
    (day,) = spool.glob("items-*.jsonl")
    whole = day.read_bytes()
    # A crash in the middle of appending item b: its line is cut short.
    cut = whole[: len(whole) - 40]
    day.write_bytes(cut)
    assert [i.key for i in read_feed_spool(spool)] == ["a"]
    assert [d.id for d in spool_documents(spool)] == [items[0].id]
    _, again = fetch(spool, feeds(url_feed(server)))
    assert [i.key for i in again] == ["a", "b"]
    assert day.read_bytes().count(b"\n") == 2 and day.read_bytes().endswith(b"\n")


def test_crash_before_the_state_is_saved_loses_and_duplicates_nothing(
    server: FeedServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server.routes["/rss"] = [Reply(body=rss(("a", "a", "alpha", None)), headers={"ETag": "e"})]
    spool = tmp_path / "spool"

    def crash(self: SpoolWriter, state: object) -> None:
        raise KeyboardInterrupt

    with monkeypatch.context() as m:
        m.setattr(SpoolWriter, "save_state", crash)
        with pytest.raises(KeyboardInterrupt):
            fetch(spool, feeds(url_feed(server)))
    lines, items = fetch(spool, feeds(url_feed(server)))  # no validator: a full fetch
    assert "1 seen before" in lines[0] and [i.key for i in items] == ["a"]


def test_restart_after_kill_mid_fetch(server: FeedServer, tmp_path: Path) -> None:
    """A real process killed while a slow feed is being received, then a restart: every item
    once."""
    first = rss(*((f"a{i}", f"t{i}", f"alpha {i}", None) for i in range(5)))
    server.routes["/fast"] = [Reply(body=first)]
    server.routes["/slow"] = [Reply(body=rss(("s", "s", "slow", None)) * 50, trickle=0.05)]
    config = tmp_path / "feeds.toml"
    config.write_text(
        f'[[feed]]\nname = "fast"\nurl = "{server.url("/fast")}"\n'
        f'[[feed]]\nname = "slow"\nurl = "{server.url("/slow")}"\ntimeout_s = 60\n'
    )
    spool = tmp_path / "spool"
    code = textwrap.dedent(f"""
        from pastcast.app import fetch_feeds
        fetch_feeds({str(config)!r}, {str(spool)!r})
    """)
    env = dict(os.environ, PYTHONPATH=SRC)
    proc = subprocess.Popen([sys.executable, "-c", code], env=env)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not list(spool.glob("items-*.jsonl")):
            time.sleep(0.05)
        time.sleep(0.2)  # inside the slow feed's body
        assert proc.poll() is None, "the fetch ended before it could be killed"
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait()
    assert len(list(read_feed_spool(spool))) == 5
    server.routes["/slow"] = [Reply(body=rss(("s", "s", "slow", None)))]
    fetch_feeds(config, spool, clock=Clock())
    fetch_feeds(config, spool, clock=Clock())
    keys = [(i.feed, i.key) for i in read_feed_spool(spool)]
    assert sorted(keys) == sorted({*keys}) and len(keys) == 6


def test_one_writer_at_a_time(tmp_path: Path) -> None:
    with SpoolWriter(tmp_path), pytest.raises(SpoolBusy):
        SpoolWriter(tmp_path)


# -- other inputs -----------------------------------------------------------------------------


def test_atom_published_and_updated() -> None:
    body = b"""<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom">
    <entry><id>urn:1</id><title>One</title><link href="http://x/1"/>
    <updated>2026-05-02T00:00:00Z</updated><published>2026-05-01T08:00:00+02:00</published>
    <content type="html">&lt;b&gt;bold&lt;/b&gt; text</content></entry>
    <entry><id>urn:2</id><title>Two</title><updated>2026-05-03T00:00:00Z</updated>
    <summary>only updated</summary></entry></feed>"""
    one, two = parse_feed(body)
    assert (one.key, one.url, one.text) == ("urn:1", "http://x/1", "bold text")
    assert one.published == datetime(2026, 5, 1, 6, tzinfo=UTC)
    assert (two.published, two.updated) == (None, datetime(2026, 5, 3, tzinfo=UTC))


def test_drop_folder_and_file_feeds(tmp_path: Path) -> None:
    drop = tmp_path / "drop"
    drop.mkdir()
    doc = {"id": "d1", "timestamp": "2026-05-30T00:00:00Z", "title": "T", "text": "dropped"}
    future = doc | {"id": "d2", "timestamp": "2027-01-01T00:00:00Z", "text": "ahead"}
    partial = json.dumps(doc | {"id": "d3", "text": "still being written"})
    (drop / "a.jsonl").write_text(json.dumps(doc) + "\n" + json.dumps(future) + "\n" + partial[:30])
    (tmp_path / "f.xml").write_bytes(rss(("g", "t", "from a file", None)))
    config = feeds(
        FeedConfig(name="drop", folder=drop), FeedConfig(name="file", path=tmp_path / "f.xml")
    )
    lines, items = fetch(tmp_path / "spool", config)
    assert lines[0].startswith("drop: 2 items, 2 new") and "1 clamped" in lines[0]
    assert "1 skipped" in lines[0] and lines[1].startswith("file: 1 items, 1 new")
    by_key = {i.key: i for i in items}
    assert by_key["d1"].timestamp == datetime(2026, 5, 30, tzinfo=UTC)
    assert by_key["d2"].timestamp == T0 and by_key["d2"].clamped
    # The line is finished: read at the next round, dated by that round's fetch.
    (drop / "a.jsonl").write_text(
        json.dumps(doc) + "\n" + json.dumps(future) + "\n" + partial + "\n"
    )
    _, items = fetch(tmp_path / "spool", config, Clock(T0 + timedelta(hours=1)))
    assert [i.key for i in items if i.feed == "drop"] == ["d1", "d2", "d3"]


def test_feed_seen_source_dates_by_first_sight(tmp_path: Path) -> None:
    (tmp_path / "f.xml").write_bytes(rss(("g", "t", "x", T0 - timedelta(days=2))))
    spool = tmp_path / "spool"
    fetch(spool, feeds(FeedConfig(name="file", path=tmp_path / "f.xml")))
    (doc,) = spool_documents(spool, by_first_seen=True)
    assert (doc.timestamp, doc.dated_by) == (T0, "first_seen")
    (doc,) = spool_documents(spool)
    assert (doc.timestamp, doc.dated_by) == (T0 - timedelta(days=2), "published")


def test_app_and_cli_errors(tmp_path: Path) -> None:
    bad = tmp_path / "feeds.toml"
    bad.write_text('[[feed]]\nname = "x"\nurl = "http://a"\npath = "b"\n')
    with pytest.raises(FieldError, match="exactly one of url, path or folder"):
        fetch_feeds(bad, tmp_path / "spool")
    user = tmp_path / "mine"
    user.mkdir()
    (user / "notes.txt").write_text("mine")
    (tmp_path / "f.xml").write_bytes(rss(("g", "t", "x", None)))
    good = tmp_path / "good.toml"
    good.write_text('[[feed]]\nname = "file"\npath = "f.xml"\n')
    with pytest.raises(FieldError, match="was not made by pastcast"):
        fetch_feeds(good, user)
    runner = CliRunner()
    result = runner.invoke(app, ["corpus", "feed", str(bad), "--spool", str(tmp_path / "s")])
    assert result.exit_code == 2 and result.output.count("error:") == 1
    spool = tmp_path / "spool"
    result = runner.invoke(app, ["corpus", "feed", str(good), "--spool", str(spool), "--once"])
    assert result.exit_code == 0, result.output
    assert "1 items written" in result.output and "file: 1 items, 1 new" in result.output
