// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// @title EIP3009Token
/// @notice Test-only stand-in for USDC (FiatToken v2.2) on a local chain.
/// It implements just the surface a payment facilitator touches: ERC-20
/// balances/transfers plus EIP-3009 `transferWithAuthorization` in both the
/// (v, r, s) and the `bytes signature` forms. Revert strings mirror USDC's so
/// code that matches on them behaves the same against this token and the
/// real one on Base Sepolia.
contract EIP3009Token {
    // keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)")
    bytes32 private constant EIP712_DOMAIN_TYPEHASH =
        0x8b73c3c69bb8fe3d512ecc4cf759cc79239f7b179b0ffacaa9a75d522b39400f;

    // keccak256("TransferWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)")
    bytes32 public constant TRANSFER_WITH_AUTHORIZATION_TYPEHASH =
        0x7c7c6cdb67a18743f49ec6fa9b35f50d52ed05cbed4cc592e13b44501c1a2267;

    // Upper bound for `s` (secp256k1n / 2): accepting the mirrored high-s
    // value would let anyone forge a second valid signature for the same
    // authorization, so it is rejected like USDC does.
    uint256 private constant MAX_S =
        0x7FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF5D576E7357A4501DDFE92F46681B20A0;

    // ERC-1271 magic value: bytes4(keccak256("isValidSignature(bytes32,bytes)")).
    bytes4 private constant ERC1271_MAGIC_VALUE = 0x1626ba7e;

    string public name;
    string public symbol;
    uint8 public constant decimals = 6;
    uint256 public totalSupply;

    mapping(address => uint256) public balanceOf;
    mapping(address => mapping(address => uint256)) public allowance;

    /// @dev authorizer => nonce => used. Nonces are random 32-byte values
    /// (not sequential) so that a payer can have many authorizations in
    /// flight at once, which is the point of EIP-3009.
    mapping(address => mapping(bytes32 => bool)) private _authorizationUsed;

    address public immutable minter;

    // Hashed once: the domain separator is recomputed per call (see
    // DOMAIN_SEPARATOR) but its string parts never change.
    bytes32 private immutable _hashedName;
    bytes32 private immutable _hashedVersion;

    event Transfer(address indexed from, address indexed to, uint256 value);
    event Approval(address indexed owner, address indexed spender, uint256 value);
    event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce);

    constructor(string memory name_, string memory version_, string memory symbol_) {
        name = name_;
        symbol = symbol_;
        minter = msg.sender;
        _hashedName = keccak256(bytes(name_));
        _hashedVersion = keccak256(bytes(version_));
    }

    /// @notice EIP-712 domain separator, bound to the current chain id so a
    /// signature made for this deployment is never valid on another chain.
    function DOMAIN_SEPARATOR() public view returns (bytes32) {
        return keccak256(
            abi.encode(EIP712_DOMAIN_TYPEHASH, _hashedName, _hashedVersion, block.chainid, address(this))
        );
    }

    function mint(address to, uint256 value) external {
        require(msg.sender == minter, "FiatToken: caller is not a minter");
        require(to != address(0), "FiatToken: mint to the zero address");
        totalSupply += value;
        balanceOf[to] += value;
        emit Transfer(address(0), to, value);
    }

    function transfer(address to, uint256 value) external returns (bool) {
        _transfer(msg.sender, to, value);
        return true;
    }

    function approve(address spender, uint256 value) external returns (bool) {
        allowance[msg.sender][spender] = value;
        emit Approval(msg.sender, spender, value);
        return true;
    }

    function transferFrom(address from, address to, uint256 value) external returns (bool) {
        uint256 allowed = allowance[from][msg.sender];
        require(value <= allowed, "ERC20: transfer amount exceeds allowance");
        allowance[from][msg.sender] = allowed - value;
        _transfer(from, to, value);
        return true;
    }

    function authorizationState(address authorizer, bytes32 nonce) external view returns (bool) {
        return _authorizationUsed[authorizer][nonce];
    }

    /// @notice EIP-3009 transfer signed by an EOA as (v, r, s).
    function transferWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        uint8 v,
        bytes32 r,
        bytes32 s
    ) external {
        _checkWindowAndNonce(from, nonce, validAfter, validBefore);
        bytes32 digest = _authorizationDigest(from, to, value, validAfter, validBefore, nonce);
        require(_signedBy(from, digest, v, r, s), "FiatTokenV2: invalid signature");
        _useAuthorization(from, nonce);
        _transfer(from, to, value);
    }

    /// @notice EIP-3009 transfer with a packed signature, as in USDC v2.2.
    /// A 65-byte signature is tried as an EOA signature first; if `from` is a
    /// contract, ERC-1271 is consulted as well so smart wallets can pay.
    function transferWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        bytes memory signature
    ) external {
        _checkWindowAndNonce(from, nonce, validAfter, validBefore);
        bytes32 digest = _authorizationDigest(from, to, value, validAfter, validBefore, nonce);
        require(_isValidSignature(from, digest, signature), "FiatTokenV2: invalid signature");
        _useAuthorization(from, nonce);
        _transfer(from, to, value);
    }

    function _checkWindowAndNonce(address from, bytes32 nonce, uint256 validAfter, uint256 validBefore)
        private
        view
    {
        // Strict inequalities on both ends, matching USDC: an authorization
        // is unusable in the exact second named by validAfter or validBefore.
        require(block.timestamp > validAfter, "FiatTokenV2: authorization is not yet valid");
        require(block.timestamp < validBefore, "FiatTokenV2: authorization is expired");
        require(!_authorizationUsed[from][nonce], "FiatTokenV2: authorization is used or canceled");
    }

    function _useAuthorization(address from, bytes32 nonce) private {
        _authorizationUsed[from][nonce] = true;
        emit AuthorizationUsed(from, nonce);
    }

    function _authorizationDigest(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce
    ) private view returns (bytes32) {
        bytes32 structHash = keccak256(
            abi.encode(TRANSFER_WITH_AUTHORIZATION_TYPEHASH, from, to, value, validAfter, validBefore, nonce)
        );
        return keccak256(abi.encodePacked("\x19\x01", DOMAIN_SEPARATOR(), structHash));
    }

    function _isValidSignature(address signer, bytes32 digest, bytes memory signature) private view returns (bool) {
        if (signature.length == 65) {
            bytes32 r;
            bytes32 s;
            uint8 v;
            // Split r || s || v; memory layout is [length][r][s][v...].
            assembly {
                r := mload(add(signature, 0x20))
                s := mload(add(signature, 0x40))
                v := byte(0, mload(add(signature, 0x60)))
            }
            if (_signedBy(signer, digest, v, r, s)) {
                return true;
            }
        }
        if (signer.code.length == 0) {
            return false;
        }
        (bool ok, bytes memory result) =
            signer.staticcall(abi.encodeWithSelector(ERC1271_MAGIC_VALUE, digest, signature));
        return ok && result.length >= 32 && abi.decode(result, (bytes32)) == bytes32(ERC1271_MAGIC_VALUE);
    }

    /// @dev True only for a well-formed ECDSA signature by `signer`. The
    /// zero-address check matters: ecrecover returns address(0) for garbage
    /// input, which would otherwise "authorize" transfers from address(0).
    function _signedBy(address signer, bytes32 digest, uint8 v, bytes32 r, bytes32 s) private pure returns (bool) {
        if (uint256(s) > MAX_S || (v != 27 && v != 28)) {
            return false;
        }
        address recovered = ecrecover(digest, v, r, s);
        return recovered != address(0) && recovered == signer;
    }

    function _transfer(address from, address to, uint256 value) private {
        require(to != address(0), "ERC20: transfer to the zero address");
        uint256 fromBalance = balanceOf[from];
        require(value <= fromBalance, "ERC20: transfer amount exceeds balance");
        unchecked {
            // Cannot underflow (checked above) nor overflow (sum of balances
            // is bounded by totalSupply, which mint checks).
            balanceOf[from] = fromBalance - value;
            balanceOf[to] += value;
        }
        emit Transfer(from, to, value);
    }
}
