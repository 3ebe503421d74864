"""Foresight Arena replays: a dataset's resolved markets as commit-reveal rounds, forecast by
agents through the same replay (dataset, corpus, retrieval) and agent checks as a run."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from pastcast import safejson
from pastcast.app import (
    check_agents,
    models_session,
    open_replay,
    parse_agent_option,
    split_agent_option,
)
from pastcast.cutoff import parse_cutoff
from pastcast.dataset import read_metadata
from pastcast.errors import FieldError
from pastcast.markets import ClobCache, PolymarketClient, PolymarketError
from pastcast.registry import ComponentSpec
from pastcast.validation import first_error
from pastcast_arena._clob import ClobPrices, clob_markets
from pastcast_arena._deployment import DEPLOYMENT_FILE, write_deployment
from pastcast_arena._replay import ReplayResult
from pastcast_arena._rounds import SELECTORS, RoundPlan
from pastcast_arena._stats import LeaderboardRow

if TYPE_CHECKING:
    from pastcast.reports.html import ReportSection

__all__ = [
    "DEPLOYMENT_FILE",
    "ArenaReplay",
    "arena_chain_leaderboard",
    "arena_replay",
    "arena_sections",
    "round_plan",
]

# A replay on a node given by URL records its deployment (chain id, contract addresses,
# deployment block) in DEPLOYMENT_FILE: the chain outlives the replay, and
# ``arena_chain_leaderboard`` reads it.


@dataclass(frozen=True)
class ArenaReplay:
    """A finished arena replay: the dataset it replayed and the rounds' results."""

    dataset_id: str
    replay: ReplayResult
    deployment: Path | None = None
    """``out/deployment.json`` when the replay ran on a node given by URL."""


def _selector(option: str) -> ComponentSpec:
    """``NAME[:key=value,...]`` -> the selector's spec, read by the agents' grammar (without a
    setting)."""
    split = split_agent_option(option, field="selector")
    if split.setting is not None:
        raise FieldError("selector", f"{option!r}: a selector takes no @SETTING")
    try:
        return SELECTORS.spec(split.name.strip(), **split.args)
    except ValueError as exc:
        raise FieldError("selector", f"{option!r}: {exc}") from None


def _instant(text: str | None, field: str) -> datetime | None:
    if text is None:
        return None
    try:
        return parse_cutoff(text)
    except ValueError as exc:
        raise FieldError(field, str(exc)) from None


def round_plan(
    *,
    markets: int = 7,
    rounds: int = 20,
    interval_days: int = 7,
    start: str | None = None,
    selector: str = "volume-activity",
) -> RoundPlan:
    """How the replay builds its rounds; ``start`` an ISO date or instant, ``selector``
    ``NAME[:key=value,...]`` of a registered round selector."""
    try:
        return RoundPlan(
            markets=markets,
            rounds=rounds,
            interval_days=interval_days,
            start=_instant(start, "start"),
            selector=_selector(selector),
        )
    except ValidationError as exc:
        loc, msg = first_error(exc)
        raise FieldError(str(loc[0]) if loc else "rounds", msg) from None


@contextmanager
def _deadline_prices(
    dataset: str | Path,
    cache: str | Path | None,
    clob_url: str | None,
    data_url: str | None,
) -> Iterator[ClobPrices | None]:
    """The CLOB prices of ``dataset``'s markets in ``cache`` (fetching what it lacks when a URL
    is given); ``None`` without a cache."""
    if cache is None:
        yield None
        return
    if not Path(dataset).is_dir():
        raise FieldError(
            "clob_cache", f"{dataset}: CLOB prices need a Polymarket dataset directory"
        )
    try:
        meta = read_metadata(dataset)
        markets = clob_markets(meta.get("provenance", {}).get("clob_tokens"), str(dataset))
    except (OSError, ValueError) as exc:
        raise FieldError("clob_cache", str(exc)) from None
    if clob_url is None and data_url is None:
        yield ClobPrices(ClobCache(cache), markets)
        return
    urls: dict[str, Any] = {
        k: v for k, v in (("clob_url", clob_url), ("data_url", data_url)) if v is not None
    }
    with PolymarketClient(**urls) as client:  # the other one: the public default
        yield ClobPrices(ClobCache(cache, client), markets)


