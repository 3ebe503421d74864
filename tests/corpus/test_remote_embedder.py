"""The OpenAI-compatible embedder against a loopback server in the real API's shape: faults
(429 with Retry-After, 5xx, truncated bodies) are retried until the job completes with every
document embedded exactly once; a stopped or killed job resumes without re-sending the batches
it finished; the key never leaves the request header."""

from __future__ import annotations

import base64
import contextlib
import itertools
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from corpus_synth import START, make_docs
from embedding_server import Reply, embedding_server, vector_of

from pastcast.corpus import open_backend
from pastcast.corpus.dense import resolve_embedder
from pastcast.corpus.embedded import EmbeddedIndex
from pastcast.errors import FieldError
from pastcast.retrying import ProviderFailure, RetryPolicy

faiss = pytest.importorskip("faiss")
from pastcast.corpus.dense import (  # noqa: E402
    DenseIndex,
    RemoteEmbedder,
    embedding_text,
)
from pastcast.corpus.dense._batchlog import LOG_NAME, _records  # noqa: E402


def stored_batches(folder: Path) -> list[int]:
    """The first ordinals of the batches a job's checkpoint ``folder`` holds, in stored order."""
    try:
        data = (folder / LOG_NAME).read_bytes()
    except FileNotFoundError:
        return []
    return [lo for _, lo, _, _ in _records(data)]


FAST = RetryPolicy(max_retries=8, base_delay_s=0.001, max_delay_s=0.01)


def remote(url: str, **options: object) -> RemoteEmbedder:
    args: dict[str, object] = {"batch_size": 16, "concurrency": 4, "retry": FAST, **options}
    return RemoteEmbedder("test-model", base_url=url, **args)  # type: ignore[arg-type]


def unit(text: str, dim: int) -> np.ndarray:  # type: ignore[type-arg]
    v = np.asarray(vector_of(text, dim), dtype=np.float64)
    return v / np.linalg.norm(v)


def texts_of(index: EmbeddedIndex) -> list[str]:
    return [embedding_text(index.read_ordinal(i)) for i in range(len(index))]


def faulty(n: int) -> str | None:
    """A fault on most early requests, of every kind, then fewer."""
    return {0: "429", 1: "500", 2: "truncate", 3: "short", 4: "503"}.get(n % 9 if n < 60 else 99)


def test_a_job_through_faults_embeds_every_document_exactly_once(tmp_path: Path) -> None:
    docs = make_docs(300, seed=31)
    index = EmbeddedIndex.build(docs, tmp_path / "ix")
    with embedding_server(dim=24, faults=faulty) as server:
        dense = DenseIndex(index, remote(server.url))
    texts = texts_of(index)
    assert set(server.failed) == {"429", "500", "truncate", "short", "503"}
    assert all(server.answered[t] == 1 for t in set(texts))  # each answered once, in full
    assert sum(server.answered.values()) == len(texts)
    want = np.stack([unit(t, 24) for t in texts])
    np.testing.assert_allclose(np.asarray(dense._vectors), want, atol=1e-6)
    assert not list((tmp_path / "ix").glob("dense-*.partial"))  # the checkpoint is gone
    stamp = json.loads(next((tmp_path / "ix").glob("dense-*.json")).read_text())
    assert stamp["model"] == "openai-compatible:test-model" and stamp["dim"] == 24
    identity = dense.identity().options
    assert identity["embedder"] == "openai-compatible:test-model"
    assert identity["dim"] == 24 and identity["normalized"] is True


def test_a_stopped_job_resumes_without_resending_finished_batches(tmp_path: Path) -> None:
    docs = make_docs(400, seed=32)
    index = EmbeddedIndex.build(docs, tmp_path / "ix")
    refuse_after = 7  # then the provider refuses everything: the job stops
    refusing = embedding_server(dim=8, faults=lambda n: "400" if n >= refuse_after else None)
    with refusing as first, pytest.raises(ProviderFailure, match="HTTP 400"):
        DenseIndex(index, remote(first.url, concurrency=2))
    partial = next((tmp_path / "ix").glob("dense-*.partial"))
    kept = stored_batches(partial)
    assert len(kept) == len(first.answered) // 16 == refuse_after  # each answered batch kept
    with embedding_server(dim=8) as second:  # another server (port) of the same model
        dense = DenseIndex(EmbeddedIndex.open(tmp_path / "ix"), remote(second.url))
    texts = texts_of(index)
    assert not set(first.answered) & set(second.received)  # nothing finished is sent again
    assert all(first.answered[t] + second.answered[t] == 1 for t in set(texts))
    np.testing.assert_allclose(
        np.asarray(dense._vectors), np.stack([unit(t, 8) for t in texts]), atol=1e-6
    )


