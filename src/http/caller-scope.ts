/**
 * Whose Idempotency-Key a request uses (API.md §3), so two callers never see each other's
 * keys or responses. The scope's secret is keying material for the stored record
 * (idempotency-store.ts) and is never stored itself:
 * - any credential presented (Authorization, X-CREDIT-TOKEN): those exact strings;
 * - x402 alone: the payer address, proven by the payment's EIP-712 signature. A client that
 *   retries usually signs a new payment (new nonce), so the payment header itself would
 *   not do; the replay then leaves the new payment unused;
 * - nothing (the anonymous free tier): the client address.
 */
import { getAddress, verifyTypedData, type Hex } from "viem";
import { z } from "zod";
import type { Context } from "hono";
import type { AppEnv } from "../env";
import { clientIp } from "./client-ip";
import { chainConfig } from "../money/x402/terms";

export interface CallerScope {
  kind: "credential" | "x402" | "anonymous";
  secret: string;
}

const hex = (bytes: number) => z.string().regex(new RegExp(`^0x[0-9a-fA-F]{${bytes * 2}}$`));
const uint = z.string().regex(/^\d{1,78}$/);

/** Only what proves the payer; money/x402/verify.ts checks the payment itself when the call runs. */
const signedAuthorization = z.object({
  payload: z.object({
    signature: z.string().regex(/^0x[0-9a-fA-F]+$/),
    authorization: z.object({ from: hex(20), to: hex(20), value: uint, validAfter: uint, validBefore: uint, nonce: hex(32) }),
  }),
});

/** EIP-3009 TransferWithAuthorization, as in money/x402/verify.ts. */
const TYPES = {
  TransferWithAuthorization: [
    { name: "from", type: "address" }, { name: "to", type: "address" }, { name: "value", type: "uint256" },
    { name: "validAfter", type: "uint256" }, { name: "validBefore", type: "uint256" }, { name: "nonce", type: "bytes32" },
  ],
} as const;

function decodeHeader(header: string): unknown {
  try {
    const binary = atob(header.trim());
    return JSON.parse(new TextDecoder().decode(Uint8Array.from(binary, (ch) => ch.charCodeAt(0))));
  } catch {
    return null;
  }
}

/**
 * The payer of a still-valid, correctly signed authorization for this service's asset, or null.
 * An expired one proves nothing current, so it cannot open anyone's records.
 */
async function x402Payer(c: Context<AppEnv>, header: string): Promise<string | null> {
  const parsed = signedAuthorization.safeParse(decodeHeader(header));
  if (!parsed.success) return null;
  const { signature, authorization: a } = parsed.data.payload;
  if (BigInt(a.validBefore) <= BigInt(Math.floor(Date.now() / 1000))) return null;
  const chain = chainConfig(c.env);
  try {
    const from = getAddress(a.from);
    const valid = await verifyTypedData({
      address: from,
      domain: { name: chain.assetName, version: chain.assetVersion, chainId: chain.chainId, verifyingContract: chain.asset },
      types: TYPES,
      primaryType: "TransferWithAuthorization",
      message: { from, to: getAddress(a.to), value: BigInt(a.value), validAfter: BigInt(a.validAfter), validBefore: BigInt(a.validBefore), nonce: a.nonce as Hex },
      signature: signature as Hex,
    });
    return valid ? from.toLowerCase() : null;
  } catch {
    // A malformed address or signature proves nothing.
    return null;
  }
}

export async function callerScope(c: Context<AppEnv>): Promise<CallerScope> {
  const authorization = c.req.header("Authorization")?.trim();
  const credit = c.req.header("X-CREDIT-TOKEN")?.trim();
  if (authorization || credit) return { kind: "credential", secret: `credential\n${authorization ?? ""}\n${credit ?? ""}` };
  const payment = c.req.header("PAYMENT-SIGNATURE") ?? c.req.header("X-PAYMENT");
  if (payment) {
    const payer = await x402Payer(c, payment);
    // An unprovable payment is refused when the call runs; until then it is its own scope.
    return payer ? { kind: "x402", secret: `x402\n${payer}` } : { kind: "credential", secret: `payment\n${payment.trim()}` };
  }
  return { kind: "anonymous", secret: `anonymous\n${clientIp(c)}` };
}
