"""`pastcast data curate`: a new dataset of the events a judge finds fair and answerable from the
archive, with the funnel of what each stage removed and why."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Annotated, Any, Literal

import typer

from pastcast.cli._common import EXIT_FAILED, JsonFlag, fail, load_dataset_option, print_json
from pastcast.cli._corpus import open_corpus
from pastcast.owned import check_replaceable

LEGS = ("bm25", "dense")


def _legs(value: str) -> list[str]:
    legs = [leg.strip() for leg in value.split(",") if leg.strip()]
    bad = [leg for leg in legs if leg not in LEGS]
    if not legs or bad or len(set(legs)) != len(legs):
        fail(f"--retrieval: expected a comma-separated list of {', '.join(LEGS)}, got {value!r}")
    return legs


def _check_output(path: Path, option: str, kind: str | None) -> None:
    """Refuse, before any work, a folder that cannot be written: one pastcast did not make (a
    dataset is replaced only when pastcast wrote it), a file, a name the file system refuses."""
    if kind is not None:
        try:
            check_replaceable(path, kind)
        except FileExistsError as exc:
            fail(f"{option}: {exc}")
    elif path.exists() and not path.is_dir():
        fail(f"{option}: {path}: exists and is not a directory")
    if path.exists():
        return
    try:  # made and removed again: the real one is written at the end
        path.mkdir(parents=True)
        path.rmdir()
    except OSError as exc:
        fail(f"{option}: {path}: cannot be created ({exc.strerror or exc})")


def _metadata(spec: str) -> dict[str, Any]:
    """The source dataset's metadata (its import funnel, provenance), carried over."""
    from pastcast.world import is_world_spec

    if is_world_spec(spec):
        return {"name": "world", "provenance": {"source": spec}}
    from pastcast.dataset import read_metadata

    try:
        return read_metadata(spec)
    except ValueError:
        return {}