def test_a_record_cut_short_is_sent_again_and_the_rest_kept(tmp_path: Path) -> None:
    """A crash mid-write leaves the checkpoint's last record incomplete: it is dropped (and
    cut off the file), the intact ones before it are kept."""
    docs = make_docs(400, seed=37)
    index = EmbeddedIndex.build(docs, tmp_path / "ix")
    refusing = embedding_server(dim=8, faults=lambda n: "400" if n >= 5 else None)
    with refusing as first, pytest.raises(ProviderFailure, match="HTTP 400"):
        DenseIndex(index, remote(first.url, concurrency=1))
    partial = next((tmp_path / "ix").glob("dense-*.partial"))
    (log,) = [p for p in partial.iterdir() if p.name != "job.json"]
    stored = stored_batches(partial)
    assert len(stored) == 5  # the five batches answered, in the order they came back
    with log.open("r+b") as f:
        f.truncate(log.stat().st_size - 10)  # the last record's rows cut short
    assert stored_batches(partial) == stored[:4]
    texts = texts_of(index)
    with embedding_server(dim=8) as second:
        dense = DenseIndex(EmbeddedIndex.open(tmp_path / "ix"), remote(second.url))
    kept = {texts[i] for lo in stored[:4] for i in range(lo, lo + 16)}
    assert set(second.received) == set(texts) - kept  # the cut batch again, not the others
    np.testing.assert_allclose(
        np.asarray(dense._vectors), np.stack([unit(t, 8) for t in texts]), atol=1e-6
    )
    assert not partial.exists()


