"""The agents' reputation read back from a chain alone (docs/arena.md, "Reputation"): the
identity registry's cards, the arena's ERC-8004 feedback (only that client's: anyone may give
feedback) and its logged reveals, turned into the leaderboard by the off-chain report's own
``standings``, so a replay's two leaderboards are equal."""

from __future__ import annotations

from collections import Counter, defaultdict

from pydantic import Field

from pastcast.records import Record
from pastcast_arena._chain import ROLE_KEY, EvmArena
from pastcast_arena._records import MAX_BP
from pastcast_arena._snapshot import index_chain
from pastcast_arena._stats import (
    LeaderboardRow,
    RoundRow,
    market_rows,
    model_standard_errors,
    standings,
)


class ChainAgent(Record):
    """An identity as the registry holds it now."""

    agent_id: int = Field(ge=1)
    address: str
    """The agent key: it commits, reveals and is scored (fixed at registration)."""
    owner: str
    """The token's holder: who controls the card (moves with a transfer)."""
    uri: str
    role: str
    """The card's ``role`` metadata; ``agent`` when it has none."""


class ReputationEntry(Record):
    """An agent's score in one round as the arena's two feedback entries give it (``brier`` and
    ``alpha``, tag2 the round), in basis points, with the round's counted markets."""

    round_id: int = Field(ge=1)
    agent_id: int = Field(ge=1)
    brier_bp: int = Field(ge=0, le=MAX_BP)
    alpha_bp: int = Field(ge=-MAX_BP, le=MAX_BP)
    resolved: int = Field(ge=1)


FEEDBACK_DECIMALS = 4
"""The arena's feedback values are basis points: ``valueDecimals`` 4."""


def chain_agents(arena: EvmArena) -> tuple[ChainAgent, ...]:
    """Every registered identity, read from the registry's storage (current cards)."""
    reg = arena.agent_registry.functions
    out = []
    for agent_id in range(1, int(reg.agentCount().call()) + 1):
        role = bytes(reg.getMetadata(agent_id, ROLE_KEY).call())
        out.append(
            ChainAgent(
                agent_id=agent_id,
                address=str(reg.agentAddress(agent_id).call()),
                owner=str(reg.ownerOf(agent_id).call()),
                uri=str(reg.tokenURI(agent_id).call()),
                role=role.decode("utf-8", "replace") or "agent",
            )
        )
    return tuple(out)


def read_reputation(arena: EvmArena) -> tuple[ReputationEntry, ...]:
    """The arena's unrevoked feedback on every registered agent, one entry per agent and round,
    by round then agent. ``ValueError`` when its feedback is not the arena's pairs."""
    reputation, client = arena.reputation.functions, arena.arena.address
    scores: dict[tuple[int, int], dict[str, int]] = defaultdict(dict)
    count = int(arena.agent_registry.functions.agentCount().call())
    for agent_id in range(1, count + 1):
        listed = reputation.readAllFeedback(agent_id, [client], "", "", False).call()
        for _, _, value, decimals, tag1, tag2, _ in zip(*listed, strict=True):
            if decimals != FEEDBACK_DECIMALS or tag1 not in ("brier", "alpha"):
                raise ValueError(f"agent {agent_id}: feedback {tag1!r}/{decimals} is not a score")
            scores[(int(tag2), agent_id)][tag1] = int(value)
    resolved: dict[int, int] = {}
    out = []
    for (round_id, agent_id), pair in sorted(scores.items()):
        if set(pair) != {"brier", "alpha"}:
            raise ValueError(f"agent {agent_id}, round {round_id}: only {sorted(pair)} given")
        if round_id not in resolved:
            resolved[round_id] = int(arena.arena.functions.getOutcomes(round_id).call()[2])
        out.append(
            ReputationEntry(
                round_id=round_id,
                agent_id=agent_id,
                brier_bp=pair["brier"],
                alpha_bp=pair["alpha"],
                resolved=resolved[round_id],
            )
        )
    return tuple(out)


def _names(agents: tuple[ChainAgent, ...]) -> dict[int, str]:
    """Agents by card URI; a URI two identities share is told apart by the agent id."""
    seen = Counter(a.uri for a in agents)
    return {
        a.agent_id: a.uri if a.uri and seen[a.uri] == 1 else f"{a.uri}#{a.agent_id}" for a in agents
    }


def chain_leaderboard(arena: EvmArena) -> tuple[LeaderboardRow, ...]:
    """The leaderboard of every agent with a reputation entry, from the chain alone.
    ``ValueError`` when the registry holds no entry."""
    entries = read_reputation(arena)
    if not entries:
        raise ValueError(f"reputation registry {arena.reputation.address}: no entries")
    agents = chain_agents(arena)
    names = _names(agents)
    by_id = {a.agent_id: a for a in agents}
    entries = tuple(sorted(entries, key=lambda e: (e.round_id, names[e.agent_id])))
    per_round = [
        RoundRow(
            **e.model_dump(exclude={"agent_id"}),
            agent=names[e.agent_id],
            brier=e.brier_bp / MAX_BP,
            alpha=e.alpha_bp / MAX_BP,
        )
        for e in entries
    ]
    n_pred: dict[str, int] = defaultdict(int)
    for e in entries:
        n_pred[names[e.agent_id]] += e.resolved
    roles = {names[i]: a.role for i, a in by_id.items()}
    return standings(per_round, n_pred, roles, _model_se(arena, names))


def _model_se(arena: EvmArena, names: dict[int, str]) -> dict[str, float]:
    """Proposition 2's standard errors over the counted markets of every scored reveal, from the
    revealed predictions, benchmark prices and outcomes the arena logged."""
    snap = index_chain(arena)
    named = tuple(a.model_copy(update={"name": names[a.agent_id]}) for a in snap.agents)
    return model_standard_errors(market_rows(snap.model_copy(update={"agents": named}).results()))
