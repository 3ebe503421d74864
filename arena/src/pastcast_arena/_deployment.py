"""A deployment's record (``deployment.json``: chain id, contract addresses, block), written when
deployed so a later process reattaches instead of deploying again, and a third party reads the
same leaderboard; reattaching checks the node against it."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from pastcast import safejson
from pastcast.atomic import write_atomic
from pastcast.validation import first_problem
from pastcast_arena._chain import EvmArena, node_web3

__all__ = [
    "DEPLOYMENT_FILE",
    "Deployment",
    "attach_deployment",
    "read_deployment",
    "write_deployment",
]

DEPLOYMENT_FILE = "deployment.json"


class Deployment(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)
    chain_id: int
    deploy_block: int = Field(default=0, ge=0)
    contracts: dict[str, str]
    """By contract name; ``ConditionalTokens`` for conditional tokens it did not deploy."""
    rpc_url: str | None = None
    """The node the contracts were deployed through (for a local node: where it was then)."""


def write_deployment(arena: EvmArena, path: Path, rpc_url: str | None = None) -> Path:
    """Record ``arena``'s deployment at ``path``, whole or not at all."""
    record = Deployment(
        chain_id=arena.domain.chain_id,
        deploy_block=arena.deploy_block,
        contracts=arena.addresses(),
        rpc_url=rpc_url,
    )
    body = record.model_dump(mode="json", exclude_none=True)
    write_atomic(path, json.dumps(body, indent=1, sort_keys=True) + "\n")
    return path


def read_deployment(path: Path) -> Deployment:
    """``ValueError`` naming the file (and the field)."""
    try:
        return Deployment.model_validate(safejson.loads(path.read_text(encoding="utf-8")))
    except ValidationError as exc:
        raise ValueError(f"{path}: not a deployment record ({first_problem(exc)})") from None
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path}: not a deployment record ({exc})") from None


def attach_deployment(path: Path, url: str) -> EvmArena:
    """The arena recorded at ``path``, on the node at ``url``; ``ValueError`` naming the file
    and the field when the node is on another chain or lacks the recorded contracts."""
    record = read_deployment(path)
    w3 = node_web3(url)
    found = int(w3.eth.chain_id)
    if found != record.chain_id:
        raise ValueError(
            f"{path}: field chain_id: {record.chain_id}, but the node at {url} is on chain {found}"
        )
    for name, address in sorted(record.contracts.items()):
        try:
            code = bytes(w3.eth.get_code(w3.to_checksum_address(address)))
        except ValueError:
            why = f"{address!r} is not an address"
            raise ValueError(f"{path}: field contracts.{name}: {why}") from None
        if not code:
            raise ValueError(
                f"{path}: field contracts.{name}: no contract at {address} on the node at {url}"
            )
    anchor = record.contracts.get("PredictionArena")
    if anchor is None:
        raise ValueError(f"{path}: field contracts.PredictionArena: missing")
    try:
        arena = EvmArena.attach(w3, anchor, from_block=record.deploy_block)
    except ValueError as exc:
        raise ValueError(f"{path}: field contracts.PredictionArena: {exc}") from None
    arena.external_ctf = "ConditionalTokens" in record.contracts
    for name, address in arena.addresses().items():
        recorded = record.contracts.get(name)
        if recorded is None or recorded.lower() != address.lower():
            raise ValueError(
                f"{path}: field contracts.{name}: {recorded}, but the deployment on the node at "
                f"{url} has {address}"
            )
    return arena
