// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.24;

/// @title A minimal agent identity registry (the identity half of ERC-8004, without the NFT).
/// @notice One identity per address; ids start at 1 so that 0 means "not registered".
contract AgentRegistry {
    uint256 public agentCount;
    mapping(address => uint256) public agentIdOf;
    mapping(uint256 => address) public ownerOf;
    mapping(uint256 => string) public agentURI;

    event AgentRegistered(uint256 indexed agentId, address indexed owner, string uri);

    function register(string calldata uri) external returns (uint256 agentId) {
        require(agentIdOf[msg.sender] == 0, "Registry: already registered");
        agentId = ++agentCount;
        agentIdOf[msg.sender] = agentId;
        ownerOf[agentId] = msg.sender;
        agentURI[agentId] = uri;
        emit AgentRegistered(agentId, msg.sender, uri);
    }

    function isRegistered(address agent) external view returns (bool) {
        return agentIdOf[agent] != 0;
    }
}
