"""`pastcast arena ...`: Foresight Arena's simulation, commitments, replays, relayer, ledger (a
command group of the ``pastcast`` CLI, through its ``pastcast.commands`` entry point)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import typer

from pastcast.cli import (
    fail,
    fail_app,
    field_help,
    note,
    options_record,
    output_dir,
    print_json,
    undone_on_usage_error,
)
from pastcast.errors import FieldError

app = typer.Typer(
    help="Foresight Arena: commit-reveal rounds scored against the market (simulation, "
    "replays of resolved markets, relayer, ledger).",
    no_args_is_help=True,
)


def _print_table(table: Any) -> None:
    from rich.console import Console

    from pastcast.reports import to_rich

    console = Console()
    if not console.is_terminal:  # a pipe or a file: rows whole, as pastcast's own tables
        console = Console(width=200)
    console.print(to_rich(table, console.width))


def _print_leaderboard(report: Any) -> None:
    from pastcast_arena._section import leaderboard_table

    title = f"{report.rounds} rounds, market Brier {report.market_brier:.4f}"
    _print_table(leaderboard_table(report.leaderboard, title))


@app.command("simulate")
def simulate(
    seed: int = typer.Option(137, min=0, help="Seed of numpy's default RNG."),
    # Bounded: 10,000 rounds take seconds, 100,000 over a minute and gigabytes.
    rounds: int = typer.Option(50, min=1, max=10_000, help="Rounds R."),
    markets: int = typer.Option(7, min=1, max=64, help="Markets per round k."),
    out: Path | None = typer.Option(
        None, help="Also write rounds.jsonl (every round) and Figures 2b and 5 here."
    ),
    paper: bool = typer.Option(
        False,
        "--paper",
        help="Also set every figure of the paper's Tables 5-7 beside ours: this seed's, and "
        "the mean and 5-95% range over --seeds seeds.",
    ),
    seeds: int = typer.Option(200, min=2, max=2000, help="Seeds 0..N-1 of --paper's summary."),
    json_: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """The paper's simulation study: leaderboard, Murphy and category tables, cumulative alpha,
    and the power table of Proposition 3. The same seed gives byte-identical output."""
    from pastcast_arena._paper import paper_table
    from pastcast_arena._simulation import SimulationConfig
    from pastcast_arena._workflows import arena_simulation

    if out is not None:
        output_dir(out, "--out", "simulation")
    config = SimulationConfig(seed=seed, rounds=rounds, markets=markets)
    study = arena_simulation(config, out=out, paper_seeds=seeds if paper else None)
    if out is not None and not study.figures:
        note("figures: not drawn (matplotlib, the reports extra, is not installed)", json_)
    if json_:
        print_json(study.as_dict())
        return
    _print_leaderboard(study.result.report)
    for p in study.result.power:
        typer.echo(f"alpha* {p.alpha:.3f}: {p.predictions} predictions, {p.rounds} rounds")
    if study.summary is not None:
        summary = study.summary
        _print_table(paper_table(study.beside, f"seed {seed}, R = {rounds}, k = {markets}"))
        _print_table(paper_table(study.over, f"mean and 5-95% range over seeds 0-{seeds - 1}"))
        calibrated = max(summary.rows, key=lambda r: r.lowest_reliability)
        typer.echo(
            f"significant (|t| >= 2) at some frontier-like archetype: "
            f"{summary.any_frontier_significant:.0%} of seeds; at a q-anchored or "
            f"calibration-driven one: {summary.any_q_significant:.0%}; the lowest REL: "
            f"{calibrated.agent} at {calibrated.lowest_reliability:.0%}"
        )


@app.command("calibrate")
def calibrate(json_: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """Fit the simulation's parameters to the paper's Tables 5-7 as means over seeds 0-399 (a
    few minutes): the fitted configuration, then every figure's mean beside the paper's."""
    from pastcast_arena._calibration import calibrate_simulation
    from pastcast_arena._paper import paper_table

    fit = calibrate_simulation()
    if json_:
        paper = [c.model_dump(mode="json") for c in fit.comparison]
        print_json({"config": fit.config.model_dump(mode="json"), "paper": paper})
        return
    typer.echo(fit.config.model_dump_json(indent=2))
    _print_table(paper_table(fit.comparison, "mean and 5-95% range over the fitted seeds"))


@app.command("commit-hash")
def commit_hash(
    round_id: int = typer.Option(..., "--round-id", min=0, help="Round id (uint256)."),
    predictions: str = typer.Option(
        ..., help="Predictions in basis points, comma-separated (e.g. 6000,2500)."
    ),
    salt: str = typer.Option(..., help="32-byte salt as 0x-prefixed hex."),
    json_: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """keccak256(abi.encodePacked(uint256 roundId, uint16[] predictions, bytes32 salt)), exactly
    as the contract computes it."""
    from pastcast_arena._protocol import commitment

    preds = []
    for i, item in enumerate(predictions.split(",")):
        try:
            preds.append(int(item.strip()))
        except ValueError:
            fail(f"--predictions: item {i + 1} ({item.strip()!r}) is not an integer")
    try:
        c = commitment(round_id, preds, salt)
    except ImportError as exc:
        fail(str(exc))
    except ValueError as exc:
        fail(f"--salt/--predictions: {exc}")
    if json_:
        print_json({"round_id": round_id, "predictions": preds, "salt": salt, "commitment": c})
    else:
        typer.echo(c)


def _replay_option(default: Any, name: str, *opts: str, **limits: Any) -> Any:
    """An arena replay's option, its help the record's documentation of the field."""
    from pastcast_arena._workflows import ArenaReplayPlan

    return typer.Option(default, *opts, help=field_help(ArenaReplayPlan, name), **limits)


@app.command("replay")
def replay(
    ctx: typer.Context,
    dataset: str = _replay_option(..., "dataset"),
    agent: list[str] = _replay_option(..., "agents", "--agent", "-a"),
    out: Path = _replay_option(Path("runs/arena"), "out"),
    corpus: str | None = _replay_option(None, "corpus"),
    retrieval: str = _replay_option("bm25", "retrieval"),
    embedder: str | None = _replay_option(None, "embedder"),
    backend: str = _replay_option("ledger", "backend"),
    rpc_url: str | None = _replay_option(None, "rpc_url", "--rpc-url"),
    markets: int = _replay_option(7, "markets", min=1, max=64),
    rounds: int = _replay_option(20, "rounds", min=1, max=10_000),
    interval_days: int = _replay_option(7, "interval_days", min=1, max=3650),
    start: str | None = _replay_option(None, "start"),
    selector: str = _replay_option("volume-activity", "selector"),
    resolve_by: str | None = _replay_option(None, "resolve_by"),
    clob_cache: Path | None = _replay_option(None, "clob_cache", "--clob-cache"),
    clob_url: str | None = _replay_option(None, "clob_url", "--clob-url"),
    data_url: str | None = _replay_option(None, "data_url", "--data-url"),
    preset: str | None = _replay_option(None, "preset"),
    json_: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Replay resolved markets as arena rounds: agents forecast each market as of the commit
    deadline, commit, reveal and are scored per round."""
    from pastcast_arena._workflows import ArenaReplayPlan, arena_replay

    plan = options_record(ctx, ArenaReplayPlan, {"agent": "agents", "json_": None})
    with undone_on_usage_error(out):
        try:
            output_dir(out, "--out", "arena-replay")
            played = arena_replay(plan)
        except FieldError as exc:
            fail_app(exc, {"agents": "--agent"})
        except ValueError as exc:  # no round qualifies, a dataset without binary markets
            fail(str(exc))
    result = played.replay
    if json_:
        print_json(
            {
                "dataset": played.dataset_id,
                "backend": backend,
                "rounds_file": str(out / "rounds.jsonl"),
                "run_log": str(result.run_log),
                "round_log": None if result.round_log is None else str(result.round_log),
                "deployment": None if played.deployment is None else str(played.deployment),
                "failures": result.failures,
                **result.report.model_dump(mode="json"),
            }
        )
        return
    _print_leaderboard(result.report)
    logs = [str(result.run_log)]
    if result.round_log is not None and result.round_log != result.run_log:
        logs.append(f"{result.round_log} (round-level agents)")
    typer.echo(f"rounds: {out / 'rounds.jsonl'}; run log: {'; '.join(logs)}")
    if played.deployment is not None:
        typer.echo(f"deployment: {played.deployment} (pastcast arena report --from-chain URL)")