def curate(
    dataset: Annotated[
        str, typer.Argument(help="Dataset directory, or 'world[:SEED]' (the embedded world).")
    ],
    corpus: Annotated[
        str,
        typer.Option(
            "--corpus",
            help="The archive: an index directory or a PostgreSQL URL (for the world, build one "
            "with 'pastcast corpus build world:SEED --out DIR').",
        ),
    ],
    judge: Annotated[
        str,
        typer.Option(
            "--judge",
            help="The judge model spec (openai:NAME, openai-compatible:NAME@URL, local:PATH.gguf, "
            "local:smollm2, scripted:FILE, or a provider plugin's).",
        ),
    ],
    out: Annotated[Path, typer.Option("--out", help="Curated dataset directory to write.")],
    retrieval: Annotated[
        str,
        typer.Option(
            "--retrieval",
            help="Retrieval legs fused by reciprocal rank: bm25,dense (dense needs the 'dense' "
            "extra), or one of them.",
        ),
    ] = "bm25,dense",
    embedder: Annotated[
        str | None, typer.Option(help="The dense leg's embedder (registered name).")
    ] = None,
    window_days: Annotated[
        int,
        typer.Option(
            min=0,
            max=36500,
            help="Only documents this many days before the judging date (0: no limit).",
        ),
    ] = 180,
    keep_coverage: Annotated[
        Literal["strong", "weak", "none"],
        typer.Option(help="The weakest coverage label kept by the coverage probe."),
    ] = "strong",
    coverage: Annotated[
        bool, typer.Option(help="Run the coverage probe (--no-coverage skips it).")
    ] = True,
    coverage_queries: Annotated[
        int, typer.Option(min=1, max=20, help="Coverage probe: queries (and blocks) per outcome.")
    ] = 5,
    balance: Annotated[
        bool, typer.Option(help="Balance YES/NO outcomes, then topics (--no-balance skips it).")
    ] = True,
    topics: Annotated[
        Literal["source", "judge", "auto"],
        typer.Option(
            help="Topics for balancing: the source's category or tag, the judge's classifier, "
            "or the source where it has one (auto)."
        ),
    ] = "auto",
    seed: Annotated[int, typer.Option(help="Seed of the balancing draw.")] = 0,
    min_dates: Annotated[
        int, typer.Option(min=0, max=10_000, help="Forecast dates an evaluation event must keep.")
    ] = 3,
    max_tokens: Annotated[
        int, typer.Option(min=16, max=100_000, help="Most tokens of one judge reply.")
    ] = 512,
    cache: Annotated[
        Path | None,
        typer.Option(
            help="Judgement cache folder (default: OUT.judge-cache beside OUT); a repeated "
            "request is answered from it, so re-curating makes no new model calls."
        ),
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Curate a dataset: forecast dates, query decomposition, the evidence and leakage judge,
    the coverage probe and balancing; writes a new dataset with the funnel."""
    from pastcast.curate import CurationConfig, Judge, Retriever, curate_dataset, save_curation
    from pastcast.models import CachedModel, ModelError, check_model_spec, resolve_model

    try:  # before the dataset and the corpus are read (minutes, for a large archive)
        check_model_spec(judge)
    except ValueError as exc:
        fail(f"--judge: {exc}")
    legs = _legs(retrieval)
    if embedder is not None and "dense" not in legs:
        fail("--embedder: only with a dense leg in --retrieval")
    if Path(dataset).resolve() == out.resolve():
        fail(f"--out: {out}: is the dataset being curated; write the curated one elsewhere")
    _check_output(out, "--out", "dataset")
    cache_dir = cache or out.with_name(out.name + ".judge-cache")
    _check_output(cache_dir, "--cache", None)
    data = load_dataset_option(dataset, "DATASET")
    config = CurationConfig(
        keep_coverage=keep_coverage,
        coverage=coverage,
        coverage_queries=coverage_queries,
        balance=balance,
        topics=topics,
        seed=seed,
        min_dates=min_dates,
    )
    opened = []
    try:
        for leg in legs:
            options = {"embedder": embedder} if leg == "dense" and embedder else {}
            opened.append(open_corpus(corpus, leg, "--corpus", **options))
        try:
            model = resolve_model(judge)
        except (ValueError, ModelError) as exc:
            fail(f"--judge: {exc}")
        cached = CachedModel(model, cache_dir, "auto", settings={"spec": judge})
        try:
            retriever = Retriever(opened, window_days=window_days or None)
            result = curate_dataset(data, retriever, Judge(cached, max_tokens=max_tokens), config)
            settings = {
                "source_dataset": data.id,
                "judge": judge,
                "retrieval": legs,
                "window_days": window_days or None,
                "corpus": opened[0].identity().model_dump(mode="json"),
                "config": config.model_dump(mode="json"),
            }
            if result.dataset.events:  # an empty dataset is never written as if it were a result
                save_curation(result, out, metadata=_metadata(dataset), settings=settings)
        finally:
            close = getattr(model, "close", None)
            if callable(close):  # a local model's server
                close()
    finally:
        for backend in opened:
            backend.close()
    _report(result, out, cache_dir, as_json)
    if not result.dataset.events:
        last = next((f for f in reversed(result.funnel) if f.removed), result.funnel[0])
        fail(
            f"no events are left to write (the last removed at stage {last.stage!r}: "
            f"{last.note or 'none'}); nothing written; the judgements are cached in {cache_dir}",
            EXIT_FAILED,
        )


def _report(result: Any, out: Path, cache_dir: Path, as_json: bool) -> None:
    """The funnel and the judgement counts (on stdout, written or not)."""
    ds = result.dataset
    served = sum(j.cached for j in result.judgements)
    written = bool(ds.events)
    if as_json:
        print_json(
            {
                "dataset_id": ds.id,
                "out": str(out) if written else None,
                "events": len(ds.events),
                "steps": len(ds.steps),
                "funnel": [asdict(stage) for stage in result.funnel],
                "judgements": len(result.judgements),
                "cached": served,
            }
        )
        return
    if written:
        typer.echo(f"wrote {ds.id} to {out}: {len(ds.events)} events, {len(ds.steps)} steps")
    for stage in result.funnel:
        line = f"  {stage.stage:<28} -{stage.removed:<5} {stage.remaining:>5}  {stage.note}"
        typer.echo(line.rstrip())
    where = f"; recorded in {out / 'curation'}" if written else ""
    typer.echo(
        f"judgements: {len(result.judgements)} ({served} from the cache {cache_dir}, "
        f"{len(result.judgements) - served} new){where}"
    )
