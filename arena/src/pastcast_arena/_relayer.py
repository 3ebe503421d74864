"""The gasless relayer: signed commits and reveals checked, limited, simulated, then submitted
(docs/arena.md, "The relayer": status codes, bounds and the curator's ``/admin/...`` actions);
and its client, retrying without ever submitting twice."""

from __future__ import annotations

import hmac
import threading
import time
from collections import defaultdict, deque
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from pydantic import Field

from pastcast import safejson
from pastcast.records import Record
from pastcast_arena._protocol import (
    ArenaBackend,
    ArenaRejected,
    recover_reasoning_signer,
    recover_signer,
)
from pastcast_arena._records import (
    Address,
    Bp,
    Hex32,
    RoundId,
    Signature,
    SignedCommit,
    SignedReveal,
    Uint256,
)
from pastcast_arena._snapshot import snapshot_of

MAX_BODY_BYTES = 64 * 1024  # a signed commit or reveal, or a curator's action, is far smaller


class RelayerPolicy:
    """One commit and one reveal per (agent, round), and at most ``per_minute`` accepted
    submissions per agent in any 60 seconds."""

    def __init__(self, per_minute: int = 30, clock: Callable[[], float] = time.monotonic) -> None:
        self.per_minute = per_minute
        self.clock = clock
        self._seen: set[tuple[str, str, int]] = set()
        self._recent: dict[str, deque[float]] = defaultdict(deque)

    def check(self, kind: str, agent: str, round_id: int) -> str | None:
        if (kind, agent, round_id) in self._seen:
            return f"one {kind} per agent and round: {agent} already sent one for round {round_id}"
        window = self._recent[agent]
        now = self.clock()
        while window and now - window[0] >= 60.0:
            window.popleft()
        if len(window) >= self.per_minute:
            return f"rate limit: {self.per_minute} submissions a minute per agent"
        return None

    def record(self, kind: str, agent: str, round_id: int) -> None:
        self._seen.add((kind, agent, round_id))
        self._recent[agent].append(self.clock())


class Reasoning(Record):
    """An agent's reasoning traces for one commitment, signed by the agent (EIP-191 over
    ``reasoning_digest``)."""

    round_id: RoundId
    commit_hash: Hex32
    agent: Address
    traces: tuple[dict[str, Any], ...] = Field(max_length=256)
    signature: Signature


class NewAgent(Record):
    address: str
    name: str = Field(min_length=1)


class NewRound(Record):
    condition_ids: tuple[Hex32, ...] = Field(min_length=1)
    commit_deadline: Uint256
    reveal_deadline: Uint256


class Benchmarks(Record):
    prices_bp: tuple[Bp, ...] = Field(min_length=1)


class Payouts(Record):
    condition_id: Hex32
    numerators: tuple[Uint256, ...] = Field(min_length=2)


