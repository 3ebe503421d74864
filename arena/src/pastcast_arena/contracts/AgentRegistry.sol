// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.24;

interface IERC721Receiver {
    function onERC721Received(address operator, address from, uint256 tokenId, bytes calldata data)
        external
        returns (bytes4);
}

/// @title The agents' identity registry: ERC-8004's identity registry, an ERC-721 token with the
/// metadata extension (ERC-165 answers both) whose token id is the agent id and whose tokenURI
/// is the agent's registration file (ERC-8004's agentURI).
/// @notice ERC-8004's register(agentURI[, metadata]), setAgentURI, getMetadata/setMetadata and the
/// reserved agentWallet key (the registrant's address, cleared when the token moves; changing it
/// with a wallet signature is not implemented), with the Registered, URIUpdated and MetadataSet
/// events. The arena's rule on top: a key registers once, and becomes for good the agent address
/// of its token (ids start at 1, so 0 means "not registered"). That key commits, reveals and is
/// scored, so the track record under the id is the key's; a transfer moves the token, i.e. control
/// of the card (URI and metadata), never the agent address.
contract AgentRegistry {
    struct MetadataEntry {
        string metadataKey;
        bytes metadataValue;
    }

    string public constant name = "Foresight Arena Agent";
    string public constant symbol = "AGENT";
    string internal constant WALLET_KEY = "agentWallet";

    uint256 public agentCount;
    mapping(address => uint256) public agentIdOf;
    mapping(uint256 => address) public agentAddress;
    mapping(address => mapping(address => bool)) public isApprovedForAll;
    mapping(address => uint256) internal balances;
    mapping(uint256 => address) internal owners;
    mapping(uint256 => address) internal approvals;
    mapping(uint256 => string) internal uris;
    mapping(uint256 => mapping(string => bytes)) internal metadata;

    event Transfer(address indexed from, address indexed to, uint256 indexed tokenId);
    event Approval(address indexed owner, address indexed approved, uint256 indexed tokenId);
    event ApprovalForAll(address indexed owner, address indexed operator, bool approved);
    event Registered(uint256 indexed agentId, string agentURI, address indexed owner);
    event URIUpdated(uint256 indexed agentId, string newURI, address indexed updatedBy);
    event MetadataSet(
        uint256 indexed agentId, string indexed indexedMetadataKey, string metadataKey, bytes metadataValue
    );

    // ---------------------------------------------------------------- registration

    function register() external returns (uint256) {
        return mint("", new MetadataEntry[](0));
    }

    function register(string calldata agentURI) external returns (uint256) {
        return mint(agentURI, new MetadataEntry[](0));
    }

    function register(string calldata agentURI, MetadataEntry[] calldata entries) external returns (uint256) {
        return mint(agentURI, entries);
    }

    function mint(string memory agentURI, MetadataEntry[] memory entries) internal returns (uint256 agentId) {
        require(agentIdOf[msg.sender] == 0, "Registry: already registered");
        agentId = ++agentCount;
        agentIdOf[msg.sender] = agentId;
        agentAddress[agentId] = msg.sender;
        owners[agentId] = msg.sender;
        balances[msg.sender] += 1;
        uris[agentId] = agentURI;
        emit Transfer(address(0), msg.sender, agentId);
        emit Registered(agentId, agentURI, msg.sender);
        writeMetadata(agentId, WALLET_KEY, abi.encodePacked(msg.sender));
        for (uint256 i = 0; i < entries.length; i++) {
            setEntry(agentId, entries[i].metadataKey, entries[i].metadataValue);
        }
        checkReceiver(address(0), msg.sender, agentId, "");
    }

    function isRegistered(address agent) external view returns (bool) {
        return agentIdOf[agent] != 0;
    }

    // ---------------------------------------------------------------- the card

    function tokenURI(uint256 agentId) external view returns (string memory) {
        ownerOf(agentId);
        return uris[agentId];
    }

    function getMetadata(uint256 agentId, string calldata key) external view returns (bytes memory) {
        return metadata[agentId][key];
    }

    function getAgentWallet(uint256 agentId) external view returns (address) {
        return address(bytes20(metadata[agentId][WALLET_KEY]));
    }

    modifier onlyAuthorized(uint256 agentId) {
        require(isAuthorizedOrOwner(msg.sender, agentId), "Registry: not the owner or approved");
        _;
    }

    function setAgentURI(uint256 agentId, string calldata newURI) external onlyAuthorized(agentId) {
        uris[agentId] = newURI;
        emit URIUpdated(agentId, newURI, msg.sender);
    }

    function setMetadata(uint256 agentId, string calldata key, bytes calldata value) external onlyAuthorized(agentId) {
        setEntry(agentId, key, value);
    }

    function setEntry(uint256 agentId, string memory key, bytes memory value) internal {
        require(keccak256(bytes(key)) != keccak256(bytes(WALLET_KEY)), "Registry: reserved key");
        writeMetadata(agentId, key, value);
    }

    function writeMetadata(uint256 agentId, string memory key, bytes memory value) internal {
        metadata[agentId][key] = value;
        emit MetadataSet(agentId, key, key, value);
    }

    // ---------------------------------------------------------------- ERC-721

    function supportsInterface(bytes4 interfaceId) external pure returns (bool) {
        return interfaceId == 0x01ffc9a7 // ERC-165
            || interfaceId == 0x80ac58cd // ERC-721
            || interfaceId == 0x5b5e139f; // ERC-721 metadata
    }

    function balanceOf(address owner) external view returns (uint256) {
        require(owner != address(0), "Registry: zero address");
        return balances[owner];
    }

    function ownerOf(uint256 agentId) public view returns (address owner) {
        owner = owners[agentId];
        require(owner != address(0), "Registry: unknown agent");
    }

    function getApproved(uint256 agentId) public view returns (address) {
        ownerOf(agentId);
        return approvals[agentId];
    }

    /// The owner, its operator or the token's approved address (reverts for an unknown agent).
    function isAuthorizedOrOwner(address spender, uint256 agentId) public view returns (bool) {
        address owner = ownerOf(agentId);
        return spender == owner || isApprovedForAll[owner][spender] || approvals[agentId] == spender;
    }

    function approve(address to, uint256 agentId) external {
        address owner = ownerOf(agentId);
        require(msg.sender == owner || isApprovedForAll[owner][msg.sender], "Registry: not the owner or operator");
        approvals[agentId] = to;
        emit Approval(owner, to, agentId);
    }

    function setApprovalForAll(address operator, bool approved) external {
        isApprovedForAll[msg.sender][operator] = approved;
        emit ApprovalForAll(msg.sender, operator, approved);
    }

    function transferFrom(address from, address to, uint256 agentId) public onlyAuthorized(agentId) {
        require(from == owners[agentId], "Registry: from is not the owner");
        require(to != address(0), "Registry: transfer to the zero address");
        delete approvals[agentId];
        balances[from] -= 1;
        balances[to] += 1;
        owners[agentId] = to;
        // ERC-8004: the wallet was the old holder's; nobody's until one is set again
        writeMetadata(agentId, WALLET_KEY, "");
        emit Transfer(from, to, agentId);
    }

    function safeTransferFrom(address from, address to, uint256 agentId) external {
        safeTransferFrom(from, to, agentId, "");
    }

    function safeTransferFrom(address from, address to, uint256 agentId, bytes memory data) public {
        transferFrom(from, to, agentId);
        checkReceiver(from, to, agentId, data);
    }

    /// A contract receiving a token must answer onERC721Received with its selector; its revert
    /// reason is passed on.
    function checkReceiver(address from, address to, uint256 agentId, bytes memory data) internal {
        if (to.code.length == 0) return;
        try IERC721Receiver(to).onERC721Received(msg.sender, from, agentId, data) returns (bytes4 answer) {
            require(answer == IERC721Receiver.onERC721Received.selector, "Registry: receiver refused the token");
        } catch (bytes memory reason) {
            if (reason.length == 0) revert("Registry: receiver refused the token");
            assembly {
                revert(add(reason, 32), mload(reason))
            }
        }
    }
}
