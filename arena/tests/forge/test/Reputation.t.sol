// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.24;

import {AgentRegistry} from "arena/AgentRegistry.sol";
import {MockConditionalTokens} from "arena/MockConditionalTokens.sol";
import {PredictionArena} from "arena/PredictionArena.sol";
import {ReputationRegistry} from "arena/ReputationRegistry.sol";
import {RoundManager} from "arena/RoundManager.sol";
import {Vm} from "./Arena.t.sol";

/// The reputation registry's ERC-8004 feedback: anyone but the agent's owner and operators gives
/// it, on registered agents only, within range; only its client revokes it, once; anyone answers
/// it; reads filter by client and tags and summarise. The arena gives each score as two entries
/// (fuzzed against what it scores), and an agent cannot block a round's scoring.
contract ReputationTest {
    Vm internal constant vm = Vm(address(uint160(uint256(keccak256("hevm cheat code")))));

    AgentRegistry internal registry;
    ReputationRegistry internal reputation;
    PredictionArena internal arena;
    RoundManager internal rounds;
    MockConditionalTokens internal ctf;
    address internal agent;
    address internal other;
    address internal client;
    uint256 internal agentId;
    bytes32[] internal conds;

    function setUp() public {
        vm.warp(100);
        registry = new AgentRegistry();
        reputation = new ReputationRegistry(address(registry));
        ctf = new MockConditionalTokens();
        rounds = new RoundManager();
        arena = new PredictionArena(address(rounds), address(ctf), address(registry), address(reputation), 1);
        agent = vm.addr(0xA11CE);
        other = vm.addr(0xB0B);
        client = vm.addr(0xC1E);
        vm.prank(agent);
        agentId = registry.register("agent-card");
        conds.push(keccak256("market-1"));
        conds.push(keccak256("market-2"));
    }

    function give(address from, int128 value, uint8 decimals, string memory tag1) internal {
        vm.prank(from);
        reputation.giveFeedback(agentId, value, decimals, tag1, "", "", "", 0);
    }

    function only(address a) internal pure returns (address[] memory list) {
        list = new address[](1);
        list[0] = a;
    }

    // ------------------------------------------------------------------ who gives feedback

    function test_anyoneButTheOwnerAndOperatorsGivesFeedback() public {
        vm.prank(agent);
        vm.expectRevert(bytes("Reputation: self-feedback"));
        reputation.giveFeedback(agentId, 100, 0, "starred", "", "", "", 0);
        vm.prank(agent);
        registry.setApprovalForAll(other, true);
        vm.prank(other);
        vm.expectRevert(bytes("Reputation: self-feedback"));
        reputation.giveFeedback(agentId, 100, 0, "starred", "", "", "", 0);
        vm.prank(agent);
        registry.approve(client, agentId);
        vm.prank(client);
        vm.expectRevert(bytes("Reputation: self-feedback"));
        reputation.giveFeedback(agentId, 100, 0, "starred", "", "", "", 0);
        vm.prank(agent);
        registry.approve(address(0), agentId);
        give(client, 87, 0, "starred");
        (int128 value, uint8 decimals, string memory tag1,, bool revoked) = reputation.readFeedback(agentId, client, 1);
        require(value == 87 && decimals == 0 && keccak256(bytes(tag1)) == keccak256("starred") && !revoked, "kept");
        require(reputation.getClients(agentId).length == 1, "one client");
        require(reputation.getIdentityRegistry() == address(registry), "identity registry");
    }

    function test_feedbackOnAnUnknownAgentAndOutOfRangeValuesAreRefused() public {
        vm.prank(client);
        vm.expectRevert(bytes("Registry: unknown agent"));
        reputation.giveFeedback(agentId + 1, 1, 0, "", "", "", "", 0);
        vm.prank(client);
        vm.expectRevert(bytes("Registry: unknown agent"));
        reputation.giveFeedback(0, 1, 0, "", "", "", "", 0);
        vm.prank(client);
        vm.expectRevert(bytes("Reputation: too many decimals"));
        reputation.giveFeedback(agentId, 1, 19, "", "", "", "", 0);
        vm.prank(client);
        vm.expectRevert(bytes("Reputation: value too large"));
        reputation.giveFeedback(agentId, 1e38 + 1, 0, "", "", "", "", 0);
        vm.prank(client);
        vm.expectRevert(bytes("Reputation: value too large"));
        reputation.giveFeedback(agentId, -1e38 - 1, 0, "", "", "", "", 0);
    }

    // ------------------------------------------------------------------ revocation and responses

    function test_onlyTheClientRevokesOnce() public {
        give(client, 90, 0, "starred");
        give(client, 10, 0, "starred");
        vm.prank(other);
        vm.expectRevert(bytes("Reputation: no such feedback"));
        reputation.revokeFeedback(agentId, 1);
        vm.prank(client);
        reputation.revokeFeedback(agentId, 2);
        vm.prank(client);
        vm.expectRevert(bytes("Reputation: already revoked"));
        reputation.revokeFeedback(agentId, 2);
        vm.prank(client);
        vm.expectRevert(bytes("Reputation: no such feedback"));
        reputation.revokeFeedback(agentId, 0);
        (uint64 count, int128 mean,) = reputation.getSummary(agentId, only(client), "", "");
        require(count == 1 && mean == 90, "the revoked one is left out");
        (, uint64[] memory all,,,,,) = reputation.readAllFeedback(agentId, new address[](0), "", "", true);
        (, uint64[] memory kept,,,,, bool[] memory revoked) =
            reputation.readAllFeedback(agentId, new address[](0), "", "", false);
        require(all.length == 2 && kept.length == 1 && kept[0] == 1 && !revoked[0], "listing");
    }

    function test_anyoneAnswersAFeedbackAndAnswersAreCounted() public {
        give(client, 90, 0, "starred");
        give(client, 80, 0, "starred");
        vm.prank(agent);
        reputation.appendResponse(agentId, client, 1, "ipfs://refund", keccak256("refund"));
        vm.prank(other);
        reputation.appendResponse(agentId, client, 1, "ipfs://spam", 0);
        vm.prank(other);
        reputation.appendResponse(agentId, client, 2, "ipfs://spam", 0);
        require(reputation.getResponseCount(agentId, client, 1, new address[](0)) == 2, "one feedback");
        require(reputation.getResponseCount(agentId, client, 0, only(other)) == 2, "one responder");
        require(reputation.getResponseCount(agentId, address(0), 0, only(agent)) == 1, "the agent's");
        vm.prank(other);
        vm.expectRevert(bytes("Reputation: no such feedback"));
        reputation.appendResponse(agentId, client, 3, "ipfs://x", 0);
        vm.prank(other);
        vm.expectRevert(bytes("Reputation: empty response URI"));
        reputation.appendResponse(agentId, client, 1, "", 0);
    }

    // ------------------------------------------------------------------ reads, fuzzed

    function testFuzz_feedbackIsKeptAndSummarised(int64[5] memory values, uint8[5] memory decimals, bool[5] memory tagged)
        public
    {
        int256 wadSum;
        uint64 n;
        uint64[19] memory perDecimals;
        for (uint256 i = 0; i < 5; i++) {
            uint8 d = decimals[i] % 19;
            give(client, values[i], d, tagged[i] ? "fast" : "slow");
            (int128 v, uint8 gotD, string memory tag1,,) = reputation.readFeedback(agentId, client, uint64(i + 1));
            require(v == values[i] && gotD == d, "kept as written");
            require(keccak256(bytes(tag1)) == keccak256(bytes(tagged[i] ? "fast" : "slow")), "tag kept");
            if (!tagged[i]) continue;
            wadSum += int256(values[i]) * int256(10 ** uint256(18 - d));
            perDecimals[d] += 1;
            n += 1;
        }
        give(other, 1e18, 0, "fast"); // another client: not named, not counted
        (uint64 count, int128 mean, uint8 meanDecimals) = reputation.getSummary(agentId, only(client), "fast", "");
        require(count == n, "count");
        if (n == 0) {
            require(mean == 0 && meanDecimals == 0, "empty");
            return;
        }
        uint8 mode = 0;
        for (uint8 d = 1; d < 19; d++) {
            if (perDecimals[d] > perDecimals[mode]) mode = d;
        }
        require(meanDecimals == mode, "the most frequent decimals");
        require(mean == int128(wadSum / int256(uint256(n)) / int256(10 ** uint256(18 - mode))), "mean");
    }

    function test_aSummaryNamesItsClients() public {
        vm.expectRevert(bytes("Reputation: name the clients"));
        reputation.getSummary(agentId, new address[](0), "", "");
    }

    // ------------------------------------------------------------------ the arena as client

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

    function testFuzz_theArenaGivesWhatItScores(uint16 a, uint16 b, uint16 ba, uint16 bb, bytes32 salt, bool y1, bool y2)
        public
    {
        a = uint16(a % 10001);
        b = uint16(b % 10001);
        ba = uint16(ba % 10001);
        bb = uint16(bb % 10001);
        uint256 roundId = playRound(a, b, ba, bb, salt, y1, y2);
        (,, bool scored,, uint256 brier, int256 alpha) = arena.getEntry(roundId, agent);
        require(scored && reputation.getLastIndex(agentId, address(arena)) == 2, "two entries");
        (int128 v1, uint8 d1, string memory t1, string memory round1,) = reputation.readFeedback(agentId, address(arena), 1);
        (int128 v2, uint8 d2, string memory t2, string memory round2,) = reputation.readFeedback(agentId, address(arena), 2);
        require(keccak256(bytes(t1)) == keccak256("brier") && keccak256(bytes(t2)) == keccak256("alpha"), "tags");
        require(keccak256(bytes(round1)) == keccak256("1") && keccak256(bytes(round2)) == keccak256("1"), "round");
        require(v1 == int128(int256(brier)) && v2 == int128(alpha) && d1 == 4 && d2 == 4, "the arena's score");
        // scoring again writes nothing: the arena scores each reveal once
        require(arena.calculateScoresForPendingReveals(roundId) == 0, "nothing pending");
        require(reputation.getLastIndex(agentId, address(arena)) == 2, "still two");
    }

    function test_theArenaWritesEveryRoundOfAnAgent() public {
        for (uint256 i = 0; i < 10; i++) {
            playRound(7000, 2000, 6000, 3000, bytes32(i), true, false);
        }
        (,,,, string[] memory tag1s, string[] memory tag2s,) =
            reputation.readAllFeedback(agentId, only(address(arena)), "brier", "", false);
        require(tag1s.length == 10, "one brier entry a round");
        require(keccak256(bytes(tag2s[0])) == keccak256("1") && keccak256(bytes(tag2s[9])) == keccak256("10"), "ids");
        (uint64 count, int128 mean, uint8 decimals) = reputation.getSummary(agentId, only(address(arena)), "brier", "");
        require(count == 10 && mean == 650 && decimals == 4, "the mean Brier in basis points");
    }

    function test_anAgentThatMadeTheArenaItsOperatorCannotBlockTheRound() public {
        address second = vm.addr(0x5EC);
        vm.prank(second);
        uint256 secondId = registry.register("second");
        vm.prank(agent); // the registry would refuse the arena's feedback on this agent
        registry.setApprovalForAll(address(arena), true);
        uint256 roundId = rounds.createRound(conds, uint64(block.timestamp) + 900, uint64(block.timestamp) + 1900);
        uint16[] memory p = new uint16[](2);
        p[0] = 5000;
        p[1] = 5000;
        vm.prank(agent);
        arena.commit(roundId, keccak256(abi.encodePacked(roundId, p, bytes32(0))));
        vm.prank(second);
        arena.commit(roundId, keccak256(abi.encodePacked(roundId, p, bytes32(0))));
        vm.warp(block.timestamp + 900);
        rounds.setBenchmarkPrices(roundId, p);
        vm.prank(agent);
        arena.reveal(roundId, p, bytes32(0));
        vm.prank(second);
        arena.reveal(roundId, p, bytes32(0));
        vm.warp(block.timestamp + 1000);
        uint256[] memory yes = new uint256[](2);
        yes[1] = 1;
        ctf.reportPayouts(conds[0], yes);
        ctf.reportPayouts(conds[1], yes);
        arena.triggerOutcomes(roundId);
        require(arena.calculateScoresForPendingReveals(roundId) == 2, "both scored");
        require(reputation.getLastIndex(agentId, address(arena)) == 0, "no feedback on the first");
        require(reputation.getLastIndex(secondId, address(arena)) == 2, "the second's two entries");
        (,, bool scored,,,) = arena.getEntry(roundId, agent);
        require(scored, "the first's score stays in the arena");
    }

    function test_aTransferMovesTheCardNotTheAgentKeyNorItsRecord() public {
        playRound(7000, 2000, 6000, 3000, bytes32(uint256(1)), true, false);
        vm.prank(agent);
        registry.transferFrom(agent, other, agentId);
        require(registry.ownerOf(agentId) == other && registry.balanceOf(agent) == 0, "token moved");
        // the key that earned the record still is the agent, with the same id and record
        require(registry.agentIdOf(agent) == agentId && registry.isRegistered(agent), "key stays");
        require(!registry.isRegistered(other), "the holder is not the agent");
        require(reputation.getLastIndex(agentId, address(arena)) == 2, "record stays with the id");
        // the new holder controls the card; the old one no longer does
        vm.prank(agent);
        vm.expectRevert(bytes("Registry: not the owner or approved"));
        registry.setAgentURI(agentId, "old holder");
        vm.prank(other);
        registry.setAgentURI(agentId, "new holder");
        // the key keeps forecasting under its id
        playRound(4000, 9000, 6000, 3000, bytes32(uint256(2)), true, false);
        require(reputation.getLastIndex(agentId, address(arena)) == 4, "the next round under the same id");
        vm.prank(other);
        uint256 otherId = registry.register("its own card"); // a holder may still have its own key's identity
        require(otherId == agentId + 1 && registry.balanceOf(other) == 2, "second token");
    }
}