def create_relayer(
    backend: ArenaBackend, policy: RelayerPolicy | None = None, admin_token: str | None = None
) -> Any:
    """A FastAPI app relaying to ``backend`` (calls are serialised: one submission at a time)."""
    from fastapi import Depends, FastAPI, Header, HTTPException, Path, Request
    from fastapi.exceptions import RequestValidationError
    from fastapi.responses import JSONResponse

    app = FastAPI(title="pastcast arena relayer")
    app.add_middleware(BoundedJsonBody, limit=MAX_BODY_BYTES)
    rules = policy or RelayerPolicy()
    lock = threading.Lock()

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> Any:
        """A body or path of the wrong shape: 400, the first problem on one line."""
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "request"
        return JSONResponse({"detail": f"{where}: {first.get('msg', 'invalid')}"}, 400)

    def signed_by(agent: str, recover: Callable[[], str]) -> None:
        """400 unless the signature recovers to ``agent``."""
        try:
            signer = recover()
        except ValueError as exc:
            raise HTTPException(400, f"invalid signature: {exc}") from None
        if signer != agent:
            raise HTTPException(400, f"the signature is {signer}'s, not {agent}'s")

    def relay(
        kind: str, msg: SignedCommit | SignedReveal, submit: Callable[[bool], str]
    ) -> dict[str, Any]:
        signed_by(msg.agent, lambda: recover_signer(backend.domain, msg))
        with lock:
            refused = rules.check(kind, msg.agent, msg.round_id)
            if refused:
                raise HTTPException(429, refused)
            try:
                submit(True)  # simulate first: a failing call costs the relayer nothing
                receipt = submit(False)
            except ArenaRejected as exc:
                raise HTTPException(409, exc.reason) from None
            rules.record(kind, msg.agent, msg.round_id)
        return {"status": "submitted", "kind": kind, "round_id": msg.round_id, "receipt": receipt}

    @app.get("/domain")
    def domain() -> dict[str, Any]:
        """The EIP-712 domain agents sign for."""
        return backend.domain.as_dict()

    @app.get("/nonce/{agent}")
    def nonce(agent: str) -> dict[str, Any]:
        with lock:
            return {"agent": agent, "nonce": backend.nonce(agent)}

    @app.post("/commit")
    def commit(msg: SignedCommit) -> dict[str, Any]:
        return relay("commit", msg, lambda sim: backend.commit(msg, simulate=sim))

    @app.post("/reveal")
    def reveal(msg: SignedReveal) -> dict[str, Any]:
        return relay("reveal", msg, lambda sim: backend.reveal(msg, simulate=sim))

    published: dict[tuple[int, str], dict[str, Any]] = {}

    @app.post("/reasoning")
    def reasoning(msg: Reasoning) -> dict[str, Any]:
        """Publish reasoning traces beside a commitment the arena holds: signed by its agent,
        once per agent and round."""
        traces = [dict(t) for t in msg.traces]
        signed_by(
            msg.agent,
            lambda: recover_reasoning_signer(msg.round_id, msg.commit_hash, traces, msg.signature),
        )
        with lock:
            held = {
                (c.round_id, c.agent.lower(), c.commit_hash) for c in snapshot_of(backend).commits
            }
            if (msg.round_id, msg.agent.lower(), msg.commit_hash.lower()) not in held:
                raise HTTPException(409, "no such commitment by the agent in the round")
            key = (msg.round_id, msg.agent)
            if key in published:
                raise HTTPException(409, "reasoning already published")
            published[key] = msg.model_dump(mode="json")
        return {"status": "published", "round_id": msg.round_id, "agent": msg.agent}

    @app.get("/reasoning/{round_id}")
    def reasoning_of(round_id: int = Path(ge=1, lt=2**256)) -> dict[str, Any]:
        with lock:
            found = [v for (r, _), v in sorted(published.items()) if r == round_id]
        return {"round_id": round_id, "reasoning": found}

    def curator(authorization: str = Header(default="")) -> None:
        if admin_token is None:
            raise HTTPException(403, "curator actions are disabled (no admin token configured)")
        given = authorization.encode("utf-8", "surrogateescape")  # any header's text
        if not hmac.compare_digest(given, f"Bearer {admin_token}".encode()):
            raise HTTPException(401, "missing or wrong curator token")

    def run(action: Callable[[], Any]) -> Any:
        with lock:
            try:
                return action()
            except ArenaRejected as exc:
                raise HTTPException(409, exc.reason) from None

    @app.post("/admin/agents", dependencies=[Depends(curator)])
    def add_agent(body: NewAgent) -> dict[str, Any]:
        register = getattr(backend, "register_address", None)
        if register is None:
            raise HTTPException(501, "on a chain, agents register themselves")
        run(lambda: register(body.address, body.name))
        return {"status": "registered", "agent": body.address}

    @app.post("/admin/rounds", dependencies=[Depends(curator)])
    def new_round(body: NewRound) -> dict[str, Any]:
        rid = run(
            lambda: backend.create_round(
                body.condition_ids, body.commit_deadline, body.reveal_deadline
            )
        )
        return {"status": "created", "round_id": rid}

    @app.post("/admin/rounds/{round_id}/benchmarks", dependencies=[Depends(curator)])
    def benchmarks(body: Benchmarks, round_id: int = Path(ge=1, lt=2**256)) -> dict[str, Any]:
        run(lambda: backend.set_benchmarks(round_id, body.prices_bp))
        return {"status": "set", "round_id": round_id}

    @app.post("/admin/payouts", dependencies=[Depends(curator)])
    def payouts(body: Payouts) -> dict[str, Any]:
        run(lambda: backend.report_payouts(body.condition_id, body.numerators))
        return {"status": "reported", "condition_id": body.condition_id}

    @app.post("/admin/rounds/{round_id}/outcomes", dependencies=[Depends(curator)])
    def outcomes(round_id: int = Path(ge=1, lt=2**256)) -> dict[str, Any]:
        return {
            "round_id": round_id,
            "outcomes": list(run(lambda: backend.trigger_outcomes(round_id))),
        }

    @app.post("/admin/rounds/{round_id}/scores", dependencies=[Depends(curator)])
    def scores(round_id: int = Path(ge=1, lt=2**256)) -> dict[str, Any]:
        done = run(lambda: backend.score_pending(round_id))
        return {"round_id": round_id, "scores": [s.model_dump() for s in done]}

    return app


