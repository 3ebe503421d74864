// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.24;

/// @title The resolution side of the Gnosis Conditional Token Framework, for tests and replays.
/// @notice Exposes the same read interface as the CTF (`payoutNumerators(conditionId, index)` and
/// `payoutDenominator(conditionId)`); an oracle reports each condition's payouts once.
contract MockConditionalTokens {
    address public immutable oracle;
    mapping(bytes32 => uint256[]) internal numerators;
    mapping(bytes32 => uint256) public payoutDenominator;

    event ConditionResolution(bytes32 indexed conditionId, uint256[] payoutNumerators);

    constructor() {
        oracle = msg.sender;
    }

    function reportPayouts(bytes32 conditionId, uint256[] calldata payouts) external {
        require(msg.sender == oracle, "CTF: not the oracle");
        require(payoutDenominator[conditionId] == 0, "CTF: already resolved");
        require(payouts.length >= 2, "CTF: need at least two outcome slots");
        uint256 denominator = 0;
        for (uint256 i = 0; i < payouts.length; i++) {
            denominator += payouts[i];
        }
        require(denominator > 0, "CTF: payouts are all zero");
        numerators[conditionId] = payouts;
        payoutDenominator[conditionId] = denominator;
        emit ConditionResolution(conditionId, payouts);
    }

    /// Same shape as the CTF's public array getter: reverts for an unreported condition.
    function payoutNumerators(bytes32 conditionId, uint256 index) external view returns (uint256) {
        return numerators[conditionId][index];
    }
}
