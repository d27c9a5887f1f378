/**
 * Whose Idempotency-Key a request uses (docs/api.md#requests-and-conventions), so two callers never see each other's
 * keys or responses. The scope's secret is keying material for the stored record
 * (idempotency-store.ts) and is never stored itself:
 * - any credential presented (Authorization, X-CREDIT-TOKEN): those exact strings, except that a
 *   verified access token stands for its credit token's id, so a retry after a token refresh replays;
 * - x402 alone: the payer address, proven by a fresh payment: signed by the payer (EIP-712), to
 *   this service's payTo, valid for at most the offered window, its nonce never used here (an
 *   old signature, public once settled, proves nothing). A client that retries usually signs a
 *   new payment (new nonce), so the payment header itself would not do; the replay then leaves
 *   the new payment unused;
 * - nothing (the anonymous free tier): the client address.
 */
import type { Hex } from "viem";
import { z } from "zod";
import type { Context } from "hono";
import type { AppEnv } from "../env";
import { clientIp } from "./client-ip";
import { chainConfig, decodeHeader } from "../money/x402/terms";
import { looksLikeJwt, verifyAccessToken } from "../auth/access-tokens";
import { serviceUrls } from "./urls";

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
    authorization: z.object({
      from: hex(20),
      to: hex(20),
      value: uint,
      validAfter: uint,
      validBefore: uint,
      nonce: hex(32),
    }),
  }),
});

function decodeOrNull(header: string): unknown {
  try {
    return decodeHeader(header);
  } catch {
    return null;
  }
}

/** Slack on top of the offered window: clocks differ. */
const WINDOW_SLACK_SECONDS = 60;

/**
 * The payer of a still-valid, correctly signed authorization for this service's asset, or null.
 * An expired one proves nothing current, so it cannot open anyone's records.
 */
async function x402Payer(c: Context<AppEnv>, header: string): Promise<string | null> {
  const parsed = signedAuthorization.safeParse(decodeOrNull(header));
  if (!parsed.success) return null;
  const { signature, authorization: a } = parsed.data.payload;
  const now = BigInt(Math.floor(Date.now() / 1000));
  const chain = chainConfig(c.env);
  if (
    BigInt(a.validBefore) <= now ||
    BigInt(a.validBefore) > now + BigInt(chain.maxTimeoutSeconds + WINDOW_SLACK_SECONDS)
  )
    return null;
  // Loaded here, not at start-up: viem is needed only by x402 payers.
  const { getAddress, verifyTypedData, TRANSFER_WITH_AUTHORIZATION_TYPES } = await import("../money/x402/verify");
  try {
    if (getAddress(a.to) !== getAddress(chain.payTo)) return null;
    const from = getAddress(a.from);
    const valid = await verifyTypedData({
      address: from,
      domain: {
        name: chain.assetName,
        version: chain.assetVersion,
        chainId: chain.chainId,
        verifyingContract: chain.asset,
      },
      types: TRANSFER_WITH_AUTHORIZATION_TYPES,
      primaryType: "TransferWithAuthorization",
      message: {
        from,
        to: getAddress(a.to),
        value: BigInt(a.value),
        validAfter: BigInt(a.validAfter),
        validBefore: BigInt(a.validBefore),
        nonce: a.nonce as Hex,
      },
      signature: signature as Hex,
    });
    if (!valid) return null;
    const used = await c.env.DB.prepare("SELECT 1 FROM payments WHERE payer = ? AND nonce = ?")
      .bind(from.toLowerCase(), a.nonce.toLowerCase())
      .first();
    return used ? null : from.toLowerCase();
  } catch {
    // A malformed address or signature proves nothing.
    return null;
  }
}

/** A verified access token's subject (the credit token id it stands for); null for anything else. */
async function accessTokenSubject(c: Context<AppEnv>): Promise<string | null> {
  const token = /^Bearer\s+(\S+)$/i.exec(c.req.header("Authorization")?.trim() ?? "")?.[1];
  if (!token || !looksLikeJwt(token)) return null;
  try {
    return `access-token-of:${await verifyAccessToken(c.env, serviceUrls(c), token)}`;
  } catch {
    return null; // refused when the call runs
  }
}

export async function callerScope(c: Context<AppEnv>): Promise<CallerScope> {
  const authorization = (await accessTokenSubject(c)) ?? c.req.header("Authorization")?.trim();
  const credit = c.req.header("X-CREDIT-TOKEN")?.trim();
  if (authorization || credit)
    return { kind: "credential", secret: `credential\n${authorization ?? ""}\n${credit ?? ""}` };
  const payment = c.req.header("PAYMENT-SIGNATURE") ?? c.req.header("X-PAYMENT");
  if (payment) {
    const payer = await x402Payer(c, payment);
    // An unprovable payment is refused when the call runs; until then it is its own scope.
    return payer
      ? { kind: "x402", secret: `x402\n${payer}` }
      : { kind: "credential", secret: `payment\n${payment.trim()}` };
  }
  return { kind: "anonymous", secret: `anonymous\n${clientIp(c)}` };
}
