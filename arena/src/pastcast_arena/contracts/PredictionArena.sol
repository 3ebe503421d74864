// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.24;

interface IRoundManager {
    function getRound(uint256 roundId)
        external
        view
        returns (
            bytes32[] memory conditionIds,
            uint64 commitDeadline,
            uint64 revealDeadline,
            uint16[] memory benchmarkPrices,
            bool benchmarksSet
        );
}

interface IConditionalTokens {
    function payoutNumerators(bytes32 conditionId, uint256 index) external view returns (uint256);
    function payoutDenominator(bytes32 conditionId) external view returns (uint256);
}

interface IAgentRegistry {
    function isRegistered(address agent) external view returns (bool);
    function agentIdOf(address agent) external view returns (uint256);
    function isAuthorizedOrOwner(address spender, uint256 agentId) external view returns (bool);
}

interface IReputationRegistry {
    function giveFeedback(
        uint256 agentId,
        int128 value,
        uint8 valueDecimals,
        string calldata tag1,
        string calldata tag2,
        string calldata endpoint,
        string calldata feedbackURI,
        bytes32 feedbackHash
    ) external;
}

/// @title Commit-reveal forecasting rounds, scored in basis points against the market.
/// @notice Agents commit keccak256(abi.encodePacked(roundId, predictions, salt)) before the
/// round's commit deadline and reveal during the reveal window, directly or through a relayer
/// with EIP-712 signatures (per-agent nonces, signature deadlines). After the reveal window anyone
/// triggers the outcomes (read from the conditional-tokens contract; unresolved markets are left
/// out) and the scores: Brier and Alpha (market Brier minus agent Brier) in basis points. Each
/// score is also given as ERC-8004 feedback on the agent's identity, this contract the client:
/// tag1 "brier" or "alpha", tag2 the round id, the value in basis points (valueDecimals 4).
contract PredictionArena {
    uint256 public constant MAX_BP = 10000;
    uint8 public constant OUTCOME_NO = 0;
    uint8 public constant OUTCOME_YES = 1;
    uint8 public constant OUTCOME_EXCLUDED = 2;

    bytes32 public constant COMMIT_TYPEHASH = keccak256(
        "Commit(uint256 roundId,bytes32 commitHash,address agent,uint256 nonce,uint256 deadline)"
    );
    bytes32 public constant REVEAL_TYPEHASH = keccak256(
        "Reveal(uint256 roundId,bytes32 predictionsHash,bytes32 salt,address agent,uint256 nonce,uint256 deadline)"
    );
    bytes32 internal constant DOMAIN_TYPEHASH = keccak256(
        "EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)"
    );
    // secp256k1n / 2: signatures with a larger s are malleable copies and are refused.
    uint256 internal constant HALF_N = 0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0;

    IRoundManager public immutable roundManager;
    IConditionalTokens public immutable conditionalTokens;
    IAgentRegistry public immutable agentRegistry;
    IReputationRegistry public immutable reputationRegistry;
    /// Outcome slot whose payout share is the YES outcome (Foresight Arena reads slot 1).
    uint256 public immutable yesIndex;

    struct Entry {
        bytes32 commitHash;
        bool revealed;
        bool scored;
        uint16[] predictions;
        uint256 brierBp;
        int256 alphaBp;
    }

    struct Outcomes {
        bool triggered;
        uint8[] values;
        uint256 resolvedCount;
        uint256 baselineBrierBp;
        uint256 scoredCount;
    }

    struct Totals {
        uint256 roundsScored;
        uint256 brierBpSum;
        int256 alphaBpSum;
    }

    mapping(address => uint256) public nonces;
    mapping(address => Totals) public totals;
    mapping(uint256 => mapping(address => Entry)) internal entries;
    mapping(uint256 => address[]) internal revealers;
    mapping(uint256 => Outcomes) internal outcomes;

    event Committed(uint256 indexed roundId, address indexed agent, bytes32 commitHash);
    event Revealed(uint256 indexed roundId, address indexed agent, uint16[] predictions, bytes32 salt);
    event OutcomesTriggered(
        uint256 indexed roundId, uint8[] outcomes, uint256 resolvedCount, uint256 baselineBrierBp
    );
    event ScoreCalculated(
        uint256 indexed roundId, address indexed agent, uint256 brierBp, int256 alphaBp, uint256 resolvedCount
    );

    constructor(
        address roundManager_,
        address conditionalTokens_,
        address agentRegistry_,
        address reputationRegistry_,
        uint256 yesIndex_
    ) {
        roundManager = IRoundManager(roundManager_);
        conditionalTokens = IConditionalTokens(conditionalTokens_);
        agentRegistry = IAgentRegistry(agentRegistry_);
        reputationRegistry = IReputationRegistry(reputationRegistry_);
        yesIndex = yesIndex_;
    }

    // ---------------------------------------------------------------- hashing and signatures

    function computeCommitHash(uint256 roundId, uint16[] calldata predictions, bytes32 salt)
        public
        pure
        returns (bytes32)
    {
        return keccak256(abi.encodePacked(roundId, predictions, salt));
    }

    function predictionsHash(uint16[] calldata predictions) public pure returns (bytes32) {
        return keccak256(abi.encodePacked(predictions));
    }

    function domainSeparator() public view returns (bytes32) {
        return keccak256(
            abi.encode(DOMAIN_TYPEHASH, keccak256("PredictionArena"), keccak256("1"), block.chainid, address(this))
        );
    }

    function commitDigest(uint256 roundId, bytes32 commitHash, address agent, uint256 nonce, uint256 deadline)
        public
        view
        returns (bytes32)
    {
        bytes32 structHash = keccak256(abi.encode(COMMIT_TYPEHASH, roundId, commitHash, agent, nonce, deadline));
        return keccak256(abi.encodePacked("\x19\x01", domainSeparator(), structHash));
    }

    function revealDigest(
        uint256 roundId,
        bytes32 predictionsHash_,
        bytes32 salt,
        address agent,
        uint256 nonce,
        uint256 deadline
    ) public view returns (bytes32) {
        bytes32 structHash =
            keccak256(abi.encode(REVEAL_TYPEHASH, roundId, predictionsHash_, salt, agent, nonce, deadline));
        return keccak256(abi.encodePacked("\x19\x01", domainSeparator(), structHash));
    }

    function recoverSigner(bytes32 digest, bytes calldata signature) public pure returns (address) {
        require(signature.length == 65, "Arena: signature must be 65 bytes");
        bytes32 r = bytes32(signature[0:32]);
        bytes32 s = bytes32(signature[32:64]);
        uint8 v = uint8(signature[64]);
        require(uint256(s) <= HALF_N, "Arena: malleable signature");
        require(v == 27 || v == 28, "Arena: bad signature v");
        address signer = ecrecover(digest, v, r, s);
        require(signer != address(0), "Arena: invalid signature");
        return signer;
    }

    function useSignature(address agent, uint256 nonce, uint256 deadline, bytes32 digest, bytes calldata signature)
        internal
    {
        require(block.timestamp <= deadline, "Arena: signature expired");
        require(nonce == nonces[agent], "Arena: invalid nonce");
        require(recoverSigner(digest, signature) == agent, "Arena: signer is not the agent");
        nonces[agent] = nonce + 1;
    }

    // ---------------------------------------------------------------- commit and reveal

    function commit(uint256 roundId, bytes32 commitHash) external {
        doCommit(roundId, commitHash, msg.sender);
    }

    function commitWithSignature(
        uint256 roundId,
        bytes32 commitHash,
        address agent,
        uint256 nonce,
        uint256 deadline,
        bytes calldata signature
    ) external {
        useSignature(agent, nonce, deadline, commitDigest(roundId, commitHash, agent, nonce, deadline), signature);
        doCommit(roundId, commitHash, agent);
    }

    function reveal(uint256 roundId, uint16[] calldata predictions, bytes32 salt) external {
        doReveal(roundId, predictions, salt, msg.sender);
    }

    function revealWithSignature(
        uint256 roundId,
        uint16[] calldata predictions,
        bytes32 salt,
        address agent,
        uint256 nonce,
        uint256 deadline,
        bytes calldata signature
    ) external {
        bytes32 digest = revealDigest(roundId, predictionsHash(predictions), salt, agent, nonce, deadline);
        useSignature(agent, nonce, deadline, digest, signature);
        doReveal(roundId, predictions, salt, agent);
    }

    function doCommit(uint256 roundId, bytes32 commitHash, address agent) internal {
        (,uint64 commitDeadline,,,) = roundManager.getRound(roundId);
        require(agentRegistry.isRegistered(agent), "Arena: agent not registered");
        require(block.timestamp < commitDeadline, "Arena: commit phase is over");
        require(commitHash != bytes32(0), "Arena: empty commitment");
        Entry storage e = entries[roundId][agent];
        require(e.commitHash == bytes32(0), "Arena: already committed");
        e.commitHash = commitHash;
        emit Committed(roundId, agent, commitHash);
    }

    function doReveal(uint256 roundId, uint16[] calldata predictions, bytes32 salt, address agent) internal {
        (bytes32[] memory conditionIds, uint64 commitDeadline, uint64 revealDeadline,,) = roundManager.getRound(roundId);
        require(block.timestamp >= commitDeadline, "Arena: commit phase still open");
        require(block.timestamp < revealDeadline, "Arena: reveal window is over");
        Entry storage e = entries[roundId][agent];
        require(e.commitHash != bytes32(0), "Arena: no commitment");
        require(!e.revealed, "Arena: already revealed");
        require(predictions.length == conditionIds.length, "Arena: wrong number of predictions");
        for (uint256 i = 0; i < predictions.length; i++) {
            require(predictions[i] <= MAX_BP, "Arena: prediction above 10000 bp");
        }
        require(computeCommitHash(roundId, predictions, salt) == e.commitHash, "Arena: reveal does not match commitment");
        e.revealed = true;
        e.predictions = predictions;
        revealers[roundId].push(agent);
        emit Revealed(roundId, agent, predictions, salt);
    }

    // ---------------------------------------------------------------- outcomes and scores

    /// Reads each market's payouts; a market counts when its denominator is positive and the YES
    /// share is all or nothing. Split or missing payouts leave it out of scoring.
    function triggerOutcomes(uint256 roundId) external {
        (bytes32[] memory conditionIds,, uint64 revealDeadline, uint16[] memory benchmarks, bool benchmarksSet) =
            roundManager.getRound(roundId);
        Outcomes storage o = outcomes[roundId];
        require(!o.triggered, "Arena: outcomes already triggered");
        require(block.timestamp >= revealDeadline, "Arena: reveal window still open");
        require(benchmarksSet, "Arena: benchmark prices not set");
        uint8[] memory values = new uint8[](conditionIds.length);
        uint256 resolved = 0;
        for (uint256 i = 0; i < conditionIds.length; i++) {
            values[i] = readOutcome(conditionIds[i]);
            if (values[i] != OUTCOME_EXCLUDED) resolved++;
        }
        require(resolved > 0, "Arena: no market resolved yet");
        (uint256 baseline,,) = scoreBp(benchmarks, benchmarks, values);
        o.triggered = true;
        o.values = values;
        o.resolvedCount = resolved;
        o.baselineBrierBp = baseline;
        emit OutcomesTriggered(roundId, values, resolved, baseline);
    }

    function readOutcome(bytes32 conditionId) internal view returns (uint8) {
        uint256 denominator = conditionalTokens.payoutDenominator(conditionId);
        if (denominator == 0) return OUTCOME_EXCLUDED;
        uint256 yes = conditionalTokens.payoutNumerators(conditionId, yesIndex);
        if (yes == denominator) return OUTCOME_YES;
        if (yes == 0) return OUTCOME_NO;
        return OUTCOME_EXCLUDED;
    }

    /// Brier of `predictions` and Alpha against `benchmarks` over the counted markets, in basis
    /// points: brier = floor(sum (p - 10000 x)^2 / (n * 10000)), alpha = baseline - brier.
    function scoreBp(uint16[] memory predictions, uint16[] memory benchmarks, uint8[] memory values)
        public
        pure
        returns (uint256 brierBp, int256 alphaBp, uint256 resolvedCount)
    {
        require(predictions.length == values.length && benchmarks.length == values.length, "Arena: length mismatch");
        uint256 agentSum = 0;
        uint256 baseSum = 0;
        for (uint256 i = 0; i < values.length; i++) {
            if (values[i] == OUTCOME_EXCLUDED) continue;
            uint256 x = values[i] == OUTCOME_YES ? MAX_BP : 0;
            uint256 dp = predictions[i] > x ? predictions[i] - x : x - predictions[i];
            uint256 db = benchmarks[i] > x ? benchmarks[i] - x : x - benchmarks[i];
            agentSum += dp * dp;
            baseSum += db * db;
            resolvedCount++;
        }
        require(resolvedCount > 0, "Arena: no resolved market to score");
        brierBp = agentSum / (resolvedCount * MAX_BP);
        alphaBp = int256(baseSum / (resolvedCount * MAX_BP)) - int256(brierBp);
    }

    /// Scores every reveal of the round not scored yet, adds it to the agents' totals and gives it
    /// as feedback in the reputation registry. An agent that made this contract an operator of its
    /// token gets none (the registry refuses self-feedback; skipping it keeps one agent from
    /// blocking the round's scoring): its score stays in this contract's entry and event.
    function calculateScoresForPendingReveals(uint256 roundId) external returns (uint256 scored) {
        Outcomes storage o = outcomes[roundId];
        require(o.triggered, "Arena: outcomes not triggered");
        (,,, uint16[] memory benchmarks,) = roundManager.getRound(roundId);
        address[] storage list = revealers[roundId];
        for (uint256 i = o.scoredCount; i < list.length; i++) {
            Entry storage e = entries[roundId][list[i]];
            (uint256 brier, int256 alpha, uint256 n) = scoreBp(e.predictions, benchmarks, o.values);
            e.scored = true;
            e.brierBp = brier;
            e.alphaBp = alpha;
            Totals storage t = totals[list[i]];
            t.roundsScored += 1;
            t.brierBpSum += brier;
            t.alphaBpSum += alpha;
            uint256 agentId = agentRegistry.agentIdOf(list[i]);
            if (!agentRegistry.isAuthorizedOrOwner(address(this), agentId)) {
                string memory round = decimal(roundId);
                reputationRegistry.giveFeedback(agentId, int128(int256(brier)), 4, "brier", round, "", "", 0);
                reputationRegistry.giveFeedback(agentId, int128(alpha), 4, "alpha", round, "", "", 0);
            }
            emit ScoreCalculated(roundId, list[i], brier, alpha, n);
            scored++;
        }
        o.scoredCount = list.length;
    }

    function decimal(uint256 value) internal pure returns (string memory) {
        bytes memory digits = new bytes(78);
        uint256 start = 78;
        do {
            digits[--start] = bytes1(uint8(48 + value % 10));
            value /= 10;
        } while (value != 0);
        bytes memory out = new bytes(78 - start);
        for (uint256 i = 0; i < out.length; i++) {
            out[i] = digits[start + i];
        }
        return string(out);
    }

    // ---------------------------------------------------------------- views

    function getEntry(uint256 roundId, address agent)
        external
        view
        returns (bytes32 commitHash, bool revealed, bool scored, uint16[] memory predictions, uint256 brierBp, int256 alphaBp)
    {
        Entry storage e = entries[roundId][agent];
        return (e.commitHash, e.revealed, e.scored, e.predictions, e.brierBp, e.alphaBp);
    }

    function getOutcomes(uint256 roundId)
        external
        view
        returns (bool triggered, uint8[] memory values, uint256 resolvedCount, uint256 baselineBrierBp)
    {
        Outcomes storage o = outcomes[roundId];
        return (o.triggered, o.values, o.resolvedCount, o.baselineBrierBp);
    }

    function revealersOf(uint256 roundId) external view returns (address[] memory) {
        return revealers[roundId];
    }
}
