"""Foresight Arena replays: a dataset's resolved markets as commit-reveal rounds, forecast by
agents through the same replay (dataset, corpus, retrieval) and agent checks as a run."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, ExitStack, contextmanager, suppress
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from pastcast.app import (
    PathText,
    check_agents,
    models_session,
    open_replay,
    parse_agent_option,
    split_agent_option,
)
from pastcast.atomic import write_atomic
from pastcast.cutoff import parse_cutoff
from pastcast.dataset import read_metadata
from pastcast.errors import FieldError
from pastcast.markets.sources import ClobCache, PolymarketClient, PolymarketError
from pastcast.runner import PresetRecord
from pastcast_arena._chain import DEPLOYMENT_FILE, write_deployment
from pastcast_arena._replay import ReplayResult
from pastcast_arena._rounds import SELECTORS, ClobPrices, RoundPlan, clob_markets
from pastcast_arena._stats import LeaderboardRow

if TYPE_CHECKING:
    from pastcast.reports.html import ReportSection
    from pastcast_arena._paper import PaperComparison
    from pastcast_arena._records import RoundResult
    from pastcast_arena._seeds import SeedSummary
    from pastcast_arena._simulation import SimulationConfig, SimulationResult
    from pastcast_arena._stats import ArenaReport


@dataclass(frozen=True)
class ArenaReplay:
    """A finished arena replay: the dataset it replayed and the rounds' results."""

    dataset_id: str
    replay: ReplayResult
    deployment: Path | None = None
    """``out/deployment.json`` when the replay ran on a node given by URL."""


def _http_url(field: str, url: str | None) -> None:
    if url is not None and not url.startswith(("http://", "https://")):
        raise FieldError(field, f"{url!r}: expected an http:// or https:// URL")


def _instant(text: str | None, field: str) -> datetime | None:
    if text is None:
        return None
    try:
        return parse_cutoff(text)
    except ValueError as exc:
        raise FieldError(field, str(exc)) from None


PLAN_FILE = "plan.json"
"""The replay's record as merged with its preset, in the replay's folder (``read_plan`` reads
it back)."""


class ArenaReplayPlan(PresetRecord):
    """An arena replay (``arena_replay``): a dataset's resolved markets as commit-reveal rounds
    forecast by agents, through the same replay (dataset, corpus, retrieval) as a run."""

    PRESET_STAGE = "arena"

    dataset: PathText
    """The dataset: 'world[:SEED][,FIELD=VALUE...]' (the embedded world, docs/world.md), a
    dataset directory, or a Forecast-Dojo release folder."""
    agents: tuple[str, ...]
    """Agent as NAME[:key=value,...][@setting]; repeatable."""
    out: PathText = "runs/arena"
    """Output directory (the embedded world's index goes in its index folder)."""
    corpus: PathText | None = None
    """Corpus for research agents: an index directory or a PostgreSQL URL."""
    retrieval: str = "bm25"
    """bm25, dense or hybrid."""
    embedder: str | None = None
    """dense/hybrid: the embedder by name."""
    backend: Literal["ledger", "evm", "anvil"] = "ledger"
    """'ledger' (a ledger file), 'evm' (the contracts on py-evm, or on the node at the RPC URL)
    or 'anvil' (a local anvil node started for the replay)."""
    rpc_url: str | None = None
    """With the evm backend: a JSON-RPC node's URL (its first account pays)."""
    markets: int = Field(default=7, ge=1, le=64)
    """Markets per round."""
    rounds: int = Field(default=20, ge=1, le=10_000)
    """Rounds to build (at most)."""
    interval_days: int = Field(default=7, ge=1, le=3650)
    """Days between commit deadlines."""
    start: str | None = None
    """First commit deadline (ISO date or instant)."""
    selector: str = "volume-activity"
    """Market selector NAME[:key=value,...] (volume-activity, volume-24h, trending, random)."""
    resolve_by: str | None = None
    """Markets resolved after this instant count as unresolved (excluded)."""
    clob_cache: PathText | None = None
    """Folder of CLOB minute prices, books and trade windows: benchmark prices and volumes at
    each deadline come from it (offline), the daily mean only as the labelled fallback."""
    clob_url: str | None = None
    """With the CLOB cache: fetch missing minute prices from this CLOB."""
    data_url: str | None = None
    """With the CLOB cache: fetch missing trade windows from this API."""

    def round_plan(self) -> RoundPlan:
        """How the replay builds its rounds (the selector read by the agents' grammar, without a
        setting); ``FieldError`` naming the field."""
        split = split_agent_option(self.selector, field="selector")
        if split.setting is not None:
            raise FieldError("selector", f"{self.selector!r}: a selector takes no @SETTING")
        try:
            selector = SELECTORS.spec(split.name.strip(), **split.args)
        except ValueError as exc:
            raise FieldError("selector", f"{self.selector!r}: {exc}") from None
        # the record's own bounds are the plan's, or narrower: the plan cannot be refused
        return RoundPlan(
            markets=self.markets,
            rounds=self.rounds,
            interval_days=self.interval_days,
            start=_instant(self.start, "start"),
            selector=selector,
        )


