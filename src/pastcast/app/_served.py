"""One forecast step's episode served to an agent of any framework (``serve_episode``).

Over stdio (the Model Context Protocol's own transport: the agent's MCP client talks on this
process's stdin/stdout) or over HTTP/JSON on the loopback interface. The episode is built as a
run builds it, with its cutoff bound in the server, and ends by the runner's one rule
(``pastcast.runner.play_episode``): the forecast, a spent budget or an agent that left without
one, recorded as a run records it.
"""

from __future__ import annotations

import contextlib
import json
import logging
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from pastcast.app._fields import as_field
from pastcast.app._open import open_dataset
from pastcast.app._replays import open_replay
from pastcast.app._runs import check_sandbox
from pastcast.env import EnvConfig, Episode, ForecastEnv
from pastcast.errors import FieldError
from pastcast.models import resolve_model
from pastcast.owned import check_new_file, write_new_file
from pastcast.records import EpisodeRecord, Forecast
from pastcast.runner import play_episode
from pastcast.toolserver import EpisodeServer, HttpToolServer, serve_stdio

__all__ = ["ServedEpisode", "serve_episode"]

_log = logging.getLogger("pastcast")


@dataclass(frozen=True)
class ServedEpisode:
    """How a served episode ended: the forecast (unusable, saying why, when none came) and the
    episode's record."""

    forecast: Forecast
    episode: EpisodeRecord

    def as_dict(self) -> dict[str, object]:
        return {
            "forecast": self.forecast.model_dump(mode="json"),
            "episode": self.episode.model_dump(mode="json"),
        }


class _ServedAgent:
    """The agent on the other side of the server, as ``play_episode`` plays an agent."""

    def __init__(self, server: EpisodeServer, serve: Callable[[EpisodeServer], None]) -> None:
        self.server = server
        self.serve = serve

    def forecast(self, episode: Episode) -> Forecast:
        self.serve(self.server)
        forecast = self.server.outcome()
        if forecast is None:
            raise EOFError("the agent left without a forecast")
        return forecast


def serve_episode(
    event: str,
    step: int = 0,
    *,
    dataset: str | Path = "world",
    corpus: str | Path | None = None,
    retrieval: str = "bm25",
    index_dir: Path | None = None,
    env: EnvConfig | None = None,
    model: str | None = None,
    rollout: int = 0,
    http: bool = False,
    port: int = 0,
    record: Path | None = None,
    stdio: tuple[IO[bytes], IO[bytes]] | None = None,
    notes: Callable[[str], None] | None = None,
) -> ServedEpisode:
    """Serve step ``step`` of ``event`` (of ``dataset`` with ``corpus``, see ``open_replay``)
    until the agent sends its forecast or leaves (the input ends; over HTTP, a
    ``KeyboardInterrupt``): on ``stdio`` (this process's stdin and stdout by default) or with
    ``http`` on the loopback at ``port`` (0: any free one; where, and the token, go to
    ``notes``: the ``pastcast`` logger by default). ``env``: the episode's tools and budgets;
    ``model``: the one model the agent may call through the server. With ``record``, the
    forecast and the episode's record are written there (a new file: checked before serving,
    ``FieldError`` naming ``record``; ``OSError`` when it cannot be written after). Every
    problem found before serving is an ``FieldError`` naming its field."""
    config = env or EnvConfig()
    check_sandbox(config, field="python_tool")
    if record is not None:
        try:
            check_new_file(record)
        except FileExistsError as exc:
            raise FieldError("record", str(exc)) from None
        except OSError as exc:
            why = exc.strerror or exc
            raise FieldError("record", f"{record}: cannot write there ({why})") from None
    with as_field("model"):
        served_model = None if model is None else resolve_model(model)
    tell = notes or _log.warning
    # the step is found before the replay opens (which may build the world's index)
    if step not in {s.step_index for s in open_dataset(dataset).steps_of(event)}:
        raise FieldError("step", f"{step}: event {event!r} has no such step in {dataset}")
    with open_replay(dataset, corpus, retrieval, index_dir=index_dir) as replay:
        steps = {s.step_index: s for s in replay.dataset.steps_of(event)}  # found above
        try:
            episode = ForecastEnv(replay.dataset, replay.backend, config).reset(
                steps[step], rollout=rollout
            )
        except ValueError as exc:
            raise FieldError("step", f"{step}: {exc}") from None

        def serve(server: EpisodeServer) -> None:
            if http:
                web = HttpToolServer(server, port=port)
                tell(f"serving {event}#{step} at {web.url} (token {web.token})")
                with contextlib.suppress(KeyboardInterrupt):  # stopped by hand: still recorded
                    web.serve_until_finished()
            else:
                reader, writer = stdio or (sys.stdin.buffer, sys.stdout.buffer)
                serve_stdio(server, reader, writer)

        agent = _ServedAgent(EpisodeServer(episode, served_model), serve)
        served = ServedEpisode(*play_episode(agent, episode))
    if record is not None:
        body = json.dumps(served.as_dict(), ensure_ascii=False, indent=1)
        write_new_file(record, body.encode("utf-8"))
    return served
