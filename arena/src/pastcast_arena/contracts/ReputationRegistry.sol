// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.24;

interface IAgentIdentity {
    function exists(uint256 agentId) external view returns (bool);
}

/// @title The agents' reputation registry (the reputation half of ERC-8004): one entry per round
/// and agent, the round's Brier and alpha in basis points, written after resolution by the one
/// authorised scorer (the arena contract, which computes them) and never overwritten.
/// @notice The deployer authorises the scorer once. Each agent's running sums (entries, counted
/// markets, Brier and alpha and their squares) are kept beside the entries, so the leaderboard's
/// means and standard errors are read from this contract's state alone.
contract ReputationRegistry {
    int256 public constant MAX_BP = 10000;

    struct Entry {
        bool recorded;
        uint16 brierBp;
        int16 alphaBp;
        uint16 resolvedCount;
    }

    struct Summary {
        uint256 rounds;
        uint256 predictions;
        uint256 brierBpSum;
        int256 alphaBpSum;
        uint256 brierBpSqSum;
        uint256 alphaBpSqSum;
    }

    address public immutable admin;
    IAgentIdentity public immutable identityRegistry;
    address public scorer;
    mapping(uint256 => mapping(uint256 => Entry)) internal entries;
    mapping(uint256 => uint256[]) internal roundsOfAgent;
    mapping(uint256 => Summary) internal summaries;

    event ScorerAuthorised(address indexed scorer);
    event ScoreRecorded(
        uint256 indexed roundId, uint256 indexed agentId, uint256 brierBp, int256 alphaBp, uint256 resolvedCount
    );

    constructor(address identityRegistry_) {
        admin = msg.sender;
        identityRegistry = IAgentIdentity(identityRegistry_);
    }

    function authoriseScorer(address scorer_) external {
        require(msg.sender == admin, "Reputation: not the admin");
        require(scorer == address(0), "Reputation: scorer already set");
        require(scorer_ != address(0), "Reputation: no scorer");
        scorer = scorer_;
        emit ScorerAuthorised(scorer_);
    }

    function recordScore(uint256 roundId, uint256 agentId, uint256 brierBp, int256 alphaBp, uint256 resolvedCount)
        external
    {
        require(msg.sender == scorer, "Reputation: not the scorer");
        require(identityRegistry.exists(agentId), "Reputation: agent not registered");
        require(roundId != 0, "Reputation: no round");
        require(brierBp <= uint256(MAX_BP), "Reputation: Brier above 10000 bp");
        require(alphaBp >= -MAX_BP && alphaBp <= MAX_BP, "Reputation: alpha out of range");
        require(resolvedCount > 0 && resolvedCount <= type(uint16).max, "Reputation: bad market count");
        Entry storage e = entries[roundId][agentId];
        require(!e.recorded, "Reputation: entry already recorded");
        e.recorded = true;
        e.brierBp = uint16(brierBp);
        e.alphaBp = int16(alphaBp);
        e.resolvedCount = uint16(resolvedCount);
        roundsOfAgent[agentId].push(roundId);
        Summary storage s = summaries[agentId];
        s.rounds += 1;
        s.predictions += resolvedCount;
        s.brierBpSum += brierBp;
        s.alphaBpSum += alphaBp;
        s.brierBpSqSum += brierBp * brierBp;
        s.alphaBpSqSum += uint256(alphaBp * alphaBp);
        emit ScoreRecorded(roundId, agentId, brierBp, alphaBp, resolvedCount);
    }

    function getEntry(uint256 roundId, uint256 agentId)
        external
        view
        returns (bool recorded, uint256 brierBp, int256 alphaBp, uint256 resolvedCount)
    {
        Entry storage e = entries[roundId][agentId];
        return (e.recorded, e.brierBp, e.alphaBp, e.resolvedCount);
    }

    function roundsOf(uint256 agentId) external view returns (uint256[] memory) {
        return roundsOfAgent[agentId];
    }

    function getSummary(uint256 agentId)
        external
        view
        returns (
            uint256 rounds,
            uint256 predictions,
            uint256 brierBpSum,
            int256 alphaBpSum,
            uint256 brierBpSqSum,
            uint256 alphaBpSqSum
        )
    {
        Summary storage s = summaries[agentId];
        return (s.rounds, s.predictions, s.brierBpSum, s.alphaBpSum, s.brierBpSqSum, s.alphaBpSqSum);
    }
}
