/**
 * Reads and verifies an x402 "exact" EVM payment (an EIP-3009
 * TransferWithAuthorization signed with EIP-712), v1 (`X-PAYMENT`) or v2
 * (`PAYMENT-SIGNATURE`). Every check names its reason, so a refused payer
 * knows what to fix.
 */
import { getAddress, isAddressEqual, verifyTypedData, type Hex } from "viem";
import { z } from "zod";
import { AppError } from "../../http/errors";
import { decodeHeader, type PaymentTerms } from "./terms";

// For http/caller-scope.ts, which imports this module only when a request carries a payment (viem stays unloaded until
// then).
export { getAddress, verifyTypedData };

/** Clock slack: the authorization must still be valid this long after we accept it. */
const VALID_BEFORE_MARGIN_SECONDS = 6;

const hex = (bytes?: number) =>
  z.string().regex(bytes ? new RegExp(`^0x[0-9a-fA-F]{${bytes * 2}}$`) : /^0x[0-9a-fA-F]*$/);
const uintString = z.string().regex(/^\d{1,78}$/);

const exactPayload = z.object({
  signature: hex(),
  authorization: z.object({
    from: hex(20),
    to: hex(20),
    value: uintString,
    validAfter: uintString,
    validBefore: uintString,
    nonce: hex(32),
  }),
});

const paymentHeader = z.discriminatedUnion("x402Version", [
  z.object({ x402Version: z.literal(1), scheme: z.string(), network: z.string(), payload: exactPayload }),
  z.object({
    x402Version: z.literal(2),
    accepted: z.object({
      scheme: z.string(),
      network: z.string(),
      amount: z.string(),
      asset: z.string(),
      payTo: z.string(),
    }),
    payload: exactPayload,
  }),
]);

export const TRANSFER_WITH_AUTHORIZATION_TYPES = {
  TransferWithAuthorization: [
    { name: "from", type: "address" },
    { name: "to", type: "address" },
    { name: "value", type: "uint256" },
    { name: "validAfter", type: "uint256" },
    { name: "validBefore", type: "uint256" },
    { name: "nonce", type: "bytes32" },
  ],
} as const;

export interface VerifiedPayment {
  version: 1 | 2;
  payer: `0x${string}`;
  nonce: Hex;
  value: bigint;
  validAfter: bigint;
  validBefore: bigint;
  signature: Hex;
  /** The decoded header, forwarded as-is to a facilitator. */
  raw: unknown;
}

const invalid = (reason: string) => new AppError("payment_invalid", reason);

function decode(header: string): unknown {
  try {
    return decodeHeader(header);
  } catch {
    throw invalid("The payment header is not base64-encoded JSON.");
  }
}

export async function verifyPayment(header: string, terms: PaymentTerms, nowSeconds: number): Promise<VerifiedPayment> {
  const raw = decode(header);
  const parsed = paymentHeader.safeParse(raw);
  if (!parsed.success)
    throw invalid(
      `The payment payload is malformed: ${parsed.error.issues[0]?.path.join(".")} ${parsed.error.issues[0]?.message}`,
    );
  const p = parsed.data;
  const { chain } = terms;

  const scheme = p.x402Version === 1 ? p.scheme : p.accepted.scheme;
  if (scheme !== "exact") throw invalid(`Unsupported scheme "${scheme}"; this server accepts "exact".`);
  const network = p.x402Version === 1 ? p.network : p.accepted.network;
  const expectedNetwork = p.x402Version === 1 ? chain.network : chain.caip2;
  if (network !== expectedNetwork)
    throw invalid(`Wrong network "${network}"; this server accepts "${expectedNetwork}".`);
  if (p.x402Version === 2 && !sameAddress(p.accepted.asset, chain.asset))
    throw invalid(`Wrong asset; this server accepts ${chain.asset}.`);

  const auth = p.payload.authorization;
  if (!sameAddress(auth.to, chain.payTo)) throw invalid(`The authorization pays ${auth.to}, not ${chain.payTo}.`);
  const value = BigInt(auth.value);
  if (value !== BigInt(terms.priceMicro)) {
    throw invalid(`The authorization is for ${auth.value} atomic units; this call costs exactly ${terms.priceMicro}.`);
  }
  const validAfter = BigInt(auth.validAfter);
  const validBefore = BigInt(auth.validBefore);
  const now = BigInt(nowSeconds);
  if (validAfter > now) throw invalid("The authorization is not valid yet (validAfter is in the future).");
  if (validBefore - BigInt(VALID_BEFORE_MARGIN_SECONDS) <= now)
    throw invalid("The authorization has expired (validBefore has passed).");

  const message = {
    from: getAddress(auth.from),
    to: getAddress(auth.to),
    value,
    validAfter,
    validBefore,
    nonce: auth.nonce as Hex,
  };
  const valid = await verifyTypedData({
    address: message.from,
    domain: {
      name: chain.assetName,
      version: chain.assetVersion,
      chainId: chain.chainId,
      verifyingContract: chain.asset,
    },
    types: TRANSFER_WITH_AUTHORIZATION_TYPES,
    primaryType: "TransferWithAuthorization",
    message,
    signature: p.payload.signature as Hex,
  }).catch(() => false);
  if (!valid) throw invalid("The signature does not match the authorization (EIP-712 TransferWithAuthorization).");

  return {
    version: p.x402Version,
    payer: message.from,
    nonce: message.nonce,
    value,
    validAfter,
    validBefore,
    signature: p.payload.signature as Hex,
    raw,
  };
}

function sameAddress(a: string, b: string): boolean {
  try {
    return isAddressEqual(a as Hex, b as Hex);
  } catch {
    return false;
  }
}
