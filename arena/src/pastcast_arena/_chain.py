"""The arena on a real EVM: the shipped contracts deployed through ``web3`` on an in-process py-evm
chain or on any chain a ``Web3`` reaches; the deployer is curator, oracle of the mock
conditional tokens, and relayer (docs/arena.md, "The contracts"). A deployment's record
(``deployment.json``) is written when it is deployed, so a later process reattaches (checked
against the node) and a third party reads the same leaderboard."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from contextlib import suppress
from functools import cached_property
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from pastcast import safejson
from pastcast.atomic import write_atomic
from pastcast.validation import first_problem
from pastcast_arena._contracts import artifacts
from pastcast_arena._protocol import ArenaRejected, Domain, require_evm_extra
from pastcast_arena._records import RoundScore, SignedCommit, SignedReveal
from pastcast_arena._scoring import YES_INDEX

R = TypeVar("R", bound=BaseModel)

# An explicit gas limit: py-evm's estimate is a binary search of whole executions, which costs
# about ten times the transaction itself. Without the estimate a reverting transaction is mined
# with status 0 and no reason, so every transaction is first run as an eth_call on the pending
# block (the time the transaction will have), which raises with the contract's reason.
GAS = 6_000_000


def node_web3(url: str) -> Any:
    """A ``Web3`` on the JSON-RPC node at ``url``."""
    require_evm_extra()
    from web3 import HTTPProvider, Web3

    return Web3(HTTPProvider(url, request_kwargs={"timeout": 60}))


def _b32(value: str) -> bytes:
    return bytes.fromhex(value.removeprefix("0x"))


def _reason(exc: Exception) -> str:
    text = str(exc.args[0]) if exc.args else str(exc)
    for prefix in ("execution reverted: ", "execution reverted"):
        if text.startswith(prefix):
            return text[len(prefix) :].strip() or "reverted"
    return text


def _contract_at(w3: Any, address: str) -> str:
    """``address`` checksummed; ``ValueError`` when it is not one or holds no contract."""
    from web3 import Web3

    if not Web3.is_address(address):
        raise ValueError(f"{address!r} is not an address")
    checked = str(Web3.to_checksum_address(address))
    if not bytes(w3.eth.get_code(checked)):
        raise ValueError(f"no contract at {checked}")
    return checked


ROLE_KEY = "role"
"""The identity registry's metadata key of an agent's role (absent: ``agent``)."""


class EvmArena:
    """The five contracts on one chain: ``EvmArena()`` starts a fresh in-process chain,
    ``EvmArena(w3)`` deploys on ``w3`` (its first unlocked account pays); with
    ``conditional_tokens`` (``external_ctf``) the payouts are read from that contract, never
    reported here. Reverts raise ``ArenaRejected`` with the contract's reason."""

    def __init__(
        self, w3: Any = None, *, yes_index: int = YES_INDEX, conditional_tokens: str | None = None
    ) -> None:
        require_evm_extra()
        if w3 is None:
            from eth_tester import EthereumTester, PyEVMBackend
            from web3 import EthereumTesterProvider, Web3

            w3 = Web3(EthereumTesterProvider(EthereumTester(PyEVMBackend())))
        self._on(w3)
        art = artifacts()
        self.external_ctf = conditional_tokens is not None
        self.yes_index = yes_index
        if conditional_tokens is None:
            self.conditional_tokens = self._deploy(art["MockConditionalTokens"])
        else:  # a conditional-tokens contract already on the chain (Polymarket's on Polygon)
            address = _contract_at(w3, conditional_tokens)
            abi = art["MockConditionalTokens"]["abi"]
            self.conditional_tokens = w3.eth.contract(address=address, abi=abi)
        self.agent_registry = self._deploy(art["AgentRegistry"])
        self.reputation = self._deploy(art["ReputationRegistry"], self.agent_registry.address)
        self.round_manager = self._deploy(art["RoundManager"])
        self.arena = self._deploy(
            art["PredictionArena"],
            self.round_manager.address,
            self.conditional_tokens.address,
            self.agent_registry.address,
            self.reputation.address,
            yes_index,
        )
        self.deploy_block: int = int(w3.eth.block_number)

    @classmethod
    def attach(cls, w3: Any, arena: str, *, from_block: int = 0) -> EvmArena:
        """The deployment whose arena contract is at ``arena``, read as a third party reads it:
        the arena names the other contracts (registries, round manager, conditional tokens).
        Nothing is deployed or sent; ``deploy_block`` is ``from_block`` (where indexing
        starts). ``ValueError`` when no arena is there."""
        require_evm_extra()
        art = artifacts()
        address = _contract_at(w3, arena)
        self = cls.__new__(cls)
        self._on(w3)

        def at(addr: str, name: str) -> Any:
            return w3.eth.contract(address=addr, abi=art[name]["abi"])

        from web3.exceptions import Web3Exception

        errors: tuple[type[Exception], ...] = (Web3Exception, *self._reverts)
        self.arena = at(address, "PredictionArena")
        try:
            found = self.arena.functions
            self.round_manager = at(found.roundManager().call(), "RoundManager")
            self.agent_registry = at(found.agentRegistry().call(), "AgentRegistry")
            self.reputation = at(found.reputationRegistry().call(), "ReputationRegistry")
            tokens = found.conditionalTokens().call()
            self.yes_index = int(found.yesIndex().call())
        except errors as exc:  # the code there is not an arena's
            raise ValueError(f"{address}: not an arena ({exc})") from None
        self.conditional_tokens = at(tokens, "MockConditionalTokens")
        self.external_ctf = False
        self.deploy_block = from_block
        return self

    def _on(self, w3: Any) -> None:
        """The chain's parts both a deployment and an attachment use."""
        self.w3 = w3
        self.tester: Any = getattr(w3.provider, "ethereum_tester", None)
        self.operator: str = w3.eth.accounts[0] if w3.eth.accounts else ""
        from web3.exceptions import ContractLogicError

        reverts: list[type[Exception]] = [ContractLogicError]
        with suppress(ImportError):  # a remote node raises ContractLogicError only
            from eth_tester.exceptions import TransactionFailed

            reverts.append(TransactionFailed)
        self._reverts = tuple(reverts)

    def addresses(self) -> dict[str, str]:
        """The deployment's contract addresses by contract name."""
        ctf = "ConditionalTokens" if self.external_ctf else "MockConditionalTokens"
        return {
            "AgentRegistry": self.agent_registry.address,
            ctf: self.conditional_tokens.address,
            "PredictionArena": self.arena.address,
            "ReputationRegistry": self.reputation.address,
            "RoundManager": self.round_manager.address,
        }

    def _deploy(self, artifact: dict[str, Any], *args: Any) -> Any:
        factory = self.w3.eth.contract(abi=artifact["abi"], bytecode=artifact["bytecode"])
        tx = factory.constructor(*args).transact({"from": self.operator, "gas": GAS})
        receipt = self.w3.eth.wait_for_transaction_receipt(tx)
        return self.w3.eth.contract(address=receipt.contractAddress, abi=artifact["abi"])

    def _guard(self, action: Callable[[], Any]) -> Any:
        try:
            return action()
        except self._reverts as exc:
            raise ArenaRejected(_reason(exc)) from None

    def transact(self, fn: Any) -> Any:
        """Send ``fn`` from the operator's unlocked account; returns the receipt."""
        tx = {"from": self.operator, "gas": GAS}
        return self._send(fn, self.operator, lambda: fn.transact(tx))

    def transact_as(self, fn: Any, private_key: str) -> Any:
        """Send ``fn`` signed by a local key (the account pays its own gas)."""
        from eth_account import Account

        account = Account.from_key(private_key)

        def signed() -> Any:
            nonce = self.w3.eth.get_transaction_count(account.address)
            tx = fn.build_transaction({"from": account.address, "nonce": nonce, "gas": GAS})
            return self.w3.eth.send_raw_transaction(account.sign_transaction(tx).raw_transaction)

        return self._send(fn, account.address, signed)

    def _send(self, fn: Any, sender: str, send: Callable[[], Any]) -> Any:
        """``fn`` as an eth_call (a revert raises its reason), then ``send()``: the receipt."""

        def run() -> Any:
            fn.call({"from": sender}, block_identifier="pending")
            receipt = self.w3.eth.wait_for_transaction_receipt(send())
            if receipt.status != 1:
                raise ArenaRejected("transaction reverted")
            return receipt

        return self._guard(run)

    def call(self, fn: Any) -> Any:
        """``fn`` as an ``eth_call`` on the pending block (the next block's time)."""
        return self._guard(lambda: fn.call({"from": self.operator}, block_identifier="pending"))

    @cached_property
    def domain(self) -> Domain:
        return Domain(chain_id=int(self.w3.eth.chain_id), verifying_contract=self.arena.address)

    def now(self) -> int:
        return int(self.w3.eth.get_block("latest")["timestamp"])

    @classmethod
    def connect(
        cls, url: str, *, yes_index: int = YES_INDEX, conditional_tokens: str | None = None
    ) -> EvmArena:
        """Deploy through the JSON-RPC node at ``url`` (its first unlocked account pays)."""
        return cls(node_web3(url), yes_index=yes_index, conditional_tokens=conditional_tokens)

    def advance_to(self, timestamp: int) -> None:
        """Mine a block at ``timestamp``: the in-process chain travels; a development node
        (anvil, Hardhat) is asked with ``evm_setNextBlockTimestamp`` and ``evm_mine``; a real
        chain's clock is its own (``RuntimeError``)."""
        if timestamp <= self.now():
            return
        if self.tester is not None:
            self.tester.time_travel(timestamp)
            return
        reply = self.w3.provider.make_request("evm_setNextBlockTimestamp", [timestamp])
        if "error" in reply:
            raise RuntimeError(f"this node cannot move its clock: {reply['error']}")
        mined = self.w3.provider.make_request("evm_mine", [])
        if "error" in mined:
            raise RuntimeError(f"this node cannot mine on request: {mined['error']}")

    def fund(self, address: str) -> None:
        tx = {"from": self.operator, "to": address, "value": 10**17, "gas": 21_000}
        eth = self.w3.eth
        self._guard(lambda: eth.wait_for_transaction_receipt(eth.send_transaction(tx)))

    def register(self, private_key: str, name: str, *, role: str = "agent") -> str:
        """Register the key's address (the key signs the transaction) with ``name`` as its
        card's URI; a role other than ``agent`` goes into the card's metadata (ERC-8004's
        ``register(agentURI, metadata)``, one transaction)."""
        from eth_account import Account

        address = str(Account.from_key(private_key).address)
        if self.w3.eth.get_balance(address) < 10**16:
            self.fund(address)
        entries = [] if role == "agent" else [(ROLE_KEY, role.encode())]
        self.transact_as(self.agent_registry.functions.register(name, entries), private_key)
        return address

    def create_round(
        self, condition_ids: Sequence[str], commit_deadline: int, reveal_deadline: int
    ) -> int:
        fn = self.round_manager.functions.createRound(
            [_b32(c) for c in condition_ids], commit_deadline, reveal_deadline
        )
        receipt = self.transact(fn)
        event = self.round_manager.events.RoundCreated().process_receipt(receipt)[0]
        return int(event.args.roundId)

    def set_benchmarks(self, round_id: int, prices_bp: Sequence[int]) -> None:
        self.transact(self.round_manager.functions.setBenchmarkPrices(round_id, list(prices_bp)))

    def nonce(self, agent: str) -> int:
        return int(self.arena.functions.nonces(agent).call())

    def commit(self, msg: SignedCommit, *, simulate: bool = False) -> str:
        fn = self.arena.functions.commitWithSignature(
            msg.round_id,
            _b32(msg.commit_hash),
            msg.agent,
            msg.nonce,
            msg.deadline,
            _b32(msg.signature),
        )
        return self._submit(fn, simulate)

    def reveal(self, msg: SignedReveal, *, simulate: bool = False) -> str:
        fn = self.arena.functions.revealWithSignature(
            msg.round_id,
            list(msg.predictions),
            _b32(msg.salt),
            msg.agent,
            msg.nonce,
            msg.deadline,
            _b32(msg.signature),
        )
        return self._submit(fn, simulate)

    def _submit(self, fn: Any, simulate: bool) -> str:
        """The transaction's hash, or "" after only simulating it (a revert raises either way)."""
        if simulate:
            self.call(fn)
            return ""
        return "0x" + bytes(self.transact(fn).transactionHash).hex()

    def report_payouts(self, condition_id: str, numerators: Sequence[int]) -> None:
        fn = self.conditional_tokens.functions.reportPayouts(_b32(condition_id), list(numerators))
        self.transact(fn)

    def payouts(self, condition_id: str) -> tuple[int, ...] | None:
        """The condition's payout numerators as the conditional-tokens contract holds them now
        (two outcome slots: binary markets), None while its denominator is zero (unresolved)."""
        tokens, cid = self.conditional_tokens.functions, _b32(condition_id)

        def read() -> tuple[int, ...] | None:
            if int(tokens.payoutDenominator(cid).call()) == 0:
                return None
            return tuple(int(tokens.payoutNumerators(cid, i).call()) for i in (0, 1))

        return self._guard(read)  # type: ignore[no-any-return]

    def trigger_outcomes(self, round_id: int) -> tuple[int, ...]:
        receipt = self.transact(self.arena.functions.triggerOutcomes(round_id))
        event = self.arena.events.OutcomesTriggered().process_receipt(receipt)[0]
        return tuple(int(v) for v in event.args.outcomes)

    def score_pending(self, round_id: int) -> tuple[RoundScore, ...]:
        from web3.logs import DISCARD

        receipt = self.transact(self.arena.functions.calculateScoresForPendingReveals(round_id))
        # the receipt also holds the reputation registry's NewFeedback logs: skipped
        logs = self.arena.events.ScoreCalculated().process_receipt(receipt, errors=DISCARD)
        return tuple(log_record(RoundScore, e) for e in logs)


_RENAMED = {
    "agentURI": "name",
    "owner": "address",
    "resolvedCount": "resolved",
    "baselineBrierBp": "baseline_bp",
}
"""Log arguments whose record field is not their snake-case name."""


def _plain(value: Any) -> Any:
    if isinstance(value, bytes):
        return "0x" + bytes(value).hex()
    return [_plain(v) for v in value] if isinstance(value, list | tuple) else value


def log_record(model: type[R], event: Any) -> R:
    """The ``model`` record of a log: its arguments by field name (bytes as 0x hex), and where
    it was logged (``ref``: the transaction, ``position``: the block) where ``model`` has them."""
    found = {
        _RENAMED.get(k) or re.sub("([A-Z])", r"_\1", k).lower(): v for k, v in event.args.items()
    }
    found |= {"ref": event.transactionHash, "position": int(event.blockNumber)}
    return model.model_validate({k: _plain(v) for k, v in found.items() if k in model.model_fields})


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
            _contract_at(w3, address)
        except ValueError as exc:
            raise ValueError(f"{path}: field contracts.{name}: {exc} (node {url})") from None
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