@contextmanager
def _deadline_prices(plan: ArenaReplayPlan) -> Iterator[ClobPrices | None]:
    """The CLOB prices of the dataset's markets in ``plan.clob_cache`` (fetching what it lacks
    when a URL is given); ``None`` without a cache."""
    dataset, cache = plan.dataset, plan.clob_cache
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
    urls: dict[str, Any] = {"clob_url": plan.clob_url, "data_url": plan.data_url}
    if not any(urls.values()):
        yield ClobPrices(ClobCache(cache), markets)
        return
    # a URL not given is the public default
    with PolymarketClient(**{k: v for k, v in urls.items() if v is not None}) as client:
        yield ClobPrices(ClobCache(cache, client), markets)


@contextmanager
def open_arena(
    backend: str,
    rpc_url: str | None,
    ledger: Callable[[], Any],
    *,
    node: Callable[[], AbstractContextManager[Any]] | None = None,
    connect: Callable[[str], Any] | None = None,
    fresh: Callable[[], Any] | None = None,
) -> Iterator[Any]:
    """The arena of ``backend``: ``ledger()``, or ``connect``ed to the URL of ``node()`` (anvil,
    stopped on leaving; ``local_node``) or to ``rpc_url`` (``EvmArena.connect``), or ``fresh()``
    (``EvmArena()``, the in-process chain). ``FieldError`` on ``backend`` (not installed) or
    ``rpc_url`` (a node that does not answer)."""
    from pastcast_arena._chain import EvmArena
    from pastcast_arena._node import local_node

    node, connect, fresh = node or local_node, connect or EvmArena.connect, fresh or EvmArena
    with ExitStack() as stack:
        try:
            if backend == "ledger":
                arena = ledger()
            elif backend == "anvil":
                arena = connect(stack.enter_context(node()).url)
            elif rpc_url is not None:
                arena = connect(rpc_url)
            else:
                arena = fresh()
        except (ImportError, FileNotFoundError) as exc:
            raise FieldError("backend", str(exc)) from None
        except (OSError, RuntimeError) as exc:  # a node that does not answer
            raise FieldError("rpc_url" if rpc_url else "backend", str(exc)) from None
        yield arena