def test_a_checkpoint_that_cannot_be_written_stops_the_job(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The disk fails under the checkpoint log: the job stops sending and raises it; what was
    stored before stays, and the next run completes."""
    index = EmbeddedIndex.build(make_docs(1600, seed=39), tmp_path / "ix")
    real_fsync, calls = os.fsync, []

    def failing(fd: int) -> None:
        calls.append(fd)
        if len(calls) > 6:  # the stamp, then a few group commits
            raise OSError(28, "No space left on device")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", failing)
    failing_disk = pytest.raises(OSError, match="No space left")
    with embedding_server(dim=8, latency_s=0.01) as first, failing_disk:
        DenseIndex(index, remote(first.url, concurrency=2))
    assert first.requests < 100 // 2  # of 100 batches: it stopped, not ran to the end
    monkeypatch.setattr(os, "fsync", real_fsync)
    with embedding_server(dim=8) as second:
        dense = DenseIndex(EmbeddedIndex.open(tmp_path / "ix"), remote(second.url))
    texts = texts_of(index)
    np.testing.assert_allclose(
        np.asarray(dense._vectors), np.stack([unit(t, 8) for t in texts]), atol=1e-6
    )


_CHILD = """
import sys
sys.path[:0] = {paths!r}
from pastcast.corpus.dense import DenseIndex, RemoteEmbedder
from pastcast.corpus.embedded import EmbeddedIndex
embedder = RemoteEmbedder("test-model", base_url={url!r}, batch_size=16, concurrency=2)
DenseIndex(EmbeddedIndex.open({index!r}), embedder)
"""


def test_a_killed_job_resumes_without_resending_finished_batches(tmp_path: Path) -> None:
    docs = make_docs(600, seed=33)
    index = EmbeddedIndex.build(docs, tmp_path / "ix")
    texts = texts_of(index)
    with embedding_server(dim=8, latency_s=0.05) as first:
        code = _CHILD.format(paths=sys.path, url=first.url, index=str(tmp_path / "ix"))
        child = subprocess.Popen([sys.executable, "-c", code], env=os.environ.copy())
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            folders = list((tmp_path / "ix").glob("dense-*.partial"))
            if folders and len(stored_batches(folders[0])) >= 6:
                break
            assert child.poll() is None, "the job ended before it could be killed"
            time.sleep(0.01)
        child.send_signal(signal.SIGKILL)
        child.wait()
        (partial,) = list((tmp_path / "ix").glob("dense-*.partial"))
        kept = stored_batches(partial)
    assert 6 <= len(kept) < len(texts) // 16
    finished = {texts[i] for lo in kept for i in range(lo, min(len(texts), lo + 16))}
    with embedding_server(dim=8) as second:
        dense = DenseIndex(EmbeddedIndex.open(tmp_path / "ix"), remote(second.url))
    assert not finished & set(second.received)
    assert set(second.answered) | finished == set(texts)
    np.testing.assert_allclose(
        np.asarray(dense._vectors), np.stack([unit(t, 8) for t in texts]), atol=1e-6
    )


def test_the_key_goes_in_the_header_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EMBED_KEY_FOR_TEST", "sk-very-secret")
    docs = make_docs(40, seed=34)
    EmbeddedIndex.build(docs, tmp_path / "ix")
    with embedding_server(dim=8) as server:
        spec = f"openai-compatible:test-model@{server.url}?api_key_env=EMBED_KEY_FOR_TEST"
        dense = open_backend(tmp_path / "ix", "dense", embedder=spec)
        hits = dense.search("election", as_of=START.replace(year=2025))
    assert hits and server.authorization == {"Bearer sk-very-secret"}
    assert "sk-very-secret" not in dense.identity().model_dump_json()
    assert "sk-very-secret" not in repr(dense.embedder)  # type: ignore[attr-defined]
    for f in (tmp_path / "ix").rglob("*"):
        assert not f.is_file() or b"sk-very-secret" not in f.read_bytes()


def test_refused_credentials_and_bad_specs_fail_at_once(tmp_path: Path) -> None:
    EmbeddedIndex.build(make_docs(20, seed=35), tmp_path / "ix")
    with embedding_server(dim=8, faults=lambda n: "400") as server:
        with pytest.raises(FieldError, match="HTTP 400"):
            open_backend(tmp_path / "ix", "dense", embedder=f"openai-compatible:m@{server.url}")
        assert server.requests == 1  # a refused request is not retried
    with pytest.raises(FieldError, match="MODEL@http"):
        resolve_embedder("openai-compatible:no-url")
    with pytest.raises(FieldError, match="unknown option 'colour'"):
        resolve_embedder("openai-compatible:m@http://127.0.0.1:1/v1?colour=red")
    with pytest.raises(FieldError, match="give it as openai:MODEL"):
        resolve_embedder("openai")


def test_a_query_of_another_model_or_dimension_is_refused(tmp_path: Path) -> None:
    docs = make_docs(60, seed=36)
    with embedding_server(dim=8) as server:
        dense = DenseIndex(EmbeddedIndex.in_memory(docs), remote(server.url))
        cutoff = START.replace(year=2025)
        q = dense.embed_query("election storm")
        same = dense.search_vector(q[0], model="openai-compatible:test-model", as_of=cutoff)
        assert [h.id for h in same] == [h.id for h in dense.search("election storm", as_of=cutoff)]
        with pytest.raises(FieldError, match="embedded by 'all-minilm-l6-v2'"):
            dense.search_vector(q[0], model="all-minilm-l6-v2", as_of=cutoff)
        with pytest.raises(FieldError, match="dimension 9"):
            dense.search_vector(np.ones(9), model="openai-compatible:test-model", as_of=cutoff)
        server.dim = 12  # the server now serves another model under the same name
        with pytest.raises(FieldError, match="dimension 12"):
            dense.search("a query not cached", as_of=cutoff)


def test_throughput_through_latency_is_near_the_servers_rate() -> None:
    """Requests overlap: at 50 ms a batch and 8 in flight, far faster than one at a time."""
    texts = [f"text {i}" for i in range(16 * 64)]
    with embedding_server(dim=8, latency_s=0.05) as server:
        embedder = remote(server.url, concurrency=8)
        started = time.perf_counter()
        out = embedder.encode(texts)
        elapsed = time.perf_counter() - started
        embedder.close()
    assert out.shape == (len(texts), 8) and server.requests == 64
    # one at a time would take 64 * 50 ms; the bound only proves the requests overlap (the
    # machine may be shared; benchmarks/embedding_throughput.py measures the rate)
    assert elapsed < 64 * 0.05 / 2


def test_requests_in_flight_and_connections_stay_within_the_concurrency(tmp_path: Path) -> None:
    """Twice as many threads as requests in flight (replies are parsed while the next requests
    are out), but the server never sees more than ``concurrency`` at once."""
    index = EmbeddedIndex.build(make_docs(400, seed=38), tmp_path / "ix")
    with embedding_server(dim=8, latency_s=0.02) as server:
        embedder = remote(server.url, concurrency=3)
        DenseIndex(index, embedder)
        embedder.close()
    assert embedder.threads == 6 and server.requests == 25
    assert server.most_at_once == 3 and server.connections <= 3


def test_base64_vectors_equal_float_ones() -> None:
    texts = [f"text {i}" for i in range(40)]
    with embedding_server(dim=32) as server:
        floats = remote(server.url, encoding_format="float").encode(texts)
        packed = remote(server.url).encode(texts)
    np.testing.assert_allclose(packed, floats, atol=1e-6)
    np.testing.assert_allclose(floats[3], unit("text 3", 32), atol=1e-6)


def test_a_server_refusing_base64_is_asked_for_floats_from_then_on() -> None:
    texts = [f"text {i}" for i in range(160)]  # ten batches
    with embedding_server(dim=32, base64=False) as server:
        embedder = remote(server.url, concurrency=1)
        got = embedder.encode(texts)
        embedder.close()
    assert embedder.encoding_format == "float"
    # refused for the batches already made when the first refusal came back, not for the rest
    assert 1 <= server.failed["400"] <= embedder.threads < 10
    np.testing.assert_allclose(got[5], unit("text 5", 32), atol=1e-6)


def test_another_client_error_is_not_taken_for_a_refused_encoding() -> None:
    with embedding_server(dim=8, max_batch=4) as server:  # 400 "scripted 400": too large
        embedder = remote(server.url, batch_size=8, concurrency=1)
        with pytest.raises(ProviderFailure, match="400"):
            embedder.encode([f"t{i}" for i in range(8)])
    assert embedder.encoding_format == "base64"


def reindexed(change: dict[int, int], *, requests: int | None = None) -> Reply:
    """Replies whose item of index ``i`` says ``change[i]`` instead (the first ``requests``
    replies, or all)."""

    def reply(n: int, payload: bytes) -> bytes | None:
        if requests is not None and n >= requests:
            return None
        data = json.loads(payload)
        for item in data["data"]:
            item["index"] = change.get(item["index"], item["index"])
        return json.dumps(data).encode()

    return reply


WRONG_INDEXES = [
    ({1: 0}, r"index 0 more than once"),
    ({0: 10_000}, r"index 10000 out of range for 8 texts"),
    ({7: -1}, r"index -1 out of range for 8 texts"),
]


@pytest.mark.parametrize("change", [change for change, _ in WRONG_INDEXES])
def test_a_reply_whose_indexes_are_not_each_text_once_is_retried(change: dict[int, int]) -> None:
    texts = [f"text {i}" for i in range(8)]
    with embedding_server(dim=8, reply=reindexed(change, requests=1)) as server:
        got = remote(server.url).encode(texts)
    assert server.requests == 2
    np.testing.assert_allclose(got, np.stack([unit(t, 8) for t in texts]), atol=1e-6)


@pytest.mark.parametrize(("change", "problem"), WRONG_INDEXES)
def test_a_server_that_keeps_sending_wrong_indexes_is_refused_naming_it(
    change: dict[int, int], problem: str
) -> None:
    texts = [f"text {i}" for i in range(8)]
    twice = RetryPolicy(max_retries=2, base_delay_s=0.001, max_delay_s=0.01)
    with (
        embedding_server(dim=8, reply=reindexed(change)) as server,
        pytest.raises(ProviderFailure, match=problem) as refused,
    ):
        remote(server.url, retry=twice).encode(texts)
    assert server.requests == 3
    assert server.url in str(refused.value) and "\n" not in str(refused.value)


def test_corpus_build_through_a_server_of_wrong_indexes_stores_no_vectors(tmp_path: Path) -> None:
    """Refused in one line naming the server and the problem; the index stays without vectors
    (as after any provider that gave up: the next open resumes the embedding job)."""
    from typer.testing import CliRunner

    from pastcast.cli import app

    src = tmp_path / "docs.jsonl"
    src.write_text("".join(d.model_dump_json() + "\n" for d in make_docs(40, seed=40)))
    out = tmp_path / "ix"
    with embedding_server(dim=8, reply=reindexed({1: 0})) as server:
        spec = f"openai-compatible:m@{server.url}?max_retries=1"
        args = ["corpus", "build", f"jsonl:{src}", "--out", str(out), "--embedder", spec]
        result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    (line,) = [line for line in result.stderr.splitlines() if line.startswith("error")]
    assert result.stderr.rstrip().endswith(line)  # the last line, after the progress lines
    assert line.startswith("error: --embedder: openai-compatible:m at ") and server.url in line
    assert line.endswith("index 0 more than once")
    assert not list(out.glob("dense-*.npy")) and not list(out.glob("dense-*.json"))


ONCE = RetryPolicy(max_retries=0)


def padded(size: int, *, chunked: bool) -> Reply:
    """The right reply followed by ``size`` bytes of white space (still valid JSON): with its
    length declared, or in chunks of 64 KiB without one."""

    def reply(n: int, payload: bytes) -> bytes | Iterator[bytes]:
        if not chunked:
            return payload + b" " * size
        return itertools.chain([payload], itertools.repeat(b" " * 65_536, size // 65_536))

    return reply


@pytest.mark.parametrize("chunked", [False, True])
def test_a_reply_larger_than_max_reply_bytes_is_refused_unread(chunked: bool) -> None:
    with embedding_server(dim=8, reply=padded(64 << 20, chunked=chunked)) as server:
        embedder = remote(server.url, max_reply_bytes=256 << 10, retry=ONCE)
        started = time.monotonic()
        with pytest.raises(ProviderFailure, match=r"over max_reply_bytes=262144") as refused:
            embedder.encode(["one", "two"])
        elapsed = time.monotonic() - started
    assert server.url in str(refused.value)
    assert elapsed < 5  # 64 MiB were not read (a few hundred KiB were)


def test_max_reply_bytes_defaults_to_a_bound_by_the_batch_size() -> None:
    with embedding_server(dim=8, reply=padded(2 << 20, chunked=True)) as server:
        with pytest.raises(ProviderFailure, match="over max_reply_bytes"):
            remote(server.url, batch_size=4, retry=ONCE).encode(["one"])
        assert remote(server.url, batch_size=16, retry=ONCE).encode(["one"]).shape == (1, 8)


def endless(pause_s: float, chunk: bytes) -> Reply:
    """A reply that never ends: ``chunk`` every ``pause_s`` seconds after the right start."""

    def reply(n: int, payload: bytes) -> Iterator[bytes]:
        yield payload[:10]
        while True:
            time.sleep(pause_s)
            yield chunk

    return reply


@pytest.mark.parametrize(
    "reply",
    [endless(0.001, b" " * 1024), endless(0.2, b" ")],
    ids=["streaming", "trickling"],
)
def test_a_reply_is_bounded_in_time_as_a_whole(reply: Reply) -> None:
    """Each read comes well within ``timeout_s``, but the reply never ends: the deadline for the
    whole reply ends it."""
    with embedding_server(dim=8, reply=reply) as server:
        embedder = remote(server.url, timeout_s=1.0, retry=ONCE)
        started = time.monotonic()
        with pytest.raises(ProviderFailure, match=r"no complete reply within timeout_s=1") as out:
            embedder.encode(["one", "two"])
        elapsed = time.monotonic() - started
    assert out.value.kind == "timeout" and server.url in str(out.value)
    assert elapsed < 3


def test_trickled_headers_are_bounded_by_the_same_deadline() -> None:
    """A server that sends its status line and then a header a byte at a time."""
    listener = socket.create_server(("127.0.0.1", 0))

    def trickle() -> None:
        conn, _ = listener.accept()
        with conn, contextlib.suppress(OSError):
            conn.recv(65_536)
            conn.sendall(b"HTTP/1.1 200 OK\r\nX-Pad: ")
            while True:
                time.sleep(0.2)
                conn.sendall(b"a")

    threading.Thread(target=trickle, daemon=True).start()
    url = f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
    started = time.monotonic()
    with listener, pytest.raises(ProviderFailure, match=r"no complete reply within timeout_s=1"):
        remote(url, timeout_s=1.0, retry=ONCE).encode(["one"])
    assert time.monotonic() - started < 3


def deeply_nested(*, requests: int | None = None) -> Reply:
    def reply(n: int, payload: bytes) -> bytes | None:
        if requests is not None and n >= requests:
            return None
        return b'{"data": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"

    return reply


def test_a_deeply_nested_reply_is_a_malformed_one() -> None:
    texts = [f"text {i}" for i in range(4)]
    with embedding_server(dim=8, reply=deeply_nested(requests=1)) as server:
        got = remote(server.url).encode(texts)
    assert server.requests == 2
    np.testing.assert_allclose(got, np.stack([unit(t, 8) for t in texts]), atol=1e-6)
    twice = RetryPolicy(max_retries=1, base_delay_s=0.001, max_delay_s=0.01)
    with (
        embedding_server(dim=8, reply=deeply_nested()) as server,
        pytest.raises(ProviderFailure, match=r"malformed reply.*nested deeper than"),
    ):
        remote(server.url, retry=twice).encode(texts)
    assert server.requests == 2


def test_a_key_the_server_echoes_is_not_repeated(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EMBED_KEY_FOR_TEST", "sk-very-secret")
    with (
        embedding_server(dim=8, faults=lambda n: "401") as server,
        pytest.raises(ProviderFailure, match="HTTP 401") as refused,
    ):
        remote(server.url, api_key_env="EMBED_KEY_FOR_TEST").encode(["one"])
    assert server.authorization == {"Bearer sk-very-secret"}  # what the server echoed
    assert "sk-very-secret" not in str(refused.value)
    assert "Incorrect API key provided: ***" in str(refused.value)


def test_a_url_with_a_password_is_served_and_never_repeated(tmp_path: Path) -> None:
    with embedding_server(dim=8) as server:
        url = server.url.replace("http://", "http://reader:pa55word@")
        embedder = resolve_embedder(f"openai-compatible:m@{url}")
        assert embedder.encode(["one"]).shape == (1, 8)
        assert server.authorization == {"Basic " + base64.b64encode(b"reader:pa55word").decode()}
        assert "pa55word" not in repr(embedder) and embedder.name == "openai-compatible:m"
    refusals = [
        f"openai-compatible:m@{url}?colour=red",  # an unknown option
        f"openai-compatible:m@{url}?batch_size=many",
        "openai-compatible:@http://reader:pa55word@127.0.0.1:1/v1",  # no model
        "openai-compatible:m@ftp://reader:pa55word@127.0.0.1:1/v1",  # not http
    ]
    for spec in refusals:
        with pytest.raises(FieldError) as refused:
            resolve_embedder(spec)
        assert "pa55word" not in str(refused.value) and "reader" in str(refused.value)
    gone = resolve_embedder(
        "openai-compatible:m@http://reader:pa55word@127.0.0.1:1/v1?max_retries=0"
    )
    with pytest.raises(ProviderFailure, match="connection failed") as failed:
        gone._batch(["one"])  # type: ignore[attr-defined]
    assert "pa55word" not in str(failed.value)
    assert "http://reader@127.0.0.1:1/v1" in str(failed.value)


@pytest.mark.parametrize("limit", ["requests_per_minute", "tokens_per_minute"])
@pytest.mark.parametrize("value", ["0", "-5", "nan"])
def test_a_rate_limit_of_zero_is_refused_not_taken_for_none(limit: str, value: str) -> None:
    with pytest.raises(FieldError, match=rf"{limit}: expected a number above 0, got"):
        resolve_embedder(f"openai-compatible:m@http://127.0.0.1:1/v1?{limit}={value}")
    with pytest.raises(ValueError, match=rf"{limit}: expected a number above 0"):
        RemoteEmbedder("m", base_url="http://127.0.0.1:1/v1", **{limit: float(value)})  # type: ignore[arg-type]
