// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.24;

import {AgentRegistry} from "arena/AgentRegistry.sol";
import {Vm} from "./Arena.t.sol";

/// A contract that takes tokens, and registers itself: it records what onERC721Received got.
contract Receiver {
    address public operator;
    address public from;
    uint256 public tokenId;
    bytes public data;

    function onERC721Received(address operator_, address from_, uint256 tokenId_, bytes calldata data_)
        external
        returns (bytes4)
    {
        (operator, from, tokenId, data) = (operator_, from_, tokenId_, data_);
        return this.onERC721Received.selector;
    }

    function join(AgentRegistry registry) external returns (uint256) {
        return registry.register("a contract's card");
    }
}

/// Answers onERC721Received with the wrong value.
contract WrongAnswer {
    function onERC721Received(address, address, uint256, bytes calldata) external pure returns (bytes4) {
        return 0xdeadbeef;
    }
}

/// Refuses every token with a reason of its own.
contract Refuser {
    function onERC721Received(address, address, uint256, bytes calldata) external pure returns (bytes4) {
        revert("Refuser: no thanks");
    }
}

/// Has no onERC721Received at all.
contract NoHook {
    function join(AgentRegistry registry) external returns (uint256) {
        return registry.register("no hook");
    }
}

/// The identity registry as an ERC-721 (ERC-165 ids, balances, approvals and operators, both
/// safe transfers to receiving and refusing contracts) with ERC-8004's registration shapes,
/// events, card rights and reserved agentWallet key.
contract IdentityTest {
    Vm internal constant vm = Vm(address(uint160(uint256(keccak256("hevm cheat code")))));

    AgentRegistry internal registry;
    address internal agent;
    address internal other;
    address internal operator;
    uint256 internal agentId;

    event Transfer(address indexed from, address indexed to, uint256 indexed tokenId);
    event Registered(uint256 indexed agentId, string agentURI, address indexed owner);
    event MetadataSet(
        uint256 indexed agentId, string indexed indexedMetadataKey, string metadataKey, bytes metadataValue
    );

    function setUp() public {
        registry = new AgentRegistry();
        agent = vm.addr(0xA11CE);
        other = vm.addr(0xB0B);
        operator = vm.addr(0x0AE);
        vm.prank(agent);
        agentId = registry.register("agent-card");
    }

    // ------------------------------------------------------------------ ERC-165 and the token

    function test_theInterfaceIdsAreAnswered() public view {
        require(registry.supportsInterface(0x01ffc9a7), "ERC-165");
        require(registry.supportsInterface(0x80ac58cd), "ERC-721");
        require(registry.supportsInterface(0x5b5e139f), "ERC-721 metadata");
        require(!registry.supportsInterface(0xffffffff), "never 0xffffffff");
        require(!registry.supportsInterface(0x780e9d63), "not enumerable");
    }

    function test_registrationIsAnAgentTokenHeldByItsKey() public view {
        require(registry.ownerOf(agentId) == agent && registry.agentAddress(agentId) == agent, "owner and key");
        require(registry.balanceOf(agent) == 1 && registry.agentIdOf(agent) == agentId, "balance and id");
        require(keccak256(bytes(registry.tokenURI(agentId))) == keccak256("agent-card"), "uri");
        require(keccak256(bytes(registry.name())) == keccak256("Foresight Arena Agent"), "name");
        require(keccak256(bytes(registry.symbol())) == keccak256("AGENT"), "symbol");
    }

    function test_anUnknownAgentHasNoOwnerNorCardNorApproval() public {
        vm.expectRevert(bytes("Registry: unknown agent"));
        registry.ownerOf(agentId + 1);
        vm.expectRevert(bytes("Registry: unknown agent"));
        registry.tokenURI(0);
        vm.expectRevert(bytes("Registry: unknown agent"));
        registry.getApproved(agentId + 1);
        vm.expectRevert(bytes("Registry: zero address"));
        registry.balanceOf(address(0));
    }

    function test_approvalsAndOperators() public {
        vm.prank(other);
        vm.expectRevert(bytes("Registry: not the owner or operator"));
        registry.approve(other, agentId);
        vm.prank(agent);
        registry.setApprovalForAll(operator, true);
        require(registry.isApprovedForAll(agent, operator), "operator");
        vm.prank(operator); // an operator approves for the owner
        registry.approve(other, agentId);
        require(registry.getApproved(agentId) == other, "approved");
        vm.prank(agent);
        registry.setApprovalForAll(operator, false);
        vm.prank(operator);
        vm.expectRevert(bytes("Registry: not the owner or approved"));
        registry.transferFrom(agent, operator, agentId);
        vm.prank(agent);
        registry.setApprovalForAll(operator, true);
        vm.prank(operator); // an operator transfers, and the approval goes with the token
        registry.transferFrom(agent, operator, agentId);
        require(registry.ownerOf(agentId) == operator && registry.getApproved(agentId) == address(0), "moved");
        require(registry.isAuthorizedOrOwner(operator, agentId) && !registry.isAuthorizedOrOwner(agent, agentId), "auth");
    }

    function test_onlyTheOwnerOrAnApprovedAddressTransfers() public {
        vm.prank(other);
        vm.expectRevert(bytes("Registry: not the owner or approved"));
        registry.transferFrom(agent, other, agentId);
        vm.prank(agent);
        vm.expectRevert(bytes("Registry: transfer to the zero address"));
        registry.transferFrom(agent, address(0), agentId);
        vm.prank(agent);
        vm.expectRevert(bytes("Registry: from is not the owner"));
        registry.transferFrom(other, other, agentId);
        // an approval allows one transfer, and is cleared by it
        vm.prank(agent);
        registry.approve(other, agentId);
        vm.expectEmit(true, true, true, true);
        emit Transfer(agent, other, agentId);
        vm.prank(other);
        registry.transferFrom(agent, other, agentId);
        require(registry.getApproved(agentId) == address(0), "approval cleared");
        vm.prank(other);
        registry.transferFrom(other, agent, agentId);
        vm.prank(other);
        vm.expectRevert(bytes("Registry: not the owner or approved"));
        registry.transferFrom(agent, other, agentId);
    }

    // ------------------------------------------------------------------ safe transfers

    function test_aSafeTransferToAReceiverCallsItsHook() public {
        Receiver r = new Receiver();
        vm.prank(agent);
        registry.approve(other, agentId);
        vm.prank(other);
        registry.safeTransferFrom(agent, address(r), agentId, hex"c0ffee");
        require(registry.ownerOf(agentId) == address(r) && registry.balanceOf(address(r)) == 1, "received");
        require(r.operator() == other && r.from() == agent && r.tokenId() == agentId, "hook arguments");
        require(keccak256(r.data()) == keccak256(hex"c0ffee"), "hook data");
        vm.prank(address(r));
        registry.safeTransferFrom(address(r), agent, agentId); // to a key: no hook
        require(registry.ownerOf(agentId) == agent, "back");
        require(r.from() == agent, "the hook ran once");
    }

    function test_aWrongAnswerRefusesTheTransfer() public {
        address wrong = address(new WrongAnswer());
        vm.prank(agent);
        vm.expectRevert(bytes("Registry: receiver refused the token"));
        registry.safeTransferFrom(agent, wrong, agentId);
        require(registry.ownerOf(agentId) == agent, "still the agent's");
    }

    function test_aRefusingReceiverKeepsItsReasonAndAHooklessContractRefuses() public {
        address refuser = address(new Refuser());
        vm.prank(agent);
        vm.expectRevert(bytes("Refuser: no thanks"));
        registry.safeTransferFrom(agent, refuser, agentId, "");
        address hookless = address(new NoHook());
        vm.prank(agent);
        vm.expectRevert(bytes("Registry: receiver refused the token"));
        registry.safeTransferFrom(agent, hookless, agentId);
        vm.prank(agent); // the unsafe transfer does not ask
        registry.transferFrom(agent, hookless, agentId);
        require(registry.ownerOf(agentId) == hookless, "transferFrom does not call the hook");
    }

    function test_aContractRegistersOnlyWhenItTakesTokens() public {
        Receiver r = new Receiver();
        uint256 id = r.join(registry);
        require(registry.ownerOf(id) == address(r) && r.from() == address(0) && r.tokenId() == id, "minted");
        NoHook hookless = new NoHook();
        vm.expectRevert(bytes("Registry: receiver refused the token"));
        hookless.join(registry);
    }

    // ------------------------------------------------------------------ ERC-8004's registration and card

    function test_theThreeRegistrationShapesAndTheirEvents() public {
        vm.expectEmit(true, true, true, true);
        emit Transfer(address(0), other, agentId + 1);
        vm.expectEmit(true, true, true, true);
        emit Registered(agentId + 1, "ipfs://card", other);
        vm.expectEmit(true, true, true, true);
        emit MetadataSet(agentId + 1, "agentWallet", "agentWallet", abi.encodePacked(other));
        vm.expectEmit(true, true, true, true);
        emit MetadataSet(agentId + 1, "role", "role", bytes("reference"));
        AgentRegistry.MetadataEntry[] memory entries = new AgentRegistry.MetadataEntry[](1);
        entries[0] = AgentRegistry.MetadataEntry("role", bytes("reference"));
        vm.prank(other);
        uint256 id = registry.register("ipfs://card", entries);
        require(keccak256(registry.getMetadata(id, "role")) == keccak256("reference"), "metadata");
        require(registry.getAgentWallet(id) == other, "wallet");
        vm.prank(operator);
        uint256 bare = registry.register();
        require(bare == id + 1 && bytes(registry.tokenURI(bare)).length == 0, "no URI");
    }

    function test_aKeyRegistersOnce() public {
        vm.prank(agent);
        vm.expectRevert(bytes("Registry: already registered"));
        registry.register("again");
    }

    function test_theOwnerAndItsApprovedEditTheCard() public {
        vm.prank(other);
        vm.expectRevert(bytes("Registry: not the owner or approved"));
        registry.setAgentURI(agentId, "forged");
        vm.prank(other);
        vm.expectRevert(bytes("Registry: not the owner or approved"));
        registry.setMetadata(agentId, "role", bytes("reference"));
        vm.prank(agent);
        registry.setMetadata(agentId, "role", bytes("reference"));
        require(keccak256(registry.getMetadata(agentId, "role")) == keccak256("reference"), "metadata");
        vm.prank(agent);
        registry.approve(other, agentId);
        vm.prank(other);
        registry.setAgentURI(agentId, "edited");
        require(keccak256(bytes(registry.tokenURI(agentId))) == keccak256("edited"), "uri");
    }

    function test_theWalletKeyIsReservedAndClearedByATransfer() public {
        require(registry.getAgentWallet(agentId) == agent, "the registrant");
        vm.prank(agent);
        vm.expectRevert(bytes("Registry: reserved key"));
        registry.setMetadata(agentId, "agentWallet", abi.encodePacked(other));
        AgentRegistry.MetadataEntry[] memory entries = new AgentRegistry.MetadataEntry[](1);
        entries[0] = AgentRegistry.MetadataEntry("agentWallet", abi.encodePacked(other));
        vm.prank(other);
        vm.expectRevert(bytes("Registry: reserved key"));
        registry.register("x", entries);
        vm.prank(agent);
        registry.transferFrom(agent, other, agentId);
        require(registry.getAgentWallet(agentId) == address(0), "cleared");
    }
}