def arena_replay(plan: ArenaReplayPlan) -> ArenaReplay:
    """Replay as ``plan`` declares (its fields say how) into ``out``, a directory the caller
    made, the plan written in it (``PLAN_FILE``); ``FieldError`` naming the field before any
    work."""
    from pastcast_arena._ledger import LedgerArena
    from pastcast_arena._replay import replay as play_rounds

    backend, rpc_url, out = plan.backend, plan.rpc_url, Path(plan.out)
    specs = [parse_agent_option(a, field=f"agents[{i}]") for i, a in enumerate(plan.agents)]
    if not specs:
        raise FieldError("agents", "give at least one agent")
    if rpc_url is not None and backend != "evm":
        raise FieldError("rpc_url", "a node's URL goes with the backend 'evm'")
    _http_url("rpc_url", rpc_url)
    cutoff = _instant(plan.resolve_by, "resolve_by")
    rounds = plan.round_plan()
    for name, url in (("clob_url", plan.clob_url), ("data_url", plan.data_url)):
        if url is not None and plan.clob_cache is None:
            raise FieldError(name, "fetched prices go into a cache: give clob_cache too")
        _http_url(name, url)
    ledger_path = out / LEDGER_FILE
    if backend == "ledger" and ledger_path.exists():
        raise FieldError("out", f"{ledger_path}: already exists (replay into a new directory)")
    with models_session():
        check_agents(specs)
        write_atomic(out / PLAN_FILE, plan.model_dump_json(indent=2) + "\n")
        index = out / "index"
        ledger = lambda: LedgerArena.create(ledger_path)  # noqa: E731
        with (
            open_replay(
                plan.dataset, plan.corpus, plan.retrieval, plan.embedder, index_dir=index
            ) as replay,
            open_arena(backend, rpc_url, ledger) as arena,
        ):
            deployment = None
            try:
                if rpc_url is not None:  # before the rounds: a replay cut short keeps it
                    deployment = write_deployment(arena, out / DEPLOYMENT_FILE, rpc_url)
                with _deadline_prices(plan) as prices:
                    played = play_rounds(
                        replay.dataset,
                        replay.backend,
                        specs,
                        out,
                        arena,
                        plan=rounds,
                        resolve_by=cutoff,
                        prices=prices,
                    )
            except ImportError as exc:
                raise FieldError("backend", str(exc)) from None
            except PolymarketError as exc:
                raise FieldError("clob_cache", str(exc)) from None
    return ArenaReplay(replay.dataset.id, played, deployment)


def arena_chain_leaderboard(
    rpc_url: str, arena: str, *, from_block: int = 0
) -> tuple[LeaderboardRow, ...]:
    """The leaderboard read from the chain of the JSON-RPC node at ``rpc_url`` alone: the
    deployment whose arena contract is at ``arena`` (an address, or a replay's
    ``deployment.json`` or its folder, ``attach_deployment``), its logs read from
    ``from_block`` (a deployment file's block when not given). ``FieldError`` naming the
    field."""
    from pastcast_arena._chain import EvmArena, attach_deployment, node_web3
    from pastcast_arena._reputation import chain_leaderboard

    _http_url("from_chain", rpc_url)
    path = Path(arena) / DEPLOYMENT_FILE if Path(arena).is_dir() else Path(arena)
    if not arena.startswith("0x") and not path.is_file():
        raise FieldError("arena", f"{arena}: neither an address nor a deployment file")
    try:
        if arena.startswith("0x"):
            found = EvmArena.attach(node_web3(rpc_url), arena, from_block=from_block)
        else:
            found = attach_deployment(path, rpc_url)
            found.deploy_block = from_block or found.deploy_block
        return chain_leaderboard(found)
    except ImportError as exc:
        raise FieldError("from_chain", str(exc)) from None
    except ValueError as exc:  # no arena there, or no reputation entry
        raise FieldError("arena", str(exc)) from None
    except (OSError, RuntimeError) as exc:  # a node that does not answer
        raise FieldError("from_chain", f"{rpc_url}: {exc}") from None


ROUNDS_FILE = "rounds.jsonl"
LEDGER_FILE = "ledger.jsonl"


def _read_rounds(arena: str | Path) -> tuple[Path, tuple[RoundResult, ...]]:
    """The ``rounds.jsonl`` at ``arena`` (or in the folder ``arena``) and its rounds;
    ``FieldError`` on ``arena`` when there is none, it cannot be read or it holds no round."""
    from pastcast_arena._replay import read_results

    path = Path(arena) / ROUNDS_FILE if Path(arena).is_dir() else Path(arena)
    if not path.is_file():
        raise FieldError("arena", f"{arena}: no {ROUNDS_FILE} (an arena replay's folder)")
    try:
        results = read_results(path)
    except (OSError, ValueError) as exc:
        raise FieldError("arena", f"{path}: {exc}") from None
    if not results:
        raise FieldError("arena", f"{path}: no rounds")
    return path, results


