// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.24;

import {AgentRegistry} from "arena/AgentRegistry.sol";
import {MockConditionalTokens} from "arena/MockConditionalTokens.sol";
import {PredictionArena} from "arena/PredictionArena.sol";
import {ReputationRegistry} from "arena/ReputationRegistry.sol";
import {RoundManager} from "arena/RoundManager.sol";

/// Forge's cheatcodes, declared here: the suite needs no library checkout.
interface Vm {
    function warp(uint256) external;
    function prank(address) external;
    function expectRevert(bytes calldata) external;
    function addr(uint256) external returns (address);
    function sign(uint256, bytes32) external returns (uint8, bytes32, bytes32);
    function assume(bool) external;
    function expectEmit(bool, bool, bool, bool) external;
}

/// The rejections the Python EVM tests check, and commit-reveal fuzzed: what is revealed is what
/// was committed, scores match a reference computed here, and no other reveal passes.
contract ArenaTest {
    Vm internal constant vm = Vm(address(uint160(uint256(keccak256("hevm cheat code")))));
    uint256 internal constant KEY = 0xA11CE;
    uint256 internal constant OTHER_KEY = 0xB0B;
    uint64 internal constant COMMIT = 1000;
    uint64 internal constant REVEAL = 2000;
    uint256 internal constant HALF_N = 0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0;
    uint256 internal constant N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141;

    PredictionArena internal arena;
    RoundManager internal rounds;
    AgentRegistry internal registry;
    ReputationRegistry internal reputation;
    MockConditionalTokens internal ctf;
    address internal agent;
    bytes32[] internal conds;
    uint256 internal roundId;

    function setUp() public {
        vm.warp(100);
        ctf = new MockConditionalTokens();
        registry = new AgentRegistry();
        reputation = new ReputationRegistry(address(registry));
        rounds = new RoundManager();
        arena = new PredictionArena(address(rounds), address(ctf), address(registry), address(reputation), 1);
        agent = vm.addr(KEY);
        vm.prank(agent);
        registry.register("agent");
        conds.push(keccak256("market-1"));
        conds.push(keccak256("market-2"));
        roundId = rounds.createRound(conds, COMMIT, REVEAL);
    }

    // ------------------------------------------------------------------ helpers

    function preds(uint16 a, uint16 b) internal pure returns (uint16[] memory p) {
        p = new uint16[](2);
        p[0] = a;
        p[1] = b;
    }

    function commitAs(address who, uint16[] memory p, bytes32 salt) internal {
        bytes32 h = keccak256(abi.encodePacked(roundId, p, salt));
        vm.prank(who);
        arena.commit(roundId, h);
    }

    function resolve(uint256 yes1, uint256 yes2) internal {
        uint256[] memory p1 = new uint256[](2);
        p1[1] = yes1;
        p1[0] = 1 - yes1;
        uint256[] memory p2 = new uint256[](2);
        p2[1] = yes2;
        p2[0] = 1 - yes2;
        ctf.reportPayouts(conds[0], p1);
        ctf.reportPayouts(conds[1], p2);
    }

    function sig(uint256 key, bytes32 digest) internal returns (bytes memory) {
        (uint8 v, bytes32 r, bytes32 s) = vm.sign(key, digest);
        return abi.encodePacked(r, s, v);
    }

    function brierBp(uint16[] memory p, uint8[2] memory x) internal pure returns (uint256) {
        uint256 sum = 0;
        for (uint256 i = 0; i < 2; i++) {
            int256 d = int256(uint256(p[i])) - int256(uint256(x[i]) * 10000);
            sum += uint256(d * d);
        }
        return sum / (2 * 10000);
    }

    // ------------------------------------------------------------------ the happy path, fuzzed

    function testFuzz_revealIsWhatWasCommittedAndScoresMatch(uint16 a, uint16 b, uint16 ba, uint16 bb, bytes32 salt, bool y1, bool y2)
        public
    {
        a = uint16(a % 10001);
        b = uint16(b % 10001);
        ba = uint16(ba % 10001);
        bb = uint16(bb % 10001);
        commitAs(agent, preds(a, b), salt);
        vm.warp(COMMIT);
        rounds.setBenchmarkPrices(roundId, preds(ba, bb));
        vm.prank(agent);
        arena.reveal(roundId, preds(a, b), salt);
        resolve(y1 ? 1 : 0, y2 ? 1 : 0);
        vm.warp(REVEAL);
        arena.triggerOutcomes(roundId);
        arena.calculateScoresForPendingReveals(roundId);
        (, bool revealed, bool scored, uint16[] memory got, uint256 brier, int256 alpha) = arena.getEntry(roundId, agent);
        require(revealed && scored, "revealed and scored");
        require(got[0] == a && got[1] == b, "revealed predictions");
        uint8[2] memory x = [y1 ? 1 : 0, y2 ? 1 : 0];
        uint256 expected = brierBp(preds(a, b), x);
        require(brier == expected, "brier");
        require(alpha == int256(brierBp(preds(ba, bb), x)) - int256(expected), "alpha");
    }

    function testFuzz_noOtherRevealMatches(uint16 a, uint16 b, bytes32 salt, uint16 a2, bytes32 salt2) public {
        a = uint16(a % 10001);
        b = uint16(b % 10001);
        a2 = uint16(a2 % 10001);
        vm.assume(a2 != a || salt2 != salt);
        commitAs(agent, preds(a, b), salt);
        vm.warp(COMMIT);
        vm.prank(agent);
        vm.expectRevert(bytes("Arena: reveal does not match commitment"));
        arena.reveal(roundId, preds(a2, b), salt2);
    }

    function testFuzz_signedCommitAndRevealThroughARelayer(uint16 a, uint16 b, bytes32 salt) public {
        a = uint16(a % 10001);
        b = uint16(b % 10001);
        bytes32 h = keccak256(abi.encodePacked(roundId, preds(a, b), salt));
        bytes32 cd = arena.commitDigest(roundId, h, agent, 0, COMMIT);
        arena.commitWithSignature(roundId, h, agent, 0, COMMIT, sig(KEY, cd)); // sent by this test
        vm.warp(COMMIT);
        bytes32 rd = arena.revealDigest(roundId, arena.predictionsHash(preds(a, b)), salt, agent, 1, REVEAL);
        arena.revealWithSignature(roundId, preds(a, b), salt, agent, 1, REVEAL, sig(KEY, rd));
        require(arena.nonces(agent) == 2, "nonces used up");
    }

    // ------------------------------------------------------------------ commit rejections

    function test_unregisteredAgentCannotCommit() public {
        vm.expectRevert(bytes("Arena: agent not registered"));
        commitAs(vm.addr(OTHER_KEY), preds(1, 2), bytes32(uint256(1)));
    }

    function test_commitAfterTheDeadlineIsRefused() public {
        vm.warp(COMMIT);
        vm.expectRevert(bytes("Arena: commit phase is over"));
        commitAs(agent, preds(1, 2), bytes32(uint256(1)));
    }

    function test_emptyCommitmentIsRefused() public {
        vm.prank(agent);
        vm.expectRevert(bytes("Arena: empty commitment"));
        arena.commit(roundId, bytes32(0));
    }

    function test_secondCommitIsRefused() public {
        commitAs(agent, preds(1, 2), bytes32(uint256(1)));
        vm.expectRevert(bytes("Arena: already committed"));
        commitAs(agent, preds(3, 4), bytes32(uint256(2)));
    }

    // ------------------------------------------------------------------ reveal rejections

    function test_revealWhileCommitsAreOpenIsRefused() public {
        commitAs(agent, preds(1, 2), bytes32(uint256(1)));
        vm.prank(agent);
        vm.expectRevert(bytes("Arena: commit phase still open"));
        arena.reveal(roundId, preds(1, 2), bytes32(uint256(1)));
    }

    function test_revealAfterTheWindowIsRefused() public {
        commitAs(agent, preds(1, 2), bytes32(uint256(1)));
        vm.warp(REVEAL);
        vm.prank(agent);
        vm.expectRevert(bytes("Arena: reveal window is over"));
        arena.reveal(roundId, preds(1, 2), bytes32(uint256(1)));
    }

    function test_revealWithoutCommitmentIsRefused() public {
        vm.warp(COMMIT);
        vm.prank(agent);
        vm.expectRevert(bytes("Arena: no commitment"));
        arena.reveal(roundId, preds(1, 2), bytes32(uint256(1)));
    }

    function test_secondRevealIsRefused() public {
        commitAs(agent, preds(1, 2), bytes32(uint256(1)));
        vm.warp(COMMIT);
        vm.prank(agent);
        arena.reveal(roundId, preds(1, 2), bytes32(uint256(1)));
        vm.prank(agent);
        vm.expectRevert(bytes("Arena: already revealed"));
        arena.reveal(roundId, preds(1, 2), bytes32(uint256(1)));
    }

    function test_wrongNumberOfPredictionsIsRefused() public {
        commitAs(agent, preds(1, 2), bytes32(uint256(1)));
        vm.warp(COMMIT);
        uint16[] memory one = new uint16[](1);
        vm.prank(agent);
        vm.expectRevert(bytes("Arena: wrong number of predictions"));
        arena.reveal(roundId, one, bytes32(uint256(1)));
    }

    function test_predictionAbove10000IsRefused() public {
        commitAs(agent, preds(10001, 2), bytes32(uint256(1)));
        vm.warp(COMMIT);
        vm.prank(agent);
        vm.expectRevert(bytes("Arena: prediction above 10000 bp"));
        arena.reveal(roundId, preds(10001, 2), bytes32(uint256(1)));
    }

    // ------------------------------------------------------------------ signatures

    function test_expiredSignatureIsRefused() public {
        bytes32 h = keccak256("h");
        bytes memory s = sig(KEY, arena.commitDigest(roundId, h, agent, 0, 500));
        vm.warp(501);
        vm.expectRevert(bytes("Arena: signature expired"));
        arena.commitWithSignature(roundId, h, agent, 0, 500, s);
    }

    function test_reusedNonceIsRefused() public {
        bytes32 h = keccak256("h");
        bytes memory s = sig(KEY, arena.commitDigest(roundId, h, agent, 0, COMMIT));
        arena.commitWithSignature(roundId, h, agent, 0, COMMIT, s);
        vm.expectRevert(bytes("Arena: invalid nonce"));
        arena.commitWithSignature(roundId, h, agent, 0, COMMIT, s);
    }

    function test_anotherKeysSignatureIsRefused() public {
        bytes32 h = keccak256("h");
        bytes memory s = sig(OTHER_KEY, arena.commitDigest(roundId, h, agent, 0, COMMIT));
        vm.expectRevert(bytes("Arena: signer is not the agent"));
        arena.commitWithSignature(roundId, h, agent, 0, COMMIT, s);
    }

    function test_malleableSignatureIsRefused() public {
        bytes32 h = keccak256("h");
        bytes32 digest = arena.commitDigest(roundId, h, agent, 0, COMMIT);
        (uint8 v, bytes32 r, bytes32 s) = vm.sign(KEY, digest);
        // the same signature with s' = n - s and the other v recovers the same signer
        bytes memory flipped = abi.encodePacked(r, bytes32(N - uint256(s)), v == 27 ? uint8(28) : uint8(27));
        require(N - uint256(s) > HALF_N, "flipped s is high");
        vm.expectRevert(bytes("Arena: malleable signature"));
        arena.commitWithSignature(roundId, h, agent, 0, COMMIT, flipped);
    }

    function test_badVAndLengthAreRefused() public {
        bytes32 h = keccak256("h");
        bytes32 digest = arena.commitDigest(roundId, h, agent, 0, COMMIT);
        (, bytes32 r, bytes32 s) = vm.sign(KEY, digest);
        vm.expectRevert(bytes("Arena: bad signature v"));
        arena.commitWithSignature(roundId, h, agent, 0, COMMIT, abi.encodePacked(r, s, uint8(29)));
        vm.expectRevert(bytes("Arena: signature must be 65 bytes"));
        arena.commitWithSignature(roundId, h, agent, 0, COMMIT, abi.encodePacked(r, s));
    }

    function test_aSignatureForOneRoundDoesNotCommitAnother() public {
        uint256 second = rounds.createRound(conds, COMMIT, REVEAL);
        bytes32 h = keccak256("h");
        bytes memory s = sig(KEY, arena.commitDigest(roundId, h, agent, 0, COMMIT));
        vm.expectRevert(bytes("Arena: signer is not the agent"));
        arena.commitWithSignature(second, h, agent, 0, COMMIT, s);
    }

    // ------------------------------------------------------------------ rounds, outcomes, scores

    function test_onlyTheCuratorSetsBenchmarksAfterTheCommitPhase() public {
        vm.expectRevert(bytes("Rounds: commit phase still open"));
        rounds.setBenchmarkPrices(roundId, preds(5000, 5000));
        vm.warp(COMMIT);
        vm.prank(agent);
        vm.expectRevert(bytes("Rounds: not the curator"));
        rounds.setBenchmarkPrices(roundId, preds(5000, 5000));
        rounds.setBenchmarkPrices(roundId, preds(5000, 5000));
        vm.expectRevert(bytes("Rounds: benchmark prices already set"));
        rounds.setBenchmarkPrices(roundId, preds(5000, 5000));
    }

    function test_roundsRefuseBadDeadlines() public {
        vm.expectRevert(bytes("Rounds: commit deadline in the past"));
        rounds.createRound(conds, 50, REVEAL);
        vm.expectRevert(bytes("Rounds: reveal deadline before commit deadline"));
        rounds.createRound(conds, COMMIT, COMMIT);
    }

    function test_outcomesWaitForTheWindowTheBenchmarksAndAResolution() public {
        vm.warp(COMMIT);
        vm.expectRevert(bytes("Arena: reveal window still open"));
        arena.triggerOutcomes(roundId);
        vm.warp(REVEAL);
        vm.expectRevert(bytes("Arena: benchmark prices not set"));
        arena.triggerOutcomes(roundId);
        rounds.setBenchmarkPrices(roundId, preds(5000, 5000));
        vm.expectRevert(bytes("Arena: no market resolved yet"));
        arena.triggerOutcomes(roundId);
        vm.expectRevert(bytes("Arena: outcomes not triggered"));
        arena.calculateScoresForPendingReveals(roundId);
        resolve(1, 0);
        arena.triggerOutcomes(roundId);
        vm.expectRevert(bytes("Arena: outcomes already triggered"));
        arena.triggerOutcomes(roundId);
    }

    function test_splitPayoutsAreExcludedFromScoring() public {
        commitAs(agent, preds(9000, 9000), bytes32(uint256(1)));
        vm.warp(COMMIT);
        rounds.setBenchmarkPrices(roundId, preds(5000, 5000));
        vm.prank(agent);
        arena.reveal(roundId, preds(9000, 9000), bytes32(uint256(1)));
        uint256[] memory split = new uint256[](2);
        split[0] = 1;
        split[1] = 1;
        ctf.reportPayouts(conds[0], split);
        uint256[] memory yes = new uint256[](2);
        yes[1] = 1;
        ctf.reportPayouts(conds[1], yes);
        vm.warp(REVEAL);
        arena.triggerOutcomes(roundId);
        arena.calculateScoresForPendingReveals(roundId);
        (,,,, uint256 brier, int256 alpha) = arena.getEntry(roundId, agent);
        require(brier == 100, "only the resolved market: (9000 - 10000)^2 / 10000");
        require(alpha == 2500 - 100, "alpha against 5000 bp");
    }

    function test_onlyTheOracleResolvesAndOnlyOnce() public {
        uint256[] memory yes = new uint256[](2);
        yes[1] = 1;
        vm.prank(agent);
        vm.expectRevert(bytes("CTF: not the oracle"));
        ctf.reportPayouts(conds[0], yes);
        ctf.reportPayouts(conds[0], yes);
        vm.expectRevert(bytes("CTF: already resolved"));
        ctf.reportPayouts(conds[0], yes);
    }

    function test_registeringTwiceIsRefused() public {
        vm.prank(agent);
        vm.expectRevert(bytes("Registry: already registered"));
        registry.register("again");
    }
}
