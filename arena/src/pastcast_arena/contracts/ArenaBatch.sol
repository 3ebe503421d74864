// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.24;

interface IPredictionArena {
    function computeCommitHash(uint256 roundId, uint16[] calldata predictions, bytes32 salt)
        external
        pure
        returns (bytes32);
    function predictionsHash(uint16[] calldata predictions) external pure returns (bytes32);
    function commitDigest(uint256 roundId, bytes32 commitHash, address agent, uint256 nonce, uint256 deadline)
        external
        view
        returns (bytes32);
    function revealDigest(
        uint256 roundId,
        bytes32 predictionsHash_,
        bytes32 salt,
        address agent,
        uint256 nonce,
        uint256 deadline
    ) external view returns (bytes32);
    function recoverSigner(bytes32 digest, bytes calldata signature) external pure returns (address);
    function scoreBp(uint16[] calldata predictions, uint16[] calldata benchmarks, uint8[] calldata values)
        external
        pure
        returns (uint256 brierBp, int256 alphaBp, uint256 resolvedCount);
}

/// @title Many questions to a PredictionArena in one eth_call, for auditors and tests.
/// @notice Every answer comes from the arena's own public functions, called once per item.
contract ArenaBatch {
    function commitHashes(
        IPredictionArena arena,
        uint256[] calldata roundIds,
        uint16[][] calldata predictions,
        bytes32[] calldata salts
    ) external view returns (bytes32[] memory out) {
        out = new bytes32[](roundIds.length);
        for (uint256 i = 0; i < roundIds.length; i++) {
            out[i] = arena.computeCommitHash(roundIds[i], predictions[i], salts[i]);
        }
    }

    function predictionsHashes(IPredictionArena arena, uint16[][] calldata predictions)
        external
        view
        returns (bytes32[] memory out)
    {
        out = new bytes32[](predictions.length);
        for (uint256 i = 0; i < predictions.length; i++) {
            out[i] = arena.predictionsHash(predictions[i]);
        }
    }

    struct Message {
        uint256 roundId;
        bytes32 hash; // commitHash (Commit) or predictionsHash (Reveal)
        bytes32 salt; // Reveal only
        address agent;
        uint256 nonce;
        uint256 deadline;
        bool reveal;
        bytes signature;
    }

    /// The EIP-712 digest of each message and the address its signature recovers.
    function digestsAndSigners(IPredictionArena arena, Message[] calldata messages)
        external
        view
        returns (bytes32[] memory digests, address[] memory signers)
    {
        digests = new bytes32[](messages.length);
        signers = new address[](messages.length);
        for (uint256 i = 0; i < messages.length; i++) {
            Message calldata m = messages[i];
            digests[i] = m.reveal
                ? arena.revealDigest(m.roundId, m.hash, m.salt, m.agent, m.nonce, m.deadline)
                : arena.commitDigest(m.roundId, m.hash, m.agent, m.nonce, m.deadline);
            signers[i] = arena.recoverSigner(digests[i], m.signature);
        }
    }

    function scores(
        IPredictionArena arena,
        uint16[][] calldata predictions,
        uint16[][] calldata benchmarks,
        uint8[][] calldata values
    ) external view returns (uint256[] memory briers, int256[] memory alphas, uint256[] memory counts) {
        briers = new uint256[](predictions.length);
        alphas = new int256[](predictions.length);
        counts = new uint256[](predictions.length);
        for (uint256 i = 0; i < predictions.length; i++) {
            (briers[i], alphas[i], counts[i]) = arena.scoreBp(predictions[i], benchmarks[i], values[i]);
        }
    }
}
