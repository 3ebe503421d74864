"""The live arena service: a plan file (YAML, TOML or JSON) names the agents, the rounds' timing,
Polymarket's endpoints, the arena (a ledger, a node) and optionally a relayer and live feeds;
``arena_live`` runs the rounds until the plan's number of them is finished. Paths in the plan
are relative to its folder."""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import httpx
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from pastcast.app import (
    check_agents,
    corpus_documents,
    fetch_feeds,
    models_session,
    parse_agent_option,
)
from pastcast.errors import FieldError
from pastcast.owned import claim_dir
from pastcast.validation import first_error

if TYPE_CHECKING:
    from pastcast_arena._live_plan import LivePlan, LiveResult

M = TypeVar("M", bound=BaseModel)


class _Polymarket(BaseModel):
    model_config = ConfigDict(extra="forbid")
    gamma_url: str = "https://gamma-api.polymarket.com"
    clob_url: str = "https://clob.polymarket.com"
    data_url: str = "https://data-api.polymarket.com"


class _Clock(BaseModel):
    """Compressed time (tests and demonstrations): ``origin`` at wall time ``real_origin``."""

    model_config = ConfigDict(extra="forbid")
    speed: float = Field(default=1.0, gt=0)
    origin: float | None = None
    real_origin: float | None = None


class LiveFile(BaseModel):
    """The plan file's fields (``LivePlan``'s timing fields besides these; docs/arena.md, "Live
    rounds", describes each)."""

    model_config = ConfigDict(extra="allow")
    out: str
    agents: list[str] = Field(min_length=1)
    backend: Literal["ledger", "evm", "anvil"] = "ledger"
    rpc_url: str | None = None
    ctf_address: str | None = Field(default=None, pattern=r"^0x[0-9a-fA-F]{40}$")
    yes_index: int = Field(default=1, ge=0, le=1)
    """Only markets whose YES is in this slot qualify when the payouts are another contract's."""
    relayer: str | None = None
    agent_keys_env: dict[str, str] = Field(default_factory=dict)
    polymarket: _Polymarket = Field(default_factory=_Polymarket)
    feeds: str | None = None
    spool: str | None = None
    feed_interval_s: float = Field(default=300.0, gt=0)  # on the arena's clock
    clock: _Clock | None = None


def _path(folder: Path, value: str) -> Path:
    p = Path(value)
    return p if p.is_absolute() else folder / p


def read_live_plan(path: str | Path) -> tuple[LiveFile, LivePlan]:
    """The plan file checked whole; ``FieldError`` naming the file and field."""
    from pastcast.runner import read_plan_file
    from pastcast_arena._live_plan import LivePlan

    p = Path(path)
    try:
        raw = read_plan_file(p)
    except (FieldError, OSError) as exc:
        raise FieldError("plan", str(exc)) from None
    if not isinstance(raw, dict):
        raise FieldError("plan", f"{p}: expected a mapping of fields")
    file = _validated(p, LiveFile, raw)
    if file.rpc_url is not None and file.backend != "evm":
        raise FieldError("plan", f"{p}: field rpc_url: goes with the backend 'evm'")
    if file.ctf_address is not None and file.backend == "ledger":
        raise FieldError("plan", f"{p}: field ctf_address: goes with the backend 'evm' or 'anvil'")
    if (file.feeds is None) != (file.spool is None):
        raise FieldError("plan", f"{p}: fields feeds and spool go together")
    specs = [parse_agent_option(a, field=f"agents[{i}]") for i, a in enumerate(file.agents)]
    timing = {k: v for k, v in raw.items() if k not in LiveFile.model_fields}
    return file, _validated(p, LivePlan, {**timing, "agents": specs})


def _validated(path: Path, model: type[M], raw: Any) -> M:
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        loc, msg = first_error(exc)
        raise FieldError("plan", f"{path}: field {'.'.join(map(str, loc))}: {msg}") from None


def _keys(file: LiveFile) -> dict[str, str]:
    out = {}
    for name, env in file.agent_keys_env.items():
        key = os.environ.get(env)
        if not key:
            raise FieldError("plan", f"agent_keys_env.{name}: the environment has no {env}")
        out[name] = key
    return out


def _clock(file: LiveFile) -> Any:
    from pastcast_arena._live_plan import ScaledClock

    if file.clock is None:
        return ScaledClock()
    real = file.clock.real_origin
    real = float(real) if real is not None else datetime.now(UTC).timestamp()
    origin = file.clock.origin if file.clock.origin is not None else real
    return ScaledClock(origin, real, file.clock.speed)