@app.command("report")
def report(
    rounds: Path | None = typer.Argument(
        None, help="A rounds.jsonl file (from replay or simulate); not with --from-chain."
    ),
    from_chain: str | None = typer.Option(
        None,
        "--from-chain",
        help="Read the leaderboard from the chain of this JSON-RPC node's URL alone (the "
        "arena's feedback in the reputation registry, the identity registry, the arena's logs).",
    ),
    arena: str | None = typer.Option(
        None,
        help="With --from-chain: the arena contract's address (the feedback client the "
        "leaderboard reads), or a replay's deployment.json (or its folder).",
    ),
    from_block: int = typer.Option(
        0, min=0, help="With --from-chain: read logs from this block (default: the deployment's)."
    ),
    json_: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Leaderboard, Murphy and category tables of finished rounds; with --from-chain, the
    leaderboard as the chain's registries record it."""
    if from_chain is not None:
        if rounds is not None:
            fail("give a rounds file or --from-chain, not both")
        if arena is None:
            fail("--from-chain: give --arena (an address or a deployment.json)")
        from pastcast_arena._section import leaderboard_table
        from pastcast_arena._workflows import arena_chain_leaderboard

        try:
            rows = arena_chain_leaderboard(from_chain, arena, from_block=from_block)
        except FieldError as exc:
            fail_app(exc, {"from_chain": "--from-chain", "arena": "--arena"})
        if json_:
            board = [r.model_dump(mode="json") for r in rows]
            print_json(
                {"source": "chain", "rpc_url": from_chain, "arena": arena, "leaderboard": board}
            )
        else:
            _print_table(leaderboard_table(rows, f"read from the chain at {from_chain}"))
        return
    if arena is not None or from_block:
        fail("--arena/--from-block go with --from-chain")
    if rounds is None:
        fail("give a rounds file (or --from-chain URL)")
    from pastcast_arena._workflows import arena_rounds_report

    try:
        rep = arena_rounds_report(rounds)
    except FieldError as exc:
        fail(exc.reason)
    if json_:
        print_json(rep.model_dump(mode="json"))
    else:
        _print_leaderboard(rep)


@app.command("serve")
def serve(
    ledger: Path | None = typer.Option(None, help="Ledger file to relay to (created if absent)."),
    evm: bool = typer.Option(False, "--evm", help="Relay to a fresh in-process EVM chain."),
    host: str = typer.Option("127.0.0.1", help="Interface to bind (loopback by default)."),
    port: int = typer.Option(8787, min=1, max=65535, help="Port."),
    per_minute: int = typer.Option(30, min=1, help="Accepted submissions per agent a minute."),
) -> None:
    """Run the gasless relayer: POST /commit and /reveal with EIP-712 signed messages. The
    curator's /admin/... actions are on when PASTCAST_ARENA_ADMIN_TOKEN is set."""
    from pastcast_arena._chain import EvmArena
    from pastcast_arena._ledger import LedgerArena, LedgerError
    from pastcast_arena._relayer import RelayerPolicy, create_relayer

    if (ledger is None) == (not evm):
        fail("give exactly one of --ledger FILE or --evm")
    if not host.strip() or not host.isascii() or any(c.isspace() for c in host):
        fail(f"--host {host!r}: not a host name or address")
    from pastcast.serving import listen, serve_app

    try:
        sock = listen(host, port)  # before the ledger is made
    except ValueError as exc:
        fail(f"--host/--port: {exc}")
    try:
        import uvicorn  # noqa: F401  (serve_app's)

        if evm:
            backend: Any = EvmArena()
        else:
            assert ledger is not None
            exists = ledger.exists() and ledger.stat().st_size > 0
            backend = LedgerArena.open(ledger) if exists else LedgerArena.create(ledger)
        token = os.environ.get("PASTCAST_ARENA_ADMIN_TOKEN") or None
        app_ = create_relayer(backend, RelayerPolicy(per_minute=per_minute), admin_token=token)
    except ImportError as exc:
        fail(f"{exc} (the relayer needs the 'arena' extra)")
    except LedgerError as exc:
        fail(str(exc))
    typer.echo(f"relayer on http://{host}:{port} -> {ledger or 'in-process EVM'}")
    serve_app(app_, sock)


@app.command("verify")
def verify(
    ledger: Path = typer.Argument(..., help="The ledger file (JSON lines)."),
    snapshot: Path | None = typer.Option(None, help="Also write its tables to this directory."),
    fmt: str = typer.Option("csv", "--format", help="Snapshot format: csv or parquet."),
    json_: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Check a ledger: the hash chain, every signature, commitment, rule and score. Exit 1 (with
    the first problem) when it does not verify."""
    from pastcast_arena._ledger import LedgerError, verify_ledger

    if fmt not in ("csv", "parquet"):
        fail(f"--format {fmt!r}: choose csv or parquet")
    try:
        summary = verify_ledger(ledger)
    except LedgerError as exc:
        fail(str(exc), code=1)
    except ImportError as exc:
        fail(str(exc))
    snap = summary.snapshot
    if snapshot is not None:
        snap.save(
            output_dir(snapshot, "--snapshot", "snapshot"), "csv" if fmt == "csv" else "parquet"
        )
    counts = {t: len(getattr(snap, t)) for t in snap.TABLES}
    if json_:
        print_json(
            {
                "ledger": str(ledger),
                "ok": True,
                "lines": summary.lines,
                "head": summary.head,
                **counts,
            }
        )
    else:
        typer.echo(
            f"{ledger}: OK, {summary.lines} lines, head {summary.head[:16]}; "
            + ", ".join(f"{v} {k}" for k, v in counts.items())
        )


@app.command("compile")
def compile_(
    write: bool = typer.Option(False, help="Write the artifacts instead of comparing."),
) -> None:
    """Recompile the contracts with solcjs and compare with (or --write) the shipped artifacts."""
    from pastcast_arena._contracts import artifacts, compile_contracts, write_artifacts

    try:
        compiled = compile_contracts()
    except RuntimeError as exc:
        fail(str(exc))
    if write:
        typer.echo(f"wrote {write_artifacts(compiled)}")
        return
    shipped = artifacts()
    differ = [n for n, c in compiled["contracts"].items() if shipped.get(n) != c]
    if differ:
        fail(f"the shipped artifacts differ from the sources: {', '.join(differ)}", code=1)
    typer.echo(f"artifacts match solc {compiled['solc']}")


@app.command("live")
def live(
    plan: Path = typer.Argument(..., help="The live plan (YAML, TOML or JSON)."),
    json_: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Run live rounds of open Polymarket markets: discover, create the round, forecast within
    the lead time of the commit deadline, commit, reveal, score; until the plan's rounds are
    finished. A restart with the same plan continues where the last one stopped."""
    from pastcast_arena._live_file import arena_live

    try:
        result = arena_live(plan, note=lambda line: typer.echo(line, err=True))
    except FieldError as exc:
        fail_app(exc)
    if json_:
        print_json(result.as_dict())
        return
    for r in result.round_states():
        typer.echo(f"round {r['index']} (arena round {r['round_id']}): {r['status']}")
    if result.report is not None:
        _print_leaderboard(result.report)
    else:
        note("no round scored yet", json_)
