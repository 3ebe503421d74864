"""`pastcast arena ...`: Foresight Arena's simulation, commitments, replays, relayer, ledger."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from pastcast import safejson
from pastcast.cli._common import fail, output_dir, print_json

app = typer.Typer(
    help="Foresight Arena: commit-reveal rounds scored against the market (simulation, "
    "replays of resolved markets, relayer, ledger).",
    no_args_is_help=True,
)


def _spec_option(option: str, what: str) -> tuple[str, dict[str, Any]]:
    """``NAME[:key=value,...]`` -> (name, arguments); values are JSON when they parse."""
    name, _, rest = option.partition(":")
    args: dict[str, Any] = {}
    for item in filter(None, rest.split(",")):
        key, eq, val = item.partition("=")
        if not eq or not key.strip():
            fail(f"{what} {option!r}: expected key=value, got {item!r}")
        try:
            args[key.strip()] = safejson.loads(val)
        except json.JSONDecodeError:
            args[key.strip()] = val.strip()
    return name.strip(), args


def _print_leaderboard(report: Any) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"{report.rounds} rounds, market Brier {report.market_brier:.4f}")
    for col in ("agent", "rounds", "Brier", "alpha", "t", "beat %", "alpha (shrunk)"):
        table.add_column(col, justify="left" if col == "agent" else "right")
    for row in report.leaderboard:
        se = f" ± {row.alpha_se:.4f}" if row.alpha_se is not None else ""
        table.add_row(
            row.agent + (" (reference)" if row.role != "agent" else ""),
            str(row.rounds),
            f"{row.brier:.4f}",
            f"{row.alpha:+.4f}{se}",
            "-" if row.t is None else f"{row.t:+.2f}",
            f"{100 * row.beat_market:.0f}",
            f"{row.shrunk_alpha:+.4f}" + (" provisional" if row.provisional else ""),
        )
    Console().print(table)


@app.command("simulate")
def simulate(
    seed: int = typer.Option(137, min=0, help="Seed of numpy's default RNG."),
    # Bounded: 10,000 rounds take seconds, 100,000 over a minute and gigabytes.
    rounds: int = typer.Option(50, min=1, max=10_000, help="Rounds R."),
    markets: int = typer.Option(7, min=1, max=64, help="Markets per round k."),
    out: Path | None = typer.Option(None, help="Also write rounds.jsonl (every round) here."),
    json_: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """The paper's simulation study: leaderboard, Murphy and category tables, cumulative alpha,
    and the power table of Proposition 3. The same seed gives byte-identical output."""
    from pastcast.arena import SimulationConfig
    from pastcast.arena import simulate as run_simulation

    if out is not None:
        output_dir(out, "--out", "simulation")
    result = run_simulation(SimulationConfig(seed=seed, rounds=rounds, markets=markets))
    if out is not None:
        with (out / "rounds.jsonl").open("w", encoding="utf-8") as fh:
            for res in result.results:
                fh.write(res.model_dump_json() + "\n")
    if json_:
        report = result.report.model_dump(mode="json", exclude={"per_round"})
        print_json(
            {
                "config": result.config.model_dump(mode="json"),
                **report,
                "power": [p.model_dump(mode="json") for p in result.power],
            }
        )
        return
    _print_leaderboard(result.report)
    for p in result.power:
        typer.echo(f"alpha* {p.alpha:.3f}: {p.predictions} predictions, {p.rounds} rounds")


def _parse_predictions(text: str) -> list[int]:
    out = []
    for i, item in enumerate(text.split(",")):
        try:
            out.append(int(item.strip()))
        except ValueError:
            fail(f"--predictions: item {i + 1} ({item.strip()!r}) is not an integer")
    return out


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
    from pastcast.arena import commitment

    preds = _parse_predictions(predictions)
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


def _load_dataset(path: Path) -> Any:
    from pastcast.dataset import load_dataset

    if not path.is_dir():
        fail(f"--dataset {path}: not a dataset directory")
    try:
        return load_dataset(path)
    except (OSError, ValueError) as exc:  # a truncated table, a manifest that is not JSON
        fail(f"--dataset {path}: {exc}")


def _load_corpus(corpus: Path | None) -> Any:
    if corpus is None:
        return None
    from pastcast.corpus import EmbeddedIndex

    if not (corpus / "manifest.json").is_file():
        fail(f"--corpus {corpus}: not an index directory (build one with 'pastcast corpus build')")
    try:
        return EmbeddedIndex.open(corpus)
    except (OSError, ValueError, KeyError, TypeError) as exc:  # a damaged index
        fail(f"--corpus {corpus}: not a readable index ({type(exc).__name__}: {exc})")


@app.command("replay")
def replay(
    dataset: Path = typer.Option(..., help="A dataset directory (pastcast data import ...)."),
    agent: list[str] = typer.Option(
        ..., "--agent", "-a", help="Agent as NAME[:key=value,...][@setting]; repeatable."
    ),
    out: Path = typer.Option(Path("runs/arena"), help="Output directory."),
    corpus: Path | None = typer.Option(None, help="Corpus index directory for research agents."),
    backend: str = typer.Option("ledger", help="'ledger' (a ledger file) or 'evm' (py-evm)."),
    markets: int = typer.Option(7, min=1, max=64, help="Markets per round."),
    rounds: int = typer.Option(20, min=1, max=10_000, help="Rounds to build (at most)."),
    interval_days: int = typer.Option(7, min=1, max=3650, help="Days between commit deadlines."),
    start: str | None = typer.Option(None, help="First commit deadline (ISO date or instant)."),
    selector: str = typer.Option(
        "volume-activity", help="Market selector NAME[:key=value,...] (volume-activity, random)."
    ),
    resolve_by: str | None = typer.Option(
        None, help="Markets resolved after this instant count as unresolved (excluded)."
    ),
    json_: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Replay resolved markets as arena rounds: agents forecast each market as of the commit
    deadline, commit, reveal and are scored per round."""
    from pastcast.arena import SELECTORS, EvmArena, LedgerArena, RoundPlan
    from pastcast.arena import replay as run_replay
    from pastcast.cli._specs import check_agents, parse_agent_option
    from pastcast.cutoff import parse_cutoff
    from pastcast.registry import RegistryError

    try:
        specs = [parse_agent_option(a) for a in agent]
        sel_name, sel_args = _spec_option(selector, "--selector")
        plan = RoundPlan(
            markets=markets,
            rounds=rounds,
            interval_days=interval_days,
            start=parse_cutoff(start) if start is not None else None,
            selector=SELECTORS.spec(sel_name, **sel_args),
        )
        cutoff = parse_cutoff(resolve_by) if resolve_by is not None else None
    except (ValueError, RegistryError) as exc:
        fail(str(exc))
    if backend not in ("ledger", "evm"):
        fail(f"--backend {backend!r}: choose 'ledger' or 'evm'")
    check_agents(specs)
    ds = _load_dataset(dataset)
    index = _load_corpus(corpus)
    output_dir(out, "--out", "arena-replay")
    ledger_path = out / "ledger.jsonl"
    try:
        if backend == "evm":
            arena: Any = EvmArena()
        else:
            if ledger_path.exists():
                fail(f"{ledger_path}: already exists (replay into a new --out directory)")
            arena = LedgerArena.create(ledger_path)
        result = run_replay(ds, index, specs, out, arena, plan=plan, resolve_by=cutoff)
    except ImportError as exc:
        fail(str(exc))
    except ValueError as exc:
        fail(str(exc))
    if json_:
        print_json(
            {
                "dataset": ds.id,
                "backend": backend,
                "rounds_file": str(out / "rounds.jsonl"),
                "run_log": str(result.run_log),
                "failures": result.failures,
                **result.report.model_dump(mode="json"),
            }
        )
        return
    _print_leaderboard(result.report)
    typer.echo(f"rounds: {out / 'rounds.jsonl'}; run log: {result.run_log}")


@app.command("report")
def report(
    rounds: Path = typer.Argument(..., help="A rounds.jsonl file (from replay or simulate)."),
    json_: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Leaderboard, Murphy and category tables of finished rounds."""
    from pastcast.arena import arena_report, read_results

    if not rounds.is_file():
        fail(f"{rounds}: no such file")
    try:
        rep = arena_report(read_results(rounds))
    except ValueError as exc:
        fail(str(exc))
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
    import os

    from pastcast.arena import EvmArena, LedgerArena, LedgerError, RelayerPolicy, create_relayer

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
    from pastcast.arena import LedgerError, verify_ledger

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
    from pastcast.arena import artifacts, compile_contracts, write_artifacts

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