def _backend(file: LiveFile, out: Path, clock: Any, note: Callable[[str], None]) -> Any:
    """The arena's context (``open_arena``). On a node, the deployment recorded in ``out`` is
    reattached; the first start deploys and records it."""
    from pastcast_arena._chain import EvmArena
    from pastcast_arena._ledger import LedgerArena
    from pastcast_arena._node import lasting_node
    from pastcast_arena._workflows import open_arena

    path = out / "ledger.jsonl"
    tick: Callable[[], int] = lambda: int(clock.now())  # noqa: E731
    opened = LedgerArena.open if path.exists() else LedgerArena.create
    # the node's chain starts at the arena's clock: a compressed clock's origin may be before
    # the wall clock
    node = lambda: lasting_node(out / "node", timestamp=int(clock.now()), note=note)  # noqa: E731
    return open_arena(
        file.backend,
        file.rpc_url,
        lambda: opened(path, clock=tick),
        node=node,
        connect=lambda url: _deployed(file, out, url),
        fresh=lambda: EvmArena(conditional_tokens=file.ctf_address, yes_index=file.yes_index),
    )


def _deployed(file: LiveFile, out: Path, url: str) -> Any:
    from pastcast_arena._chain import DEPLOYMENT_FILE, EvmArena, attach_deployment, write_deployment

    path = out / DEPLOYMENT_FILE
    if not path.exists():
        try:
            arena = EvmArena.connect(
                url, conditional_tokens=file.ctf_address, yes_index=file.yes_index
            )
        except ValueError as exc:
            raise FieldError("ctf_address", str(exc)) from None
        write_deployment(arena, path, url)  # before any round: a kill after it reattaches
        return arena
    try:
        arena = attach_deployment(path, url)
    except ValueError as exc:
        raise FieldError("out", str(exc)) from None
    recorded = arena.conditional_tokens.address if arena.external_ctf else None
    if (recorded or "").lower() != (file.ctf_address or "").lower():
        raise FieldError(
            "ctf_address",
            f"{file.ctf_address}: the deployment in {path} reads the conditional tokens at "
            f"{recorded or 'its own mock'}",
        )
    return arena


def _corpus_at(spool: Path) -> Callable[[datetime], Any]:
    """The feed spool's documents the arena held before the cutoff, as an in-memory index."""
    from pastcast.corpus.embedded import EmbeddedIndex

    def at(cutoff: datetime) -> Any:
        if not spool.exists():
            return None
        docs = [d for d in corpus_documents(f"feed:{spool}") if d.timestamp < cutoff]
        return EmbeddedIndex.in_memory(docs) if docs else None

    return at


LIVE_KIND = "arena-live"


def arena_live(
    plan: str | Path,
    *,
    clock: Any = None,
    stop: Callable[[], bool] | None = None,
    note: Callable[[str], None] | None = None,
) -> LiveResult:
    """Run the live arena of the plan file until its rounds are finished (or ``stop``); the
    state, the ledger, each round's run log and the results are under the plan's ``out``. A
    restart with the same plan continues. ``clock`` replaces the plan's (tests); ``note`` hears
    what happened to the local node (reused, started again from its state)."""
    from pastcast.markets.sources import PolymarketClient
    from pastcast_arena._live import LiveService
    from pastcast_arena._relayer import RelayerClient

    file, live = read_live_plan(plan)
    folder = Path(plan).parent
    out = _path(folder, file.out)
    try:  # made and marked if absent or empty; a folder of the user's is refused
        claim_dir(out, LIVE_KIND)
    except FileExistsError as exc:
        raise FieldError("out", str(exc)) from None
    except OSError as exc:
        raise FieldError("out", f"{out}: cannot make the folder ({exc.strerror or exc})") from None
    keys = _keys(file)
    clock = clock if clock is not None else _clock(file)
    feeds = _path(folder, file.feeds) if file.feeds else None
    spool = _path(folder, file.spool) if file.spool else None

    last_fetch = [float("-inf")]
    http = httpx.Client(timeout=30.0, follow_redirects=True)

    def fetch() -> None:
        if feeds is None or spool is None or clock.now() - last_fetch[0] < file.feed_interval_s:
            return
        last_fetch[0] = clock.now()
        at = lambda: datetime.fromtimestamp(clock.now(), UTC)  # noqa: E731
        fetch_feeds(feeds, spool, clock=at, client=http)

    pm = file.polymarket
    with models_session():
        check_agents(list(live.agents))
        with (
            PolymarketClient(pm.gamma_url, pm.clob_url, pm.data_url, backoff_s=0.2) as client,
            _backend(file, out, clock, note or (lambda _: None)) as backend,
        ):
            submitter = None if file.relayer is None else RelayerClient(file.relayer)
            try:
                service = LiveService(
                    live,
                    backend,
                    client,
                    out,
                    clock=clock,
                    keys=keys,
                    submitter=submitter,
                    corpus=_corpus_at(spool) if spool is not None else None,
                    on_tick=fetch if feeds is not None else None,
                    # a development node's clock is moved along with a compressed clock
                    sync_clock=file.backend != "ledger"
                    and file.clock is not None
                    and file.rpc_url is None,
                    yes_index=getattr(backend, "yes_index", file.yes_index),
                )
            except ValueError as exc:
                raise FieldError("out", str(exc)) from None
            try:
                return service.run(stop=stop)
            finally:
                http.close()
