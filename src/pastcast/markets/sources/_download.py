"""Resumable, atomic downloads of upstream data files over HTTP(S).

Each file is fetched into ``<name>.part`` (continuing with a ``Range`` request when a partial
file exists and the server honours it) and renamed into place only once complete, so an
interrupted download never leaves a truncated file under the final name.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

import httpx

from pastcast.retrying import (
    ProviderFailure,
    RetryPolicy,
    call_with_retries,
    failure_kind_of_status,
)

FORECASTBENCH_FILES: tuple[str, ...] = (
    "derived/markets_resolved.jsonl",
    "derived/daily_values.csv",
)
"""Files fetched by default: the resolved binary questions and their daily series."""


class DownloadError(RuntimeError):
    """A file that could not be downloaded; the message names the URL and the reason."""


def _fetch(client: httpx.Client, url: str, dest: Path, policy: RetryPolicy) -> None:
    part = dest.with_name(dest.name + ".part")

    def attempt() -> None:
        have = part.stat().st_size if part.exists() else 0
        headers = {"Range": f"bytes={have}-"} if have else {}
        try:
            with client.stream("GET", url, headers=headers) as resp:
                if resp.status_code == 416 and have:
                    return  # the partial file is already complete
                if resp.status_code not in (200, 206):
                    kind = failure_kind_of_status(resp.status_code)
                    raise ProviderFailure(f"HTTP {resp.status_code}", kind=kind)
                with part.open("ab" if resp.status_code == 206 and have else "wb") as fh:
                    for chunk in resp.iter_bytes():
                        fh.write(chunk)
                    fh.flush()
                    os.fsync(fh.fileno())
        except httpx.TransportError as exc:
            raise ProviderFailure(f"{type(exc).__name__}: {exc}", kind="connection") from None

    try:
        call_with_retries(attempt, policy)
    except ProviderFailure as exc:
        raise DownloadError(f"{url}: {exc}") from None
    os.replace(part, dest)


def download_files(
    base_url: str,
    dest: str | Path,
    names: Iterable[str] = FORECASTBENCH_FILES,
    *,
    backoff_s: float = 0.5,
) -> list[Path]:
    """Download ``base_url/<name>`` to ``dest/<name>`` for each name; existing files are kept."""
    root = Path(dest)
    out: list[Path] = []
    policy = RetryPolicy(max_retries=3, base_delay_s=backoff_s)
    with httpx.Client(timeout=60.0, follow_redirects=True) as http:
        for name in names:
            target = root / name
            out.append(target)
            if target.is_file():
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            _fetch(http, base_url.rstrip("/") + "/" + name.lstrip("/"), target, policy)
    return out
