// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.24;

/// @title The agents' identity registry: the identity half of ERC-8004, as a minimal
/// ERC-721-style token (ownerOf, balanceOf, approve, setApprovalForAll, transferFrom and their
/// events; no safeTransferFrom).
/// @notice An agent registers with its own key: the key becomes the agent address of a new
/// token (ids start at 1, so 0 means "not registered") and its first owner. The agent address
/// is fixed for good: it is the key that commits, reveals and is scored, so the track record
/// recorded under the id is that key's. A transfer moves the token, i.e. control of the agent
/// card (its URI and metadata), never the agent address: a record cannot be moved onto another
/// key, and a key holds one identity only.
contract AgentRegistry {
    string public constant name = "Foresight Arena Agent";
    string public constant symbol = "AGENT";

    uint256 public agentCount;
    mapping(address => uint256) public agentIdOf;
    mapping(uint256 => address) public agentAddress;
    mapping(address => uint256) public balanceOf;
    mapping(uint256 => address) public getApproved;
    mapping(address => mapping(address => bool)) public isApprovedForAll;
    mapping(uint256 => address) internal owners;
    mapping(uint256 => string) internal uris;
    mapping(uint256 => mapping(string => bytes)) internal metadata;

    event AgentRegistered(uint256 indexed agentId, address indexed owner, string uri);
    event AgentURISet(uint256 indexed agentId, string uri);
    event MetadataSet(uint256 indexed agentId, string key, bytes value);
    event Transfer(address indexed from, address indexed to, uint256 indexed tokenId);
    event Approval(address indexed owner, address indexed approved, uint256 indexed tokenId);
    event ApprovalForAll(address indexed owner, address indexed operator, bool approved);

    function register(string calldata uri) external returns (uint256 agentId) {
        require(agentIdOf[msg.sender] == 0, "Registry: already registered");
        agentId = ++agentCount;
        agentIdOf[msg.sender] = agentId;
        agentAddress[agentId] = msg.sender;
        owners[agentId] = msg.sender;
        balanceOf[msg.sender] += 1;
        uris[agentId] = uri;
        emit Transfer(address(0), msg.sender, agentId);
        emit AgentRegistered(agentId, msg.sender, uri);
    }

    function isRegistered(address agent) external view returns (bool) {
        return agentIdOf[agent] != 0;
    }

    function exists(uint256 agentId) public view returns (bool) {
        return owners[agentId] != address(0);
    }

    function ownerOf(uint256 agentId) public view returns (address owner) {
        owner = owners[agentId];
        require(owner != address(0), "Registry: unknown agent");
    }

    // ---------------------------------------------------------------- the agent card

    function agentURI(uint256 agentId) external view returns (string memory) {
        ownerOf(agentId);
        return uris[agentId];
    }

    function tokenURI(uint256 agentId) external view returns (string memory) {
        ownerOf(agentId);
        return uris[agentId];
    }

    function getMetadata(uint256 agentId, string calldata key) external view returns (bytes memory) {
        ownerOf(agentId);
        return metadata[agentId][key];
    }

    modifier onlyOwner(uint256 agentId) {
        require(ownerOf(agentId) == msg.sender, "Registry: not the owner");
        _;
    }

    function setAgentURI(uint256 agentId, string calldata uri) external onlyOwner(agentId) {
        uris[agentId] = uri;
        emit AgentURISet(agentId, uri);
    }

    function setMetadata(uint256 agentId, string calldata key, bytes calldata value) external onlyOwner(agentId) {
        metadata[agentId][key] = value;
        emit MetadataSet(agentId, key, value);
    }

    // ---------------------------------------------------------------- the token

    function approve(address to, uint256 agentId) external {
        address owner = ownerOf(agentId);
        require(msg.sender == owner || isApprovedForAll[owner][msg.sender], "Registry: not the owner");
        getApproved[agentId] = to;
        emit Approval(owner, to, agentId);
    }

    function setApprovalForAll(address operator, bool approved) external {
        isApprovedForAll[msg.sender][operator] = approved;
        emit ApprovalForAll(msg.sender, operator, approved);
    }

    function transferFrom(address from, address to, uint256 agentId) external {
        address owner = ownerOf(agentId);
        require(from == owner, "Registry: from is not the owner");
        require(to != address(0), "Registry: transfer to the zero address");
        require(
            msg.sender == owner || getApproved[agentId] == msg.sender || isApprovedForAll[owner][msg.sender],
            "Registry: not the owner or approved"
        );
        delete getApproved[agentId];
        balanceOf[from] -= 1;
        balanceOf[to] += 1;
        owners[agentId] = to;
        emit Transfer(from, to, agentId);
    }

    function supportsInterface(bytes4 interfaceId) external pure returns (bool) {
        return interfaceId == 0x01ffc9a7; // ERC-165 only: without safeTransferFrom this is not ERC-721
    }
}
