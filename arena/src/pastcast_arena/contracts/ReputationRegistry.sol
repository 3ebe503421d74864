// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.24;

interface IIdentityRegistry {
    function isAuthorizedOrOwner(address spender, uint256 agentId) external view returns (bool);
}

/// @title The agents' reputation registry: ERC-8004's reputation registry interface. Any client
/// gives feedback about a registered agent (a signed fixed-point value, two tags, an endpoint, a
/// feedback file's URI and hash); the agent's owner and operators may not (no self-feedback).
/// A client revokes its own feedback; anyone appends a response to a feedback.
/// @notice Feedback is kept per agent and client, indexed from 1; reads filter by clients and
/// tags. In the arena the client is the arena contract: after scoring a round it gives each agent
/// two entries, tag1 "brier" and "alpha", tag2 the round id, the value in basis points
/// (valueDecimals 4). A reader trusts the clients it names, so the leaderboard reads the arena's.
contract ReputationRegistry {
    int128 internal constant MAX_ABS_VALUE = 1e38;
    uint8 internal constant MAX_DECIMALS = 18;

    struct Feedback {
        int128 value;
        uint8 valueDecimals;
        bool isRevoked;
        string tag1;
        string tag2;
    }

    /// readAllFeedback's columns, built in memory (one stack slot instead of seven).
    struct Listing {
        address[] clients;
        uint64[] feedbackIndexes;
        int128[] values;
        uint8[] valueDecimals;
        string[] tag1s;
        string[] tag2s;
        bool[] revokedStatuses;
    }

    IIdentityRegistry internal immutable identity;
    mapping(uint256 => mapping(address => mapping(uint64 => Feedback))) internal feedback;
    mapping(uint256 => mapping(address => uint64)) internal lastIndex;
    mapping(uint256 => address[]) internal clients;
    mapping(uint256 => mapping(address => bool)) internal isClient;
    mapping(uint256 => mapping(address => mapping(uint64 => address[]))) internal responders;
    mapping(uint256 => mapping(address => mapping(uint64 => mapping(address => uint64)))) internal responses;

    event NewFeedback(
        uint256 indexed agentId,
        address indexed clientAddress,
        uint64 feedbackIndex,
        int128 value,
        uint8 valueDecimals,
        string indexed indexedTag1,
        string tag1,
        string tag2,
        string endpoint,
        string feedbackURI,
        bytes32 feedbackHash
    );
    event FeedbackRevoked(uint256 indexed agentId, address indexed clientAddress, uint64 indexed feedbackIndex);
    event ResponseAppended(
        uint256 indexed agentId,
        address indexed clientAddress,
        uint64 feedbackIndex,
        address indexed responder,
        string responseURI,
        bytes32 responseHash
    );

    constructor(address identityRegistry_) {
        require(identityRegistry_ != address(0), "Reputation: no identity registry");
        identity = IIdentityRegistry(identityRegistry_);
    }

    function getIdentityRegistry() external view returns (address) {
        return address(identity);
    }

    // ---------------------------------------------------------------- writes

    /// Reverts for an unknown agent (the identity registry's ownerOf does).
    function giveFeedback(
        uint256 agentId,
        int128 value,
        uint8 valueDecimals,
        string memory tag1,
        string memory tag2,
        string memory endpoint,
        string memory feedbackURI,
        bytes32 feedbackHash
    ) external {
        // memory, not calldata: a calldata string takes two stack slots, too many for the event
        require(valueDecimals <= MAX_DECIMALS, "Reputation: too many decimals");
        require(value >= -MAX_ABS_VALUE && value <= MAX_ABS_VALUE, "Reputation: value too large");
        require(!identity.isAuthorizedOrOwner(msg.sender, agentId), "Reputation: self-feedback");
        uint64 index = ++lastIndex[agentId][msg.sender];
        feedback[agentId][msg.sender][index] = Feedback(value, valueDecimals, false, tag1, tag2);
        if (!isClient[agentId][msg.sender]) {
            isClient[agentId][msg.sender] = true;
            clients[agentId].push(msg.sender);
        }
        emit NewFeedback(
            agentId, msg.sender, index, value, valueDecimals, tag1, tag1, tag2, endpoint, feedbackURI, feedbackHash
        );
    }

    /// Only the client that gave a feedback revokes it, once.
    function revokeFeedback(uint256 agentId, uint64 feedbackIndex) external {
        Feedback storage f = stored(agentId, msg.sender, feedbackIndex);
        require(!f.isRevoked, "Reputation: already revoked");
        f.isRevoked = true;
        emit FeedbackRevoked(agentId, msg.sender, feedbackIndex);
    }

    function appendResponse(
        uint256 agentId,
        address clientAddress,
        uint64 feedbackIndex,
        string calldata responseURI,
        bytes32 responseHash
    ) external {
        stored(agentId, clientAddress, feedbackIndex);
        require(bytes(responseURI).length > 0, "Reputation: empty response URI");
        mapping(address => uint64) storage counts = responses[agentId][clientAddress][feedbackIndex];
        if (counts[msg.sender] == 0) responders[agentId][clientAddress][feedbackIndex].push(msg.sender);
        counts[msg.sender] += 1;
        emit ResponseAppended(agentId, clientAddress, feedbackIndex, msg.sender, responseURI, responseHash);
    }

    // ---------------------------------------------------------------- reads

    function stored(uint256 agentId, address client, uint64 feedbackIndex) internal view returns (Feedback storage) {
        require(feedbackIndex > 0 && feedbackIndex <= lastIndex[agentId][client], "Reputation: no such feedback");
        return feedback[agentId][client][feedbackIndex];
    }

    function getLastIndex(uint256 agentId, address clientAddress) external view returns (uint64) {
        return lastIndex[agentId][clientAddress];
    }

    function getClients(uint256 agentId) external view returns (address[] memory) {
        return clients[agentId];
    }

    function readFeedback(uint256 agentId, address clientAddress, uint64 feedbackIndex)
        external
        view
        returns (int128 value, uint8 valueDecimals, string memory tag1, string memory tag2, bool isRevoked)
    {
        Feedback storage f = stored(agentId, clientAddress, feedbackIndex);
        return (f.value, f.valueDecimals, f.tag1, f.tag2, f.isRevoked);
    }

    /// An empty tag matches every tag.
    function matches(Feedback storage f, bytes32 tag1, bytes32 tag2, bool includeRevoked)
        internal
        view
        returns (bool)
    {
        bytes32 empty = keccak256("");
        return (includeRevoked || !f.isRevoked) && (tag1 == empty || tag1 == keccak256(bytes(f.tag1)))
            && (tag2 == empty || tag2 == keccak256(bytes(f.tag2)));
    }

    /// The count and mean of the named clients' unrevoked feedback matching the tags, the mean
    /// in the most frequent valueDecimals (values are averaged at 18 decimals, then rounded
    /// toward zero). The clients must be named: whose feedback counts is the reader's choice.
    function getSummary(uint256 agentId, address[] calldata clientAddresses, string calldata tag1, string calldata tag2)
        external
        view
        returns (uint64 count, int128 summaryValue, uint8 summaryValueDecimals)
    {
        require(clientAddresses.length > 0, "Reputation: name the clients");
        int256 mean;
        (count, mean, summaryValueDecimals) =
            summarise(agentId, clientAddresses, keccak256(bytes(tag1)), keccak256(bytes(tag2)));
        summaryValue = int128(mean / int256(10 ** uint256(MAX_DECIMALS - summaryValueDecimals)));
    }

    /// (count, mean at 18 decimals, most frequent valueDecimals) of the matching feedback.
    function summarise(uint256 agentId, address[] memory who, bytes32 t1, bytes32 t2)
        internal
        view
        returns (uint64 count, int256 mean, uint8 decimals)
    {
        uint64[19] memory perDecimals;
        for (uint256 i = 0; i < who.length; i++) {
            for (uint64 j = 1; j <= lastIndex[agentId][who[i]]; j++) {
                Feedback storage f = feedback[agentId][who[i]][j];
                if (!matches(f, t1, t2, false)) continue;
                mean += int256(f.value) * int256(10 ** uint256(MAX_DECIMALS - f.valueDecimals));
                perDecimals[f.valueDecimals] += 1;
                count += 1;
            }
        }
        if (count == 0) return (0, 0, 0);
        for (uint8 d = 0; d <= MAX_DECIMALS; d++) {
            if (perDecimals[d] > perDecimals[decimals]) decimals = d;
        }
        mean /= int256(uint256(count));
    }

    /// The feedback of the named clients (every client when none is named) matching the tags, by
    /// client then index; revoked feedback only when asked.
    function readAllFeedback(
        uint256 agentId,
        address[] memory clientAddresses,
        string memory tag1,
        string memory tag2,
        bool includeRevoked
    )
        external
        view
        returns (
            address[] memory,
            uint64[] memory,
            int128[] memory,
            uint8[] memory,
            string[] memory,
            string[] memory,
            bool[] memory
        )
    {
        // memory parameters: calldata ones take two stack slots each, too many beside seven columns
        if (clientAddresses.length == 0) clientAddresses = clients[agentId];
        Listing memory l = listing(agentId, clientAddresses, keccak256(bytes(tag1)), keccak256(bytes(tag2)), includeRevoked);
        return (l.clients, l.feedbackIndexes, l.values, l.valueDecimals, l.tag1s, l.tag2s, l.revokedStatuses);
    }

    function listing(uint256 agentId, address[] memory who, bytes32 t1, bytes32 t2, bool includeRevoked)
        internal
        view
        returns (Listing memory l)
    {
        uint256 n = 0;
        for (uint256 i = 0; i < who.length; i++) {
            for (uint64 j = 1; j <= lastIndex[agentId][who[i]]; j++) {
                if (matches(feedback[agentId][who[i]][j], t1, t2, includeRevoked)) n++;
            }
        }
        l = Listing(
            new address[](n), new uint64[](n), new int128[](n), new uint8[](n), new string[](n), new string[](n), new bool[](n)
        );
        n = 0;
        for (uint256 i = 0; i < who.length; i++) {
            for (uint64 j = 1; j <= lastIndex[agentId][who[i]]; j++) {
                Feedback storage f = feedback[agentId][who[i]][j];
                if (!matches(f, t1, t2, includeRevoked)) continue;
                l.clients[n] = who[i];
                l.feedbackIndexes[n] = j;
                l.values[n] = f.value;
                l.valueDecimals[n] = f.valueDecimals;
                l.tag1s[n] = f.tag1;
                l.tag2s[n] = f.tag2;
                l.revokedStatuses[n] = f.isRevoked;
                n++;
            }
        }
    }

    /// Responses to one feedback (clientAddress and feedbackIndex given), to all of a client's
    /// feedback (feedbackIndex 0) or to all of the agent's (clientAddress zero), from the named
    /// responders (everyone when none is named).
    function getResponseCount(uint256 agentId, address clientAddress, uint64 feedbackIndex, address[] calldata names)
        external
        view
        returns (uint64 count)
    {
        address[] memory who = clients[agentId];
        if (clientAddress != address(0)) {
            who = new address[](1);
            who[0] = clientAddress;
        }
        for (uint256 i = 0; i < who.length; i++) {
            (uint64 first, uint64 last) = (feedbackIndex, feedbackIndex);
            if (clientAddress == address(0) || feedbackIndex == 0) (first, last) = (1, lastIndex[agentId][who[i]]);
            for (uint64 j = first; j <= last; j++) {
                count += responsesTo(agentId, who[i], j, names);
            }
        }
    }

    function responsesTo(uint256 agentId, address client, uint64 feedbackIndex, address[] calldata names)
        internal
        view
        returns (uint64 count)
    {
        mapping(address => uint64) storage counts = responses[agentId][client][feedbackIndex];
        address[] memory who = names;
        if (who.length == 0) who = responders[agentId][client][feedbackIndex];
        for (uint256 k = 0; k < who.length; k++) {
            count += counts[who[k]];
        }
    }
}