def arena_replay(
    dataset: str | Path,
    agents: Sequence[str],
    out: Path,
    *,
    corpus: str | Path | None = None,
    retrieval: str = "bm25",
    embedder: str | None = None,
    backend: str = "ledger",
    plan: RoundPlan | None = None,
    resolve_by: str | None = None,
    rpc_url: str | None = None,
    clob_cache: str | Path | None = None,
    clob_url: str | None = None,
    data_url: str | None = None,
) -> ArenaReplay:
    """Replay ``dataset``'s resolved markets (any dataset spec, see ``open_dataset``) as arena
    rounds: ``agents`` (``NAME[:key=value,...][@SETTING]``) forecast each market as of the
    commit deadline, commit, reveal and are scored per round, on a ledger file in ``out``
    (``backend`` ``ledger``) or an in-process chain (``evm``). Markets resolved after
    ``resolve_by`` count as unresolved. ``out`` is a directory the caller made; the embedded
    world's index goes in ``out/index``. ``clob_cache``: a folder of CLOB prices, books and
    trade windows (``pastcast.markets.ClobCache``) the benchmark prices and volumes at each
    deadline are read from, offline; with ``clob_url`` / ``data_url`` what it lacks is fetched
    into it first. ``FieldError`` naming the field before any work."""
    from pastcast_arena._chain import EvmArena
    from pastcast_arena._ledger import LedgerArena
    from pastcast_arena._node import local_node
    from pastcast_arena._replay import replay as play_rounds

    specs = [parse_agent_option(a, field=f"agents[{i}]") for i, a in enumerate(agents)]
    if not specs:
        raise FieldError("agents", "give at least one agent")
    if backend not in ("ledger", "evm", "anvil"):
        raise FieldError("backend", f"{backend!r}: choose 'ledger', 'evm' or 'anvil'")
    if rpc_url is not None and backend != "evm":
        raise FieldError("rpc_url", "a node's URL goes with the backend 'evm'")
    if rpc_url is not None and not rpc_url.startswith(("http://", "https://")):
        raise FieldError("rpc_url", f"{rpc_url!r}: expected an http:// or https:// URL")
    cutoff = _instant(resolve_by, "resolve_by")
    for name, url in (("clob_url", clob_url), ("data_url", data_url)):
        if url is not None and clob_cache is None:
            raise FieldError(name, "fetched prices go into a cache: give clob_cache too")
        if url is not None and not url.startswith(("http://", "https://")):
            raise FieldError(name, f"{url!r}: expected an http:// or https:// URL")
    ledger_path = out / "ledger.jsonl"
    if backend == "ledger" and ledger_path.exists():
        raise FieldError("out", f"{ledger_path}: already exists (replay into a new directory)")
    with models_session():
        check_agents(specs)
        with open_replay(dataset, corpus, retrieval, embedder, index_dir=out / "index") as replay:
            node = ExitStack()
            try:
                if backend == "ledger":
                    arena: Any = LedgerArena.create(ledger_path)
                elif backend == "anvil":
                    arena = EvmArena.connect(node.enter_context(local_node()).url)
                elif rpc_url is not None:
                    arena = EvmArena.connect(rpc_url)
                else:
                    arena = EvmArena()
            except (ImportError, FileNotFoundError) as exc:
                node.close()
                raise FieldError("backend", str(exc)) from None
            except (OSError, RuntimeError) as exc:  # a node that does not answer
                node.close()
                raise FieldError("rpc_url" if rpc_url else "backend", str(exc)) from None
            deployment = None
            try:
                if rpc_url is not None:  # before the rounds: a replay cut short keeps it too
                    deployment = write_deployment(arena, out / DEPLOYMENT_FILE, rpc_url)
                with _deadline_prices(dataset, clob_cache, clob_url, data_url) as prices:
                    played = play_rounds(
                        replay.dataset,
                        replay.backend,
                        specs,
                        out,
                        arena,
                        plan=plan,
                        resolve_by=cutoff,
                        prices=prices,
                    )
            except ImportError as exc:
                raise FieldError("backend", str(exc)) from None
            except PolymarketError as exc:
                raise FieldError("clob_cache", str(exc)) from None
            finally:
                node.close()
    return ArenaReplay(replay.dataset.id, played, deployment)


