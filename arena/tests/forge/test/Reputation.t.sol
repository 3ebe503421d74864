// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.24;

import {AgentRegistry} from "arena/AgentRegistry.sol";
import {MockConditionalTokens} from "arena/MockConditionalTokens.sol";
import {PredictionArena} from "arena/PredictionArena.sol";
import {ReputationRegistry} from "arena/ReputationRegistry.sol";
import {RoundManager} from "arena/RoundManager.sol";
import {Vm} from "./Arena.t.sol";

/// The identity and reputation registries: only the authorised scorer writes, once per round and
/// agent, for registered agents only; the arena is that scorer and writes what it scores; a
/// transfer moves the card, never the agent key. Entries and the arena's writes are fuzzed.
contract ReputationTest {
    Vm internal constant vm = Vm(address(uint160(uint256(keccak256("hevm cheat code")))));
    uint64 internal constant COMMIT = 1000;
    uint64 internal constant REVEAL = 2000;

    AgentRegistry internal registry;
    ReputationRegistry internal direct; // this test contract is its scorer
    ReputationRegistry internal reputation; // the arena is its scorer
    PredictionArena internal arena;
    RoundManager internal rounds;
    MockConditionalTokens internal ctf;
    address internal agent;
    address internal other;
    uint256 internal agentId;
    bytes32[] internal conds;

    function setUp() public {
        vm.warp(100);
        registry = new AgentRegistry();
        direct = new ReputationRegistry(address(registry));
        direct.authoriseScorer(address(this));
        reputation = new ReputationRegistry(address(registry));
        ctf = new MockConditionalTokens();
        rounds = new RoundManager();
        arena = new PredictionArena(address(rounds), address(ctf), address(registry), address(reputation), 1);
        reputation.authoriseScorer(address(arena));
        agent = vm.addr(0xA11CE);
        other = vm.addr(0xB0B);
        vm.prank(agent);
        agentId = registry.register("agent-card");
        conds.push(keccak256("market-1"));
        conds.push(keccak256("market-2"));
    }

    // ------------------------------------------------------------------ who writes, and what

    function test_onlyTheScorerWrites() public {
        vm.prank(other);
        vm.expectRevert(bytes("Reputation: not the scorer"));
        direct.recordScore(1, agentId, 2000, 100, 2);
        vm.prank(agent); // not the agent itself either
        vm.expectRevert(bytes("Reputation: not the scorer"));
        reputation.recordScore(1, agentId, 0, 10000, 2);
        // this contract is not the arena's registry's scorer
        vm.expectRevert(bytes("Reputation: not the scorer"));
        reputation.recordScore(1, agentId, 0, 10000, 2);
    }

    function test_aSecondEntryForTheSameRoundAndAgentIsRefused() public {
        direct.recordScore(7, agentId, 2000, 100, 2);
        vm.expectRevert(bytes("Reputation: entry already recorded"));
        direct.recordScore(7, agentId, 0, 5000, 2);
        (bool recorded, uint256 brier, int256 alpha, uint256 n) = direct.getEntry(7, agentId);
        require(recorded && brier == 2000 && alpha == 100 && n == 2, "the first entry stays");
        direct.recordScore(8, agentId, 0, 5000, 2); // another round is another entry
        (uint256 count,,,,,) = direct.getSummary(agentId);
        require(count == 2, "two entries");
    }

    function test_anUnregisteredAgentIsRefused() public {
        vm.expectRevert(bytes("Reputation: agent not registered"));
        direct.recordScore(1, 0, 2000, 100, 2);
        vm.expectRevert(bytes("Reputation: agent not registered"));
        direct.recordScore(1, agentId + 1, 2000, 100, 2);
    }

    function test_outOfRangeEntriesAreRefused() public {
        vm.expectRevert(bytes("Reputation: no round"));
        direct.recordScore(0, agentId, 2000, 100, 2);
        vm.expectRevert(bytes("Reputation: Brier above 10000 bp"));
        direct.recordScore(1, agentId, 10001, 100, 2);
        vm.expectRevert(bytes("Reputation: alpha out of range"));
        direct.recordScore(1, agentId, 2000, 10001, 2);
        vm.expectRevert(bytes("Reputation: alpha out of range"));
        direct.recordScore(1, agentId, 2000, -10001, 2);
        vm.expectRevert(bytes("Reputation: bad market count"));
        direct.recordScore(1, agentId, 2000, 100, 0);
    }

    function test_theAdminAuthorisesOneScorerOnce() public {
        ReputationRegistry fresh = new ReputationRegistry(address(registry));
        vm.prank(other);
        vm.expectRevert(bytes("Reputation: not the admin"));
        fresh.authoriseScorer(other);
        vm.expectRevert(bytes("Reputation: no scorer"));
        fresh.authoriseScorer(address(0));
        fresh.authoriseScorer(address(arena));
        vm.expectRevert(bytes("Reputation: scorer already set"));
        fresh.authoriseScorer(address(this));
        require(fresh.scorer() == address(arena), "scorer");
    }

    // ------------------------------------------------------------------ the arena as scorer

    function playRound(uint16 a, uint16 b, uint16 ba, uint16 bb, bytes32 salt, bool y1, bool y2)
        internal
        returns (uint256 roundId)
    {
        roundId = rounds.createRound(conds, uint64(block.timestamp) + 900, uint64(block.timestamp) + 1900);
        (, uint64 commitDeadline, uint64 revealDeadline,,) = rounds.getRound(roundId);
        uint16[] memory p = new uint16[](2);
        p[0] = a;
        p[1] = b;
        uint16[] memory bench = new uint16[](2);
        bench[0] = ba;
        bench[1] = bb;
        vm.prank(agent);
        arena.commit(roundId, keccak256(abi.encodePacked(roundId, p, salt)));
        vm.warp(commitDeadline);
        rounds.setBenchmarkPrices(roundId, bench);
        vm.prank(agent);
        arena.reveal(roundId, p, salt);
        vm.warp(revealDeadline);
        if (ctf.payoutDenominator(conds[0]) == 0) {
            uint256[] memory p1 = new uint256[](2);
            p1[1] = y1 ? 1 : 0;
            p1[0] = y1 ? 0 : 1;
            uint256[] memory p2 = new uint256[](2);
            p2[1] = y2 ? 1 : 0;
            p2[0] = y2 ? 0 : 1;
            ctf.reportPayouts(conds[0], p1);
            ctf.reportPayouts(conds[1], p2);
        }
        arena.triggerOutcomes(roundId);
        arena.calculateScoresForPendingReveals(roundId);
    }

    function testFuzz_theArenaRecordsWhatItScores(uint16 a, uint16 b, uint16 ba, uint16 bb, bytes32 salt, bool y1, bool y2)
        public
    {
        a = uint16(a % 10001);
        b = uint16(b % 10001);
        ba = uint16(ba % 10001);
        bb = uint16(bb % 10001);
        uint256 roundId = playRound(a, b, ba, bb, salt, y1, y2);
        (,, bool scored,, uint256 brier, int256 alpha) = arena.getEntry(roundId, agent);
        (bool recorded, uint256 rBrier, int256 rAlpha, uint256 n) = reputation.getEntry(roundId, agentId);
        require(scored && recorded, "scored and recorded");
        require(rBrier == brier && rAlpha == alpha && n == 2, "the entry is the arena's score");
        // scoring again writes nothing: the arena scores each reveal once
        require(arena.calculateScoresForPendingReveals(roundId) == 0, "nothing pending");
        (uint256 count, uint256 preds, uint256 bSum, int256 aSum, uint256 bSq, uint256 aSq) = reputation.getSummary(agentId);
        require(count == 1 && preds == 2 && bSum == brier && aSum == alpha, "summary");
        require(bSq == brier * brier && aSq == uint256(alpha * alpha), "squares");
    }

    function test_theArenaWritesEveryRoundOfAnAgent() public {
        uint256 r1 = playRound(7000, 2000, 6000, 3000, bytes32(uint256(1)), true, false);
        uint256 r2 = playRound(4000, 9000, 6000, 3000, bytes32(uint256(2)), true, false);
        uint256[] memory list = reputation.roundsOf(agentId);
        require(list.length == 2 && list[0] == r1 && list[1] == r2, "rounds in order");
    }

    // ------------------------------------------------------------------ entries, fuzzed

    function testFuzz_entriesAreKeptOnceAndSummed(uint16[6] memory briers, int16[6] memory alphas, uint8[6] memory counts)
        public
    {
        uint256 bSum;
        int256 aSum;
        uint256 bSq;
        uint256 aSq;
        uint256 preds;
        for (uint256 i = 0; i < 6; i++) {
            uint256 brier = briers[i] % 10001;
            int256 alpha = int256(alphas[i]) % 10001;
            uint256 n = uint256(counts[i]) % 64 + 1;
            direct.recordScore(i + 1, agentId, brier, alpha, n);
            vm.expectRevert(bytes("Reputation: entry already recorded"));
            direct.recordScore(i + 1, agentId, 10000 - brier, -alpha, n);
            (bool recorded, uint256 gotB, int256 gotA, uint256 gotN) = direct.getEntry(i + 1, agentId);
            require(recorded && gotB == brier && gotA == alpha && gotN == n, "entry kept as written");
            bSum += brier;
            aSum += alpha;
            bSq += brier * brier;
            aSq += uint256(alpha * alpha);
            preds += n;
        }
        (uint256 count, uint256 p, uint256 b, int256 a, uint256 b2, uint256 a2) = direct.getSummary(agentId);
        require(count == 6 && p == preds && b == bSum && a == aSum && b2 == bSq && a2 == aSq, "summary");
    }

    // ------------------------------------------------------------------ identity: the card and the token

    function test_registrationIsAnAgentTokenHeldByItsKey() public view {
        require(registry.ownerOf(agentId) == agent && registry.agentAddress(agentId) == agent, "owner and key");
        require(registry.balanceOf(agent) == 1 && registry.agentIdOf(agent) == agentId, "balance and id");
        require(keccak256(bytes(registry.tokenURI(agentId))) == keccak256("agent-card"), "uri");
    }

    function test_anUnknownAgentHasNoOwnerNorCard() public {
        vm.expectRevert(bytes("Registry: unknown agent"));
        registry.ownerOf(agentId + 1);
        vm.expectRevert(bytes("Registry: unknown agent"));
        registry.agentURI(0);
    }

    function test_onlyTheOwnerEditsTheCard() public {
        vm.prank(other);
        vm.expectRevert(bytes("Registry: not the owner"));
        registry.setAgentURI(agentId, "forged");
        vm.prank(other);
        vm.expectRevert(bytes("Registry: not the owner"));
        registry.setMetadata(agentId, "role", bytes("reference"));
        vm.prank(agent);
        registry.setMetadata(agentId, "role", bytes("reference"));
        require(keccak256(registry.getMetadata(agentId, "role")) == keccak256("reference"), "metadata");
    }

    function test_onlyTheOwnerOrAnApprovedAddressTransfers() public {
        vm.prank(other);
        vm.expectRevert(bytes("Registry: not the owner or approved"));
        registry.transferFrom(agent, other, agentId);
        vm.prank(agent);
        vm.expectRevert(bytes("Registry: transfer to the zero address"));
        registry.transferFrom(agent, address(0), agentId);
        vm.prank(agent);
        vm.expectRevert(bytes("Registry: from is not the owner"));
        registry.transferFrom(other, other, agentId);
        vm.prank(other);
        vm.expectRevert(bytes("Registry: not the owner"));
        registry.approve(other, agentId);
        // an approval allows one transfer, and is cleared by it
        vm.prank(agent);
        registry.approve(other, agentId);
        vm.prank(other);
        registry.transferFrom(agent, other, agentId);
        require(registry.getApproved(agentId) == address(0), "approval cleared");
        vm.prank(other);
        registry.transferFrom(other, agent, agentId);
        vm.prank(other);
        vm.expectRevert(bytes("Registry: not the owner or approved"));
        registry.transferFrom(agent, other, agentId);
    }

    function test_aTransferMovesTheCardNotTheAgentKeyNorItsRecord() public {
        uint256 r1 = playRound(7000, 2000, 6000, 3000, bytes32(uint256(1)), true, false);
        vm.prank(agent);
        registry.transferFrom(agent, other, agentId);
        require(registry.ownerOf(agentId) == other && registry.balanceOf(agent) == 0, "token moved");
        require(registry.balanceOf(other) == 1, "new holder");
        // the key that earned the record still is the agent, with the same id and record
        require(registry.agentIdOf(agent) == agentId && registry.isRegistered(agent), "key stays");
        require(!registry.isRegistered(other), "the holder is not the agent");
        (bool recorded,,,) = reputation.getEntry(r1, agentId);
        require(recorded, "record stays with the id");
        // the new holder controls the card; the old one no longer does
        vm.prank(agent);
        vm.expectRevert(bytes("Registry: not the owner"));
        registry.setAgentURI(agentId, "old holder");
        vm.prank(other);
        registry.setAgentURI(agentId, "new holder");
        // the key keeps forecasting under its id
        uint256 r2 = playRound(4000, 9000, 6000, 3000, bytes32(uint256(2)), true, false);
        (bool again,,,) = reputation.getEntry(r2, agentId);
        require(again, "the key's next round is recorded under the same id");
        vm.prank(other);
        uint256 otherId = registry.register("its own card"); // a holder may still have its own key's identity
        require(otherId == agentId + 1 && registry.balanceOf(other) == 2, "second token");
    }

    function test_aKeyRegistersOnce() public {
        vm.prank(agent);
        vm.expectRevert(bytes("Registry: already registered"));
        registry.register("again");
    }
}