class RelayerUnavailable(RuntimeError):
    """The relayer did not answer (timeouts, 5xx, 429) after the retries."""


class RelayerClient:
    """Sends signed messages to a relayer (``POST /commit``, ``/reveal``), retrying what did not
    get an answer. A retried message is the same signed message: the arena accepts it once
    (``already committed`` on a second copy), so retries never submit twice."""

    def __init__(
        self,
        url: str | None = None,
        *,
        http: Any = None,
        retries: int = 3,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        import httpx

        self.http = http if http is not None else httpx.Client(base_url=url or "", timeout=10.0)
        self.retries, self.sleep = retries, sleep
        self.reasoning: bool | None = None

    def _post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        import httpx

        last = ""
        for attempt in range(self.retries + 1):
            try:
                resp = self.http.post(path, json=body)
            except httpx.HTTPError as exc:  # a timeout or a dropped connection
                last = f"{type(exc).__name__}: {exc}"
            else:
                if resp.status_code == 200:
                    return dict(resp.json())
                detail = _detail(resp)
                if resp.status_code in (400, 409):
                    raise ArenaRejected(detail)
                if resp.status_code == 404:
                    raise LookupError(f"POST {path}: 404 {detail}")
                last = f"HTTP {resp.status_code}: {detail}"
            if attempt < self.retries:
                self.sleep(0.2 * 2**attempt)
        raise RelayerUnavailable(f"POST {path}: {last}")

    def commit(self, msg: Any) -> None:
        self._post("/commit", msg.model_dump(mode="json"))

    def reveal(self, msg: Any) -> None:
        self._post("/reveal", msg.model_dump(mode="json"))

    def publish_reasoning(self, body: dict[str, Any]) -> bool:
        """Publish reasoning traces beside a signed submission; False when the relayer has no
        ``/reasoning`` endpoint (then they stay in the round's folder only)."""
        if self.reasoning is False:
            return False
        try:
            self._post("/reasoning", body)
        except LookupError:
            self.reasoning = False
            return False
        self.reasoning = True
        return True


def _detail(resp: Any) -> str:
    try:
        return str(resp.json().get("detail", resp.text))
    except (ValueError, AttributeError):
        return str(resp.text)[:200]


Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[MutableMapping[str, Any], Receive, Send], Awaitable[None]]


class BoundedJsonBody:
    """An ASGI middleware bounding a request body before it is read: refused (413) over
    ``limit`` bytes, declared or as soon as it is sent past them, and (400) unless JSON within
    ``safejson``'s limits (FastAPI's decoder recurses on the C stack: a deeply nested body would
    crash the server) or for a malformed length; anything else passed on as if unread."""

    def __init__(self, app: App, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: MutableMapping[str, Any], receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = [v for k, v in scope.get("headers", ()) if k.lower() == b"content-length"]
        if declared:
            text = declared[0].decode("latin-1").strip()
            if len(declared) > 1 or not text.isdigit():
                await _refuse(scope, receive, send, 400, "body: malformed Content-Length")
                return
            if int(text) > self.limit:
                await _refuse(scope, receive, send, 413, f"body over {self.limit} bytes")
                return
        body = bytearray()
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            body += message.get("body", b"")
            if len(body) > self.limit:
                await _refuse(scope, receive, send, 413, f"body over {self.limit} bytes")
                return
            if not message.get("more_body", False):
                break
        if body:
            try:
                safejson.loads(bytes(body))
            except ValueError as exc:
                await _refuse(scope, receive, send, 400, f"body: not JSON ({exc})")
                return
        await self.app(scope, _replay(bytes(body), receive), send)


def _replay(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that gives the body already read, then waits as the original does."""
    given = False

    async def again() -> Message:
        nonlocal given
        if given:
            return await receive()
        given = True
        return {"type": "http.request", "body": body, "more_body": False}

    return again


async def _refuse(
    scope: MutableMapping[str, Any], receive: Receive, send: Send, status: int, detail: str
) -> None:
    from starlette.responses import JSONResponse

    headers = {"Connection": "close"}  # what is left of the body is never read
    await JSONResponse({"detail": detail}, status, headers=headers)(scope, receive, send)