def arena_rounds_report(rounds: str | Path) -> ArenaReport:
    """The report of an arena replay's or simulation's ``rounds.jsonl`` (or the folder holding
    one). ``FieldError`` on ``arena``."""
    from pastcast_arena._stats import arena_report

    path, results = _read_rounds(rounds)
    try:
        return arena_report(results)
    except ValueError as exc:  # no scored round
        raise FieldError("arena", f"{path}: {exc}") from None


def arena_sections(
    run_logs: Sequence[str | Path], arena: str | Path | None = None
) -> tuple[ReportSection, ...]:
    """The arena rounds to report beside ``run_logs``: those of ``arena`` (an arena replay's
    folder, or its ``rounds.jsonl``), else of every run log that an arena replay wrote (a
    ``rounds.jsonl`` beside it). The ledger beside the rounds, where there is one, is verified
    and its commits and reveals counted."""
    from pastcast_arena._section import arena_section

    found: list[str | Path] = [arena] if arena is not None else []
    for log in run_logs if arena is None else ():
        beside = Path(log).parent / ROUNDS_FILE
        if beside.is_file() and beside not in found:
            found.append(beside)
    sections = []
    for given in found:
        rounds, results = _read_rounds(given)
        ledger = rounds.parent / LEDGER_FILE
        title = "Arena rounds" if len(found) == 1 else f"Arena rounds: {rounds.parent.name}"
        try:
            sections.append(
                arena_section(results, ledger=ledger if ledger.is_file() else None, title=title)
            )
        except ValueError as exc:  # no scored round, or a ledger that does not verify
            raise FieldError("arena", f"{rounds.parent}: {exc}") from None
    return tuple(sections)


@dataclass(frozen=True)
class ArenaSimulation:
    """The simulation study at one seed and, with the paper's tables, beside them: this seed's
    figures (``beside``) and the summary over seeds 0..N-1 with its figures (``over``)."""

    result: SimulationResult
    beside: tuple[PaperComparison, ...] = ()
    summary: SeedSummary | None = None
    over: tuple[PaperComparison, ...] = ()
    figures: bool = False
    """Whether Figures 2b and 5 were written (matplotlib, the reports extra, is installed)."""

    def as_dict(self) -> dict[str, Any]:
        """The JSON shape: the config, the report (less the per-round rows), the power table
        and, with the paper's tables, every comparison with its residual."""
        result = self.result
        out = {
            "config": result.config.model_dump(mode="json"),
            **result.report.model_dump(mode="json", exclude={"per_round"}),
            "power": [p.model_dump(mode="json") for p in result.power],
        }
        if self.summary is not None:
            out |= {
                "paper": [c.model_dump(mode="json") for c in self.beside],
                "seeds": self.summary.model_dump(mode="json"),
                "paper_seeds": [c.model_dump(mode="json") for c in self.over],
            }
        return out


def arena_simulation(
    config: SimulationConfig, *, out: Path | None = None, paper_seeds: int | None = None
) -> ArenaSimulation:
    """The simulation study under ``config``; with ``out`` (a folder the caller made), its
    ``rounds.jsonl`` and Figures 2b and 5 written there; with ``paper_seeds``, the paper's
    Tables 5-7 beside this seed's figures and beside the summary over seeds 0..N-1."""
    from pastcast_arena._paper import compare_seeds_with_paper, compare_with_paper
    from pastcast_arena._replay import write_results
    from pastcast_arena._seeds import across_seeds
    from pastcast_arena._simulation import simulate

    result = simulate(config)
    figures = False
    if out is not None:
        write_results(out / ROUNDS_FILE, result.results)
        with suppress(ImportError):  # the reports extra may be absent
            from pastcast_arena._section import write_arena_figures

            figures = bool(write_arena_figures(result.report, out))
    if paper_seeds is None:
        return ArenaSimulation(result, figures=figures)
    labels = {a.name: a.paper_label for a in result.config.archetypes}
    summary = across_seeds(result.config, range(paper_seeds))
    return ArenaSimulation(
        result,
        compare_with_paper(result.report, labels),
        summary,
        compare_seeds_with_paper(summary, labels),
        figures,
    )