def arena_chain_leaderboard(
    rpc_url: str, reputation: str, *, from_block: int = 0
) -> tuple[LeaderboardRow, ...]:
    """The leaderboard read from the chain of the JSON-RPC node at ``rpc_url`` alone: the
    deployment whose reputation registry is at ``reputation`` (an address, or a replay's
    ``deployment.json``), its logs read from ``from_block`` (a deployment file's block when
    it gives one). ``FieldError`` naming the field."""
    from pastcast_arena._chain import EvmArena
    from pastcast_arena._reputation import chain_leaderboard

    if not rpc_url.startswith(("http://", "https://")):
        raise FieldError("from_chain", f"{rpc_url!r}: expected an http:// or https:// URL")
    address, recorded_block = _reputation_address(reputation)
    start = from_block or recorded_block
    try:
        from web3 import HTTPProvider, Web3

        w3 = Web3(HTTPProvider(rpc_url, request_kwargs={"timeout": 60}))
        arena = EvmArena.attach(w3, address, from_block=start)
    except ImportError as exc:
        raise FieldError("from_chain", str(exc)) from None
    except ValueError as exc:
        raise FieldError("reputation", str(exc)) from None
    except (OSError, RuntimeError) as exc:  # a node that does not answer
        raise FieldError("from_chain", f"{rpc_url}: {exc}") from None
    try:
        return chain_leaderboard(arena)
    except ValueError as exc:
        raise FieldError("reputation", str(exc)) from None
    except (OSError, RuntimeError) as exc:
        raise FieldError("from_chain", f"{rpc_url}: {exc}") from None


def _reputation_address(value: str) -> tuple[str, int]:
    """(address, deployment block): an address as given (block 0), or the reputation registry
    and block of a ``deployment.json`` (or of the replay folder holding one)."""
    if value.startswith("0x"):
        return value, 0
    path = Path(value)
    if path.is_dir():
        path = path / DEPLOYMENT_FILE
    try:
        record = safejson.loads(path.read_text("utf-8"))
        block = record.get("deploy_block", 0)
        if not isinstance(block, int) or isinstance(block, bool) or block < 0:
            raise ValueError(f"deploy_block {block!r} is not a block number")
        return str(record["contracts"]["ReputationRegistry"]), block
    except OSError as exc:
        why = exc.strerror or exc
        raise FieldError("reputation", f"{value}: neither an address nor a file ({why})") from None
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise FieldError("reputation", f"{path}: not a deployment file ({exc})") from None


ROUNDS_FILE = "rounds.jsonl"
LEDGER_FILE = "ledger.jsonl"


def _rounds_file(path: Path) -> Path:
    return path / ROUNDS_FILE if path.is_dir() else path


def arena_sections(
    run_logs: Sequence[str | Path], arena: str | Path | None = None
) -> tuple[ReportSection, ...]:
    """The arena rounds to report beside ``run_logs``: those of ``arena`` (an arena replay's
    folder, or its ``rounds.jsonl``), else of every run log that an arena replay wrote (a
    ``rounds.jsonl`` beside it). The ledger beside the rounds, where there is one, is verified
    and its commits and reveals counted."""
    from pastcast_arena._replay import read_results
    from pastcast_arena._section import arena_section

    if arena is not None:
        found = [_rounds_file(Path(arena))]
        if not found[0].is_file():
            raise FieldError("arena", f"{arena}: no {ROUNDS_FILE} (an arena replay's folder)")
    else:
        found = []
        for log in run_logs:
            beside = Path(log).parent / ROUNDS_FILE
            if beside.is_file() and beside not in found:
                found.append(beside)
    sections = []
    for rounds in found:
        try:
            results = read_results(rounds)
        except (OSError, ValueError) as exc:
            raise FieldError("arena", f"{rounds}: {exc}") from None
        if not results:
            raise FieldError("arena", f"{rounds}: no rounds")
        ledger = rounds.parent / LEDGER_FILE
        title = "Arena rounds" if len(found) == 1 else f"Arena rounds: {rounds.parent.name}"
        try:
            sections.append(
                arena_section(results, ledger=ledger if ledger.is_file() else None, title=title)
            )
        except ValueError as exc:  # no scored round, or a ledger that does not verify
            raise FieldError("arena", f"{rounds.parent}: {exc}") from None
    return tuple(sections)
