// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.24;

/// @title Round lifecycle: market sets, deadlines and benchmark prices at the commit deadline.
/// @notice Only the curator creates rounds and records benchmark prices (basis points, 0-10000),
/// and benchmark prices only once the commit phase is over.
contract RoundManager {
    uint16 public constant MAX_BP = 10000;
    uint256 public constant MAX_MARKETS = 64;

    struct Round {
        bytes32[] conditionIds;
        uint64 commitDeadline;
        uint64 revealDeadline;
        uint16[] benchmarkPrices;
        bool benchmarksSet;
    }

    address public immutable curator;
    uint256 public roundCount;
    mapping(uint256 => Round) internal rounds;

    event RoundCreated(
        uint256 indexed roundId, bytes32[] conditionIds, uint64 commitDeadline, uint64 revealDeadline
    );
    event BenchmarkPricesSet(uint256 indexed roundId, uint16[] prices);

    constructor() {
        curator = msg.sender;
    }

    modifier onlyCurator() {
        require(msg.sender == curator, "Rounds: not the curator");
        _;
    }

    function createRound(bytes32[] calldata conditionIds, uint64 commitDeadline, uint64 revealDeadline)
        external
        onlyCurator
        returns (uint256 roundId)
    {
        require(conditionIds.length > 0 && conditionIds.length <= MAX_MARKETS, "Rounds: bad market count");
        require(commitDeadline > block.timestamp, "Rounds: commit deadline in the past");
        require(revealDeadline > commitDeadline, "Rounds: reveal deadline before commit deadline");
        roundId = ++roundCount;
        Round storage r = rounds[roundId];
        r.conditionIds = conditionIds;
        r.commitDeadline = commitDeadline;
        r.revealDeadline = revealDeadline;
        emit RoundCreated(roundId, conditionIds, commitDeadline, revealDeadline);
    }

    function setBenchmarkPrices(uint256 roundId, uint16[] calldata prices) external onlyCurator {
        Round storage r = existing(roundId);
        require(block.timestamp >= r.commitDeadline, "Rounds: commit phase still open");
        require(!r.benchmarksSet, "Rounds: benchmark prices already set");
        require(prices.length == r.conditionIds.length, "Rounds: wrong number of prices");
        for (uint256 i = 0; i < prices.length; i++) {
            require(prices[i] <= MAX_BP, "Rounds: price above 10000 bp");
        }
        r.benchmarkPrices = prices;
        r.benchmarksSet = true;
        emit BenchmarkPricesSet(roundId, prices);
    }

    function getRound(uint256 roundId)
        external
        view
        returns (
            bytes32[] memory conditionIds,
            uint64 commitDeadline,
            uint64 revealDeadline,
            uint16[] memory benchmarkPrices,
            bool benchmarksSet
        )
    {
        Round storage r = existing(roundId);
        return (r.conditionIds, r.commitDeadline, r.revealDeadline, r.benchmarkPrices, r.benchmarksSet);
    }

    function existing(uint256 roundId) internal view returns (Round storage r) {
        r = rounds[roundId];
        require(r.conditionIds.length > 0, "Rounds: unknown round");
    }
}
