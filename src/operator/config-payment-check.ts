/**
 * The payment part of config-check.ts: where the money goes (X402_PAY_TO), the network and token it
 * is taken in, and how it is settled, so that no payment goes to the wrong place or is not real.
 */
import { keccak_256 } from "@noble/hashes/sha3";
import { SETUP, type SettingsCheck } from "./config-problem";

/** The networks the service can take USDC on, with the token's contract and EIP-712 domain there. */
export const NETWORKS = {
  base: {
    chainId: 8453,
    asset: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
    assetName: "USD Coin",
    assetVersion: "2",
    testnet: false,
  },
  "base-sepolia": {
    chainId: 84532,
    asset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
    assetName: "USDC",
    assetVersion: "2",
    testnet: true,
  },
} as const;
export type NetworkName = keyof typeof NETWORKS;

/** Addresses nobody holds the key of: money paid to them is gone. */
const BURN_ADDRESSES = new Set([
  "0x0000000000000000000000000000000000000000",
  "0x000000000000000000000000000000000000dead",
  "0xdead000000000000000042069420694206942069",
]);
/** x402.org's public facilitator settles testnets only. */
const TESTNET_FACILITATOR = /^https:\/\/(www\.)?x402\.org\//;

/** EIP-55: a mixed-case address carries a checksum, and a typo in it breaks it. All-lower or all-upper carry none. */
function checksumHolds(address: string): boolean {
  const hex = address.slice(2);
  if (hex === hex.toLowerCase() || hex === hex.toUpperCase()) return true;
  const hash = keccak_256(new TextEncoder().encode(hex.toLowerCase()));
  for (let i = 0; i < 40; i++) {
    const nibble = (hash[i >> 1]! >> (i % 2 ? 0 : 4)) & 0xf;
    const expectUpper = nibble >= 8;
    if (/[a-f]/i.test(hex[i]!) && (hex[i] === hex[i]!.toUpperCase()) !== expectUpper) return false;
  }
  return true;
}

/** Where the money goes, and whether it is real. */
export function paymentProblems(check: SettingsCheck): void {
  const { settings, add, has, known, staging } = check;
  const payTo = known("X402_PAY_TO");
  if (!payTo) add("X402_PAY_TO", "is not set", `Set it to the address that receives payments: ${SETUP}.`);
  else if (!/^0x[0-9a-fA-F]{40}$/.test(payTo))
    add("X402_PAY_TO", "is not an EVM address (0x and 40 hex digits)", `Set it to your receiving address: ${SETUP}.`);
  else if (BURN_ADDRESSES.has(payTo.toLowerCase()))
    add(
      "X402_PAY_TO",
      "is the zero or a burn address: payments to it are lost",
      `Set it to an address you hold the key of: ${SETUP}.`,
    );
  else if (!checksumHolds(payTo))
    add(
      "X402_PAY_TO",
      "fails its EIP-55 checksum (a typo in the address?)",
      "Copy the address again from your wallet.",
    );

  const networkName = settings.X402_NETWORK ?? "";
  const network = Object.hasOwn(NETWORKS, networkName) ? NETWORKS[networkName as NetworkName] : null;
  if (!network) {
    add(
      "X402_NETWORK",
      `is ${JSON.stringify(networkName)}, not a network this service settles on (${Object.keys(NETWORKS).join(", ")})`,
      `Set it to base: ${SETUP}.`,
    );
  } else {
    if (network.testnet && !staging)
      add(
        "X402_NETWORK",
        `is ${networkName}, a testnet: its USDC is worth nothing`,
        "Set X402_NETWORK to base (with its chain id and asset), or deploy this as staging.",
      );
    if (String(network.chainId) !== settings.X402_CHAIN_ID)
      add(
        "X402_CHAIN_ID",
        `is ${JSON.stringify(settings.X402_CHAIN_ID ?? "")}, but ${networkName} is chain ${network.chainId}`,
        `Set X402_CHAIN_ID to ${network.chainId}.`,
      );
    if (network.asset.toLowerCase() !== (settings.X402_ASSET ?? "").toLowerCase())
      add("X402_ASSET", `is not ${networkName}'s USDC`, `Set X402_ASSET to ${network.asset}.`);
    if (network.assetName !== settings.X402_ASSET_NAME || network.assetVersion !== settings.X402_ASSET_VERSION) {
      add(
        "X402_ASSET_NAME / X402_ASSET_VERSION",
        `are not the EIP-712 domain of ${networkName}'s USDC: no payment signature would verify`,
        `Set them to "${network.assetName}" and "${network.assetVersion}".`,
      );
    }
  }

  const settlement = settings.X402_SETTLEMENT ?? "";
  if (settlement === "none")
    add(
      "X402_SETTLEMENT",
      "is none: payments are accepted without moving any money",
      "Set it to facilitator or direct.",
    );
  else if (settlement === "facilitator") {
    const url = known("FACILITATOR_URL");
    if (url !== null && !/^https:\/\//.test(url))
      add(
        "FACILITATOR_URL",
        "must be an https:// URL",
        "Set it to your x402 facilitator, e.g. https://facilitator.payai.network.",
      );
    else if (url && network && !network.testnet && TESTNET_FACILITATOR.test(url)) {
      add(
        "FACILITATOR_URL",
        "is x402.org's facilitator, which settles testnets only",
        "Point it at a facilitator that settles on base, or use X402_SETTLEMENT=direct.",
      );
    }
  } else if (settlement === "direct") {
    const rpc = known("RPC_URL");
    if (rpc !== null && !/^https:\/\//.test(rpc))
      add(
        "RPC_URL",
        "must be an https:// JSON-RPC endpoint (direct settlement submits through it)",
        "Set RPC_URL to your Base RPC endpoint.",
      );
    const relayer = known("RELAYER_PRIVATE_KEY");
    if (!has("RELAYER_PRIVATE_KEY"))
      add(
        "RELAYER_PRIVATE_KEY",
        "is not set (direct settlement signs with it)",
        "Upload it: npx wrangler secret put RELAYER_PRIVATE_KEY.",
      );
    else if (relayer !== null && !/^(0x)?[0-9a-fA-F]{64}$/.test(relayer))
      add(
        "RELAYER_PRIVATE_KEY",
        "is not a 32-byte hex private key",
        "Upload the relayer's key again: npx wrangler secret put RELAYER_PRIVATE_KEY.",
      );
  } else
    add(
      "X402_SETTLEMENT",
      `is ${JSON.stringify(settlement)}, not facilitator or direct`,
      "Set it to facilitator or direct.",
    );
}
